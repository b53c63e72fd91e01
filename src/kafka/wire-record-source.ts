/**
 * The mirror's consumer group on the source, on the project's own wire layer: one group member
 * (`wire/group/`: KIP-848's consumer protocol, or the classic one with cooperative rebalancing and
 * static membership) and one `BrokerFetcher` (a fetch loop per broker, fetch sessions, raw batches).
 */
import type { Admin } from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import type { ConsumerSettings } from '../config/mirror-config.js'
import type { CommitOffset, FetchControl, RecordSource, SourceListener } from '../ports/ports.js'
import type { TranscoderLoad } from '../ports/transcoder-load.js'
import { settleWithin } from '../shared/deadline.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { partitionKey } from '../shared/partition-key.js'
import { retry } from '../shared/retry.js'
import { BatchHandover, type FetchedItem, type MirrorProducerFilter } from './batch-handover.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'
import { forwardingHook, type ForwardingPolicy } from './forwarded-record-batch.js'
import type { StartOffset } from './start-offset.js'
import { BrokerFetcher, type FetchedPartition, type FetchEvent } from './wire/broker-fetcher.js'
import { createGroupMember } from './wire/group/group-member-factory.js'
import type { GroupMember } from './wire/group/group-member.js'
import type { TopicPartition } from './wire/group/topic-partition.js'
import { wireClusterOptions } from './wire/wire-connection-options.js'

/** Tries at positioning newly assigned partitions (OffsetFetch, a start offset's commit, ListOffsets) before the flow stops. */
const ASSIGN_ATTEMPTS = 8

/** A partition this process owns: the number that makes its batches in hand stale when it moves on (revoked, lost, seeked). */
interface Owned {
  readonly topic: string
  readonly partition: number
  epoch: number
}

/**
 * A `RecordSource` on the wire layer. A partition is fetched from its committed offset (else the flow's
 * start offset, committed first, else `auto.offset.reset`); each answer is handed over partition by
 * partition, concurrently, through `BatchHandover`, and the broker's loop fetches again once all of them
 * settled (backpressure).
 *
 * Invariant W1 (drain before release): a partition the group moves away is first stopped (no batch of it is
 * handed over any more) and what the target acknowledged is committed (`onRebalancing`) while this member's
 * generation or epoch still stands; only then does the member tell the group it is free (KIP-429, KIP-848).
 * A graceful scale event therefore writes no duplicate even at-least-once.
 * Invariant W2 (nothing handed over for a partition not owned): a batch's `FetchControl.isActive` turns false
 * once its partition was revoked, lost or seeked, or the source stopped.
 * Invariant W3 (never copied past a truncation): a diverging epoch (KIP-320) or a partition error stops the
 * flow with the partition named; an offset out of range is reset as `auto.offset.reset` says, as Java's
 * consumer does, and logged.
 */
export class WireRecordSource implements RecordSource {
  readonly #connection: ClusterConnection
  readonly #settings: ConsumerSettings
  readonly #logger: Logger
  readonly #forwarding: ForwardingPolicy
  readonly #handover: BatchHandover
  readonly #startOffset: StartOffset | undefined
  readonly #owned = new Map<string, Owned>()
  #ownedKeys: ReadonlySet<string> | undefined
  #fetcher: BrokerFetcher | undefined
  #member: GroupMember | undefined
  #admin: Promise<Admin> | undefined
  #handlers: SourceListener | undefined
  /** Checks each fetched batch (CRC) and decides whether it is forwarded; made at the first answer, for the source's one listener. */
  #hook: ReturnType<typeof forwardingHook> | undefined
  #connected = false
  #paused = false
  #stopping = false
  /** Aborts the waits of retries when the source stops. */
  readonly #stopSignal = new AbortController()
  #stopped: Promise<void> | undefined

  constructor (
    connection: ClusterConnection,
    settings: ConsumerSettings,
    logger: Logger,
    forwarding: ForwardingPolicy,
    producers?: MirrorProducerFilter,
    startOffset?: StartOffset
  ) {
    this.#connection = connection
    this.#settings = settings
    this.#logger = logger
    this.#forwarding = forwarding
    this.#handover = new BatchHandover(settings.maxPollRecords, forwarding, producers)
    this.#startOffset = startOffset
  }

  get connected (): boolean {
    return this.#connected
  }

  get transcoding (): TranscoderLoad | undefined {
    return this.#handover.load
  }

  owned (): ReadonlySet<string> {
    this.#ownedKeys ??= new Set(this.#owned.keys())
    return this.#ownedKeys
  }

