import type { Consumer, EachBatchPayload, ForwardedBatchMessage, PartitionAssigner } from '@kafka-mirror-sidecar/kafkajs'
import type { ConsumerSettings } from '../config/mirror-config.js'
import type { CommitOffset, FetchControl, RecordSource, SourceListener } from '../ports/ports.js'
import type { TranscoderLoad } from '../ports/transcoder-load.js'
import { partitionKey } from '../shared/partition-key.js'
import { settleWithin } from '../shared/deadline.js'
import { ErrorCodes } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { toMirrorError } from './errors.js'
import { fetchSessionsOption, forwardedBatchOf } from './kafkajs-internals.js'
import { forwardingHook, type ForwardingPolicy, type KafkaForwardedBatch } from './forwarded-record-batch.js'
import { decodeLaneRefusal, laneRefusalError } from './bucket-assigner.js'
import type { CorruptRecordBatch } from './corrupt-record-batch.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import type { StartOffset } from './start-offset.js'
import { BatchHandover, type FetchedItem, type MirrorProducerFilter } from './batch-handover.js'

/** What kafkajs hands `eachBatch` with `forwardRecordBatch` set: decoded records, and messages standing for whole batches. */
type FetchedMessage = KafkaRecord | ForwardedBatchMessage<KafkaForwardedBatch | CorruptRecordBatch>

/**
 * The mirror's consumer group on the source: `streams` kafkajs consumers in one group, auto-commit
 * off. Offsets are committed only through `commit`, by the member that owns each partition.
 */
export class KafkaRecordSource implements RecordSource {
  readonly #connection: ClusterConnection
  readonly #settings: ConsumerSettings
  readonly #streams: number
  readonly #logger: Logger
  /** Which batches go undecoded (pass-through); the others are decoded one at a time as the queue takes them. */
  readonly #forwarding: ForwardingPolicy
  #consumers: Consumer[] = []
  readonly #assignments = new Map<Consumer, Set<string>>()
  /** The union of `#assignments`, made again only after they changed (`owned()` runs several times per loss check and commit). */
  #owned: ReadonlySet<string> | undefined
  #topics: readonly string[] = []
  #connected = false
  #stopped = false
  #disconnecting: Promise<void> = Promise.resolve()

  /** The group's assignors: kafkajs' default unless given (exactly-once: the bucket assignor). */
  readonly #assigners: PartitionAssigner[] | undefined
  /** Where a partition without a committed offset starts (MirrorMaker 2's position), when given. */
  readonly #startOffset: StartOffset | undefined
  /** Hands each partition's fetch to the pipeline: forwarded batches, decoded runs, transcodes, the opposite mirror's batches left out. */
  readonly #handover: BatchHandover

  constructor (
    connection: ClusterConnection,
    settings: ConsumerSettings,
    streams: number,
    logger: Logger,
    forwarding: ForwardingPolicy,
    producers?: MirrorProducerFilter,
    assigners?: PartitionAssigner[],
    startOffset?: StartOffset
  ) {
    this.#assigners = assigners
    this.#startOffset = startOffset
    this.#connection = connection
    this.#settings = settings
    this.#streams = streams
    this.#logger = logger
    this.#forwarding = forwarding
    this.#handover = new BatchHandover(settings.maxPollRecords, forwarding, producers)
  }

  get connected (): boolean {
    return this.#connected
  }

  get transcoding (): TranscoderLoad | undefined {
    return this.#handover.load
  }