  async start (topics: readonly string[], handlers: SourceListener): Promise<void> {
    if (this.#handlers !== undefined) throw new MirrorError(ErrorCodes.INTERNAL, 'wire record source started twice')
    this.#handlers = handlers
    this.#handover.start()
    if (topics.length === 0) {
      // Nothing to subscribe to: nothing to connect, and nothing missing.
      this.#connected = true
      return
    }
    const settings = this.#settings
    const cluster = wireClusterOptions(this.#connection, this.#logger)
    const { requestTimeoutMs: _requestTimeoutMs, ...memberConnection } = cluster.connection
    this.#fetcher = new BrokerFetcher({
      ...cluster,
      // kafkajs' consumer, the other source, reads committed data only: so does this one.
      isolationLevel: 'read_committed',
      maxWaitMs: settings.fetchMaxWaitMs,
      minBytes: settings.fetchMinBytes,
      maxBytes: settings.fetchMaxBytes,
      partitionMaxBytes: settings.maxPartitionFetchBytes,
      fetchSessions: settings.fetchSessions,
      ...(settings.clientRack === undefined ? {} : { rack: settings.clientRack }),
    }, {
      fetched: async response => {
        handlers.onFetched?.()
        await Promise.all(response.partitions.map(async partition => await this.#handPartition(partition, handlers)))
      },
      event: event => { void this.#fetchEvent(event, handlers) },
      failed: error => handlers.onCrash(toMirrorError(error, `fetching from the ${this.#connection.alias} cluster failed`)),
    })
    const classic = settings.groupProtocol === 'classic'
    const member = createGroupMember({
      bootstrap: cluster.bootstrap,
      connection: memberConnection,
      groupId: settings.groupId,
      topics,
      groupProtocol: settings.groupProtocol,
      groupInstanceId: settings.groupInstanceId ?? null,
      ...(classic ? { sessionTimeoutMs: settings.sessionTimeoutMs, heartbeatIntervalMs: settings.heartbeatIntervalMs } : {}),
      onError: error => this.#memberError(error, handlers),
    }, {
      assigned: async partitions => await this.#assigned(partitions, handlers),
      revoking: async partitions => await this.#revoking(partitions, handlers),
      lost: async partitions => { this.#release(partitions, handlers) },
    })
    this.#member = member
    try {
      await this.#fetcher.start()
      await member.start()
      this.#connected = true
    } catch (error) {
      throw toMirrorError(
        error,
        `cannot join group "${settings.groupId}" on the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
  }

  /** The member's report: a fatal one (it ended) stops the flow; a retried one is logged. */
  #memberError (error: unknown, handlers: SourceListener): void {
    if (this.#stopping) return
    if (this.#member?.failure !== undefined) {
      handlers.onCrash(toMirrorError(error, `the source group member of group "${this.#settings.groupId}" stopped`, ErrorCodes.KAFKA, this.#connection))
      return
    }
    this.#logger.warn('source group member: a request failed and is tried again', { error })
  }

  /**
   * New partitions: each fetched from its committed offset, else the start offset (committed first), else
   * `auto.offset.reset`. The member keeps a partition whose `assigned` rejected (it only reports the rejection),
   * so positioning is retried here, and when it cannot be done the flow stops rather than own partitions it
   * never fetches.
   */
  async #assigned (partitions: readonly TopicPartition[], handlers: SourceListener): Promise<void> {
    const member = this.#member
    if (member === undefined) return
    try {
      const policy = {
        maxAttempts: ASSIGN_ATTEMPTS,
        signal: this.#stopSignal.signal,
        shouldRetry: () => !this.#stopping,
        onRetry: (error: unknown, attempt: number) => this.#logger.warn('positioning assigned partitions failed; trying again', { error, attempt }),
      }
      const positions = await retry(async () => await this.#positions(member, partitions), policy)
      for (const { topic, partition, offset } of positions) {
        this.#owned.set(partitionKey(topic, partition), { topic, partition, epoch: 0 })
        if (!this.#paused) this.#fetcher?.assign(topic, partition, offset)
      }
    } catch (error) {
      if (this.#stopping) return
      const context = `the ${partitions.length} partitions assigned to this member of group "${this.#settings.groupId}" cannot be positioned`
      handlers.onCrash(toMirrorError(error, context, ErrorCodes.KAFKA, this.#connection))
      return
    }
    this.#ownedKeys = undefined
    handlers.onAssignment(this.owned())
  }

  /** Where each of `partitions` starts: committed, else the start offset (committed here), else `auto.offset.reset`. */
  async #positions (member: GroupMember, partitions: readonly TopicPartition[]): Promise<Array<TopicPartition & { offset: bigint }>> {
    const committed = await member.committed(partitions)
    const positions: Array<TopicPartition & { offset: bigint }> = []
    const toCommit: Array<TopicPartition & { offset: bigint }> = []
    const toReset: TopicPartition[] = []
    for (const tp of partitions) {
      const offset = committed.get(`${tp.topic}:${tp.partition}`) ?? -1n
      if (offset >= 0n) {
        positions.push({ ...tp, offset })
        continue
      }
      const start = this.#startOffset?.(tp.topic, tp.partition)
      if (start === undefined) toReset.push(tp)
      else toCommit.push({ ...tp, offset: start })
    }
    // The flow's start offset (MirrorMaker 2's position) is committed in this generation before anything is fetched.
    if (toCommit.length > 0) await member.commit(toCommit)
    positions.push(...toCommit, ...await this.#resetPositions(toReset))
    return positions
  }

  /** W1: stop fetching `partitions`, let what was handed over be acknowledged and committed, then release them. */
  async #revoking (partitions: readonly TopicPartition[], handlers: SourceListener): Promise<void> {
    for (const { topic, partition } of partitions) {
      const owned = this.#owned.get(partitionKey(topic, partition))
      if (owned !== undefined) owned.epoch++
      this.#fetcher?.unassign(topic, partition)
    }
    // Stopping: the flow drained and committed before it stopped the source.
    if (!this.#stopping) {
      const boundMs = Math.floor(this.#settings.sessionTimeoutMs / 2)
      if (!(await settleWithin(handlers.onRebalancing(), boundMs))) {
        this.#logger.warn('giving partitions up before what was acknowledged is committed; their next owners may copy records again', {
          boundMs,
          partitions: partitions.length,
        })
      }
    }
    this.#release(partitions, handlers)
  }

  /** `partitions` are no longer owned: their batches in hand turn stale (W2), and the flow forgets them. */
  #release (partitions: readonly TopicPartition[], handlers: SourceListener): void {
    for (const { topic, partition } of partitions) {
      const key = partitionKey(topic, partition)
      const owned = this.#owned.get(key)
      if (owned !== undefined) owned.epoch++
      this.#owned.delete(key)
      this.#fetcher?.unassign(topic, partition)
    }
    this.#ownedKeys = undefined
    if (!this.#stopping) handlers.onAssignment(this.owned())
  }

  /** Where partitions without a committed or start offset begin (`auto.offset.reset`), from the leaders' ListOffsets. */
  async #resetPositions (partitions: readonly TopicPartition[]): Promise<Array<TopicPartition & { offset: bigint }>> {
    if (partitions.length === 0) return []
    const admin = await this.#adminClient()
    const positions: Array<TopicPartition & { offset: bigint }> = []
    for (const topic of new Set(partitions.map(p => p.topic))) {
      const offsets = new Map((await admin.fetchTopicOffsets(topic)).map(o => [o.partition, o]))
      for (const tp of partitions) {
        if (tp.topic !== topic) continue
        const found = offsets.get(tp.partition)
        if (found === undefined) {
          const message = `topic "${topic}" partition ${tp.partition}: the ${this.#connection.alias} cluster lists no offsets for it`
          throw new MirrorError(ErrorCodes.KAFKA, message, { retriable: true })
        }
        positions.push({ ...tp, offset: BigInt(this.#settings.autoOffsetReset === 'latest' ? found.high : found.low) })
      }
    }
    return positions
  }

  /** kafkajs' admin client, for ListOffsets on the slow path (partitions without a committed offset, offsets out of range). */
  #adminClient (): Promise<Admin> {
    this.#admin ??= (async () => {
      const admin = createKafkaClient({ ...this.#connection, clientId: this.#connection.clientId }, this.#logger).admin()
      await admin.connect()
      return admin
    })()
    const pending = this.#admin
    // A failed connect is not kept: the next reset connects again.
    pending.catch(() => { if (this.#admin === pending) this.#admin = undefined })
    return pending
  }

  async #handPartition (fetched: FetchedPartition, handlers: SourceListener): Promise<void> {
    const key = partitionKey(fetched.topic, fetched.partition)
    const owned = this.#owned.get(key)
    if (owned === undefined) return
    const epoch = owned.epoch
    const control: FetchControl = {
      // The member heartbeats on its own timer: nothing to do while a batch waits.
      heartbeat: async () => await Promise.resolve(),
      isActive: () => !this.#stopping && this.#owned.get(key) === owned && owned.epoch === epoch,
    }
    const hook = this.#hook ??= forwardingHook(this.#forwarding, (reason, bytes) => {
      // A batch declined for its codec alone is counted when its turn comes: transcoded, or decoded when that fails.
      if (reason !== 'codec' || !this.#handover.transcodes) handlers.onDecoded?.(reason, bytes)
    })
    const items: FetchedItem[] = []
    for (const raw of fetched.batches) {
      const item = hook(raw.bytes)
      if (item === undefined) {
        handlers.onCrash(new MirrorError(
          ErrorCodes.KAFKA,
          `topic "${fetched.topic}" partition ${fetched.partition}: the batch at offset ${raw.baseOffset} is in the message format before v2 (magic 0 or 1), ` +
            'which the wire source does not read; unset MIRROR_SOURCE_CONSUMER (kafkajs reads it) for this source'
        ))
        return
      }
      items.push(item)
    }
    const run = {
      topic: fetched.topic,
      partition: fetched.partition,
      highWatermark: fetched.highWatermark,
      items,
      fetchedOffset: fetched.fetchOffset,
      nextOffset: fetched.nextFetchOffset,
    }
    await this.#handover.handOver(run, handlers, control)
  }

  /** W3: what the fetcher leaves to the source: out of range is reset; a truncated log or another partition error stops the flow. */
  async #fetchEvent (event: FetchEvent, handlers: SourceListener): Promise<void> {
    const where = `topic "${event.topic}" partition ${event.partition}`
    if (event.kind === 'offset-out-of-range') {
      try {
        const [reset] = await this.#resetPositions([event])
        if (reset === undefined || this.#owned.get(partitionKey(event.topic, event.partition)) === undefined) return
        const cluster = this.#connection.alias
        this.#logger.warn(`${where}: offset ${event.fetchOffset} is out of range on the ${cluster} cluster; fetching from ${reset.offset}`, {
          autoOffsetReset: this.#settings.autoOffsetReset,
        })
        if (!this.#paused && !this.#stopping) this.#fetcher?.assign(event.topic, event.partition, reset.offset)
      } catch (error) {
        handlers.onCrash(toMirrorError(error, `${where}: offset ${event.fetchOffset} is out of range and its reset failed`, ErrorCodes.KAFKA, this.#connection))
      }
      return
    }
    const message = event.kind === 'diverging-epoch'
      ? `${where}: the ${this.#connection.alias} cluster's log was truncated below offset ${event.fetchOffset} (KIP-320: leader epoch ${event.divergingEpoch?.epoch} ends at offset ${event.divergingEpoch?.endOffset}); ` +
        'records copied past that offset may not exist on the source any more: compare the clusters with mirror-check verify before restarting'
      : `${where}: the ${this.#connection.alias} cluster refused the fetch with ${event.error}`
    handlers.onCrash(new MirrorError(ErrorCodes.KAFKA, message, { kafkaCode: event.error }))
  }

  async commit (offsets: readonly CommitOffset[]): Promise<void> {
    const member = this.#member
    if (member === undefined || offsets.length === 0) return
    try {
      await member.commit(offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset })))
    } catch (error) {
      const context = `committing offsets of group "${this.#settings.groupId}" on the ${this.#connection.alias} cluster failed`
      throw toMirrorError(error, context, ErrorCodes.KAFKA, this.#connection)
    }
  }

  seek (offsets: readonly CommitOffset[]): void {
    for (const { topic, partition, offset } of offsets) {
      const owned = this.#owned.get(partitionKey(topic, partition))
      if (owned === undefined) continue
      owned.epoch++
      if (!this.#paused) this.#fetcher?.assign(topic, partition, offset)
    }
  }

  pause (): void {
    this.#paused = true
    for (const { topic, partition } of this.#owned.values()) this.#fetcher?.unassign(topic, partition)
  }

  stop (): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true
      this.#stopSignal.abort()
      this.pause()
      try {
        await this.#member?.stop()
      } catch (error) {
        // Leaving late costs the group a session timeout, not a record: nothing past the last commit was committed.
        this.#logger.warn('source group member did not leave cleanly', { error })
      }
      await this.#fetcher?.stop()
      const admin = this.#admin
      this.#admin = undefined
      if (admin !== undefined) {
        await admin.then(async client => await client.disconnect()).catch((error: unknown) => {
          // A client that never connected has nothing to close.
          this.#logger.debug('source admin client did not disconnect cleanly', { error })
        })
      }
      await this.#handover.stop()
      this.#owned.clear()
      this.#ownedKeys = undefined
      this.#connected = false
    })()
    return this.#stopped
  }
}