  /** Partitions owned by this process across its consumers. */
  owned (): ReadonlySet<string> {
    if (this.#owned !== undefined) return this.#owned
    const all = new Set<string>()
    for (const keys of this.#assignments.values()) for (const key of keys) all.add(key)
    this.#owned = all
    return all
  }

  /** Joins the group subscribed to `topics` (which must exist) and starts fetching. */
  async start (topics: readonly string[], handlers: SourceListener): Promise<void> {
    this.#stopped = false
    this.#topics = topics
    this.#handover.start()
    const kafka = createKafkaClient({ ...this.#connection, clientId: this.#connection.clientId }, this.#logger)
    // Every fetch of these consumers offers its v2 batches to the hook (CRC check, then forwarded or decoded).
    // A batch declined for its codec alone is counted when its turn comes: transcoded, or decoded when that fails.
    const startOffset = this.#startOffset
    const forwardRecordBatch = forwardingHook(this.#forwarding, (reason, bytes) => {
      if (reason !== 'codec' || !this.#handover.transcodes) handlers.onDecoded?.(reason, bytes)
    })
    for (let i = 0; i < this.#streams; i++) {
      const consumer = kafka.consumer({
        groupId: this.#settings.groupId,
        sessionTimeout: this.#settings.sessionTimeoutMs,
        heartbeatInterval: this.#settings.heartbeatIntervalMs,
        maxBytesPerPartition: this.#settings.maxPartitionFetchBytes,
        maxBytes: this.#settings.fetchMaxBytes,
        maxWaitTimeInMs: this.#settings.fetchMaxWaitMs,
        minBytes: this.#settings.fetchMinBytes,
        allowAutoTopicCreation: false,
        retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
        ...(this.#assigners === undefined ? {} : { partitionAssigners: this.#assigners }),
        ...(this.#settings.fetchSessions ? fetchSessionsOption() : {}),
        forwardRecordBatch,
        beforeRejoin: () => this.#beforeRejoin(handlers),
        ...(startOffset === undefined ? {} : { startOffset: ({ topic, partition }) => startOffset(topic, partition)?.toString() }),
      })
      this.#consumers.push(consumer)
      this.#assignments.set(consumer, new Set())
      this.#owned = undefined
      this.#wireEvents(consumer, handlers)
      try {
        await consumer.connect()
        if (topics.length > 0) await consumer.subscribe({ topics: [...topics], fromBeginning: this.#settings.autoOffsetReset === 'earliest' })
      } catch (error) {
        throw toMirrorError(
          error,
          `cannot join group "${this.#settings.groupId}" on the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
          ErrorCodes.KAFKA,
          this.#connection
        )
      }
      this.#connected = true
    }
    if (topics.length === 0) return
    // All streams join together, so the group settles in one rebalance instead of one per stream.
    const run = (consumer: Consumer): Promise<void> =>
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 16,
        eachBatch: payload => this.#eachBatch(payload, handlers),
      })
    await Promise.all(this.#consumers.map(run))
  }

  #wireEvents (consumer: Consumer, handlers: SourceListener): void {
    const { GROUP_JOIN, END_BATCH_PROCESS, FETCH, CRASH, CONNECT, DISCONNECT } = consumer.events
    consumer.on(GROUP_JOIN, event => {
      // The leader refused this process (exactly-once, another lane count than the group's): it got no partitions and stops.
      const refusal = decodeLaneRefusal((event.payload as { memberUserData?: Buffer }).memberUserData)
      if (refusal !== undefined) handlers.onCrash(laneRefusalError(this.#settings.groupId, refusal))
      const owned = new Set<string>()
      for (const [topic, partitions] of Object.entries(event.payload.memberAssignment)) {
        for (const partition of partitions) owned.add(partitionKey(topic, partition))
      }
      this.#assignments.set(consumer, owned)
      this.#owned = undefined
      handlers.onAssignment(this.owned())
    })
    if (handlers.onFetched !== undefined) {
      const onFetched = handlers.onFetched.bind(handlers)
      consumer.on(FETCH, () => onFetched())
    }
    // kafkajs resolves batches that held only control records or aborted data itself and never
    // hands them to eachBatch; this event is where the mirror learns it may move past them.
    consumer.on(END_BATCH_PROCESS, event => {
      if (event.payload.batchSize === 0) {
        handlers.onSkipped(event.payload.topic, event.payload.partition, BigInt(event.payload.lastOffset) + 1n, BigInt(event.payload.fetchedOffset))
      }
    })
    consumer.on(CONNECT, () => {
      this.#connected = true
    })
    consumer.on(DISCONNECT, () => {
      if (this.#stopped) this.#connected = false
    })
    consumer.on(CRASH, event => {
      const error = event.payload.error
      this.#connected = false
      // A crash caused by our own disconnect (during a group join) makes kafkajs schedule a restart
      // after the disconnect already ran; disconnect once more when that one settles.
      if (this.#stopped) {
        void this.#disconnecting
          .then(() => consumer.disconnect())
          .catch(error => this.#logger.debug('source consumer did not disconnect cleanly after a crash during stop', { error }))
        return
      }
      if (event.payload.restart) {
        this.#logger.warn('source consumer crashed and restarts', { error })
        return
      }
      handlers.onCrash(toMirrorError(error, `source consumer of group "${this.#settings.groupId}" stopped`))
    })
  }

  /**
   * Before a member of a generation joins again (the patched kafkajs' `beforeRejoin`; the eager
   * protocol gives every partition up at a rejoin, KIP-429): the listener commits what the target
   * acknowledged while the coordinator still takes this generation's commits. After the join they fail (ILLEGAL_GENERATION), and at-least-once the
   * partitions' next owners would copy that progress again. Bounded by half the session timeout:
   * the member sends no heartbeat meanwhile, and one silent for a whole session is removed from
   * the group (its commits refused with UNKNOWN_MEMBER_ID).
   */
  async #beforeRejoin (handlers: SourceListener): Promise<void> {
    if (this.#stopped) return
    const boundMs = Math.floor(this.#settings.sessionTimeoutMs / 2)
    if (!(await settleWithin(handlers.onRebalancing(), boundMs))) {
      this.#logger.warn('rejoining the group before what was acknowledged is committed; the next owners of its partitions may copy records again', { boundMs })
    }
  }

  async #eachBatch (payload: EachBatchPayload, handlers: SourceListener): Promise<void> {
    const { batch, heartbeat, isRunning, isStale, resolveOffset } = payload
    if (batch.messages.length === 0) return
    const control: FetchControl = { heartbeat, isActive: () => isRunning() && !isStale() }
    // A record, or the batch (forwarded or corrupt) a kafkajs message stands for.
    const items = (batch.messages as FetchedMessage[]).map((message): FetchedItem => forwardedBatchOf(message) ?? (message as KafkaRecord))
    const run = {
      topic: batch.topic,
      partition: batch.partition,
      highWatermark: BigInt(batch.highWatermark),
      items,
      fetchedOffset: BigInt(batch.fetchedOffset),
      nextOffset: BigInt(batch.lastOffset()) + 1n,
    }
    await this.#handover.handOver(run, handlers, control)
    // Moves kafkajs' fetch position only; what is committed is decided by the mirror.
    if (isRunning() && !isStale()) resolveOffset(batch.lastOffset())
  }

  /** The consumer (stream) the partition is assigned to here, if any. */
  #ownerOf (topic: string, partition: number): Consumer | undefined {
    const key = partitionKey(topic, partition)
    return this.#consumers.find(c => this.#assignments.get(c)?.has(key))
  }

  /** Commits `offsets` on the source, each through the consumer that owns the partition. */
  async commit (offsets: readonly CommitOffset[]): Promise<void> {
    const byConsumer = new Map<Consumer, Array<{ topic: string, partition: number, offset: string }>>()
    for (const { topic, partition, offset } of offsets) {
      const owner = this.#ownerOf(topic, partition) ?? this.#consumers[0]
      if (owner === undefined) continue
      const list = byConsumer.get(owner) ?? []
      list.push({ topic, partition, offset: offset.toString() })
      byConsumer.set(owner, list)
    }
    try {
      await Promise.all([...byConsumer].map(([consumer, list]) => consumer.commitOffsets(list)))
    } catch (error) {
      throw toMirrorError(
        error,
        `committing offsets of group "${this.#settings.groupId}" on the ${this.#connection.alias} cluster failed`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
  }

  /**
   * Moves each partition's fetch position through the consumer that owns it (kafkajs `seek`, no
   * commit with auto-commit off). Until the next fetch of the partition applies it, kafkajs reports
   * the partition's batches as stale, and drops the answer of a fetch already in flight.
   */
  seek (offsets: readonly CommitOffset[]): void {
    for (const { topic, partition, offset } of offsets) {
      const owner = this.#ownerOf(topic, partition)
      if (owner === undefined) continue
      try {
        owner.seek({ topic, partition, offset: offset.toString() })
      } catch (error) {
        // Not running yet ("Consumer group was not initialized"): it has fetched nothing to go back over.
        this.#logger.debug('source consumer could not seek', { topic, partition, error })
      }
    }
  }

  /** Stops fetching while keeping group membership, so acknowledged offsets can still be committed. */
  pause (): void {
    const topics = this.#topics.map(topic => ({ topic }))
    if (topics.length === 0) return
    for (const consumer of this.#consumers) {
      try {
        consumer.pause(topics)
      } catch (error) {
        // A consumer that crashed before its group was set up ("Consumer group was not initialized") fetches nothing to pause.
        this.#logger.debug('source consumer could not be paused', { error })
      }
    }
  }

  /** Leaves the group and closes connections. Safe to call twice. */
  async stop (): Promise<void> {
    this.#stopped = true
    const consumers = this.#consumers
    this.#consumers = []
    this.#disconnecting = Promise.all(
      consumers.map(async consumer => {
        try {
          await consumer.disconnect()
        } catch (error) {
          this.#logger.warn('source consumer did not disconnect cleanly', { error })
        }
      })
    ).then(() => undefined)
    await this.#disconnecting
    await this.#handover.stop()
    this.#assignments.clear()
    this.#owned = undefined
    this.#connected = false
  }
}
