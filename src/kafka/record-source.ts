import type { Consumer, EachBatchPayload, ForwardedBatchMessage, PartitionAssigner } from '@kafka-mirror-sidecar/kafkajs'
import type { ConsumerSettings } from '../config/mirror-config.js'
import type { CommitOffset, RecordSource, SourceListener } from '../ports/ports.js'
import type { TranscoderLoad } from '../ports/transcoder-load.js'
import { partitionKey } from '../shared/partition-key.js'
import { settleWithin } from '../shared/deadline.js'
import { ErrorCodes } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { toMirrorError } from './errors.js'
import { fetchSessionsOption, forwardedBatchOf } from './kafkajs-internals.js'
import { forwardingHook, KafkaForwardedBatch, type ForwardingPolicy } from './forwarded-record-batch.js'
import { decodeLaneRefusal, laneRefusalError } from './bucket-assigner.js'
import { CorruptRecordBatch } from './corrupt-record-batch.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import { BatchTranscoder, codecId, TranscodeWindow } from './batch-transcoder.js'

/**
 * Tells the producers of the mirror of the opposite direction (which wrote into this source
 * cluster) from everyone else's, by producer id, so their batches are not copied back.
 */
export interface MirrorProducerFilter {
  /** The ids among `producerIds` that belong to the opposite mirror; may reload what it knows first (an id it never saw). */
  classify: (producerIds: readonly string[]) => Promise<ReadonlySet<string>>
  /** Counts records skipped that way. */
  skipped: (records: number) => void
}

/**
 * Where a partition the group has no committed offset for starts, or undefined for
 * `auto.offset.reset`. The consumer commits that offset through its member, in the group's
 * generation, before it fetches the partition (the patched kafkajs' `startOffset`).
 */
export type StartOffset = (topic: string, partition: number) => bigint | undefined

/**
 * Batches of one partition's fetch recompressed at once (the one handed on next and those after
 * it): with 16 partitions handed over concurrently, enough to keep the codecs' threads busy, while
 * what waits per partition stays within a few batches.
 */
const TRANSCODE_AHEAD = 3

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
  /** Producers of the opposite direction's mirror (active-active): their batches are skipped. */
  readonly #producers: MirrorProducerFilter | undefined
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
  /** Recompresses batches declined only for their codec into the target's (`forwarding.targetCodec`); undefined without a codec to change to, or when every batch is decoded. */
  readonly #transcoder: BatchTranscoder | undefined

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
    this.#producers = producers
    this.#connection = connection
    this.#settings = settings
    this.#streams = streams
    this.#logger = logger
    this.#forwarding = forwarding
    // With every batch decoded (decodeAll) none is declined for its codec alone: no transcoder, and no transcoder gauges.
    const target = forwarding.targetCodec === undefined || forwarding.decodeAll !== undefined ? undefined : codecId(forwarding.targetCodec)
    this.#transcoder = target === undefined ? undefined : new BatchTranscoder(target, forwarding.maxBatchBytes)
  }

  get connected (): boolean {
    return this.#connected
  }

  get transcoding (): TranscoderLoad | undefined {
    const transcoder = this.#transcoder
    return transcoder === undefined ? undefined : { busySlots: transcoder.running, waitingBatches: transcoder.waiting }
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
    this.#transcoder?.start()
    const kafka = createKafkaClient({ ...this.#connection, clientId: this.#connection.clientId }, this.#logger)
    // Every fetch of these consumers offers its v2 batches to the hook (CRC check, then forwarded or decoded).
    // A batch declined for its codec alone is counted when its turn comes: transcoded, or decoded when that fails.
    const startOffset = this.#startOffset
    const forwardRecordBatch = forwardingHook(this.#forwarding, (reason, bytes) => {
      if (reason !== 'codec' || this.#transcoder === undefined) handlers.onDecoded?.(reason, bytes)
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
    const control = { heartbeat, isActive: () => isRunning() && !isStale() }
    const highWatermark = BigInt(batch.highWatermark)
    const nextOffset = BigInt(batch.lastOffset()) + 1n
    await this.#handOver(
      batch.topic,
      batch.partition,
      highWatermark,
      batch.messages as FetchedMessage[],
      BigInt(batch.fetchedOffset),
      nextOffset,
      handlers,
      control
    )
    // Moves kafkajs' fetch position only; what is committed is decided by the mirror.
    if (isRunning() && !isStale()) resolveOffset(batch.lastOffset())
  }

  /**
   * Hands the fetched messages over in order: each forwarded batch on its own, decoded records in
   * runs of up to `max.poll.records`. A batch that must be decoded (its `deepReason`, or it begins
   * before the fetch offset: the broker returns whole batches) is decoded only when its turn comes,
   * after the queue took what came before, so at most one run of decoded records waits outside
   * the queue.
   */
  async #handOver (
    topic: string,
    partition: number,
    highWatermark: bigint,
    messages: readonly FetchedMessage[],
    fetchedOffset: bigint,
    nextOffset: bigint,
    handlers: SourceListener,
    control: { heartbeat: () => Promise<void>, isActive: () => boolean }
  ): Promise<void> {
    let run: KafkaRecord[] = []
    /** The offset up to which what was handed over reaches (past skipped batches of the opposite mirror too). */
    let covered = fetchedOffset
    // A record, or the batch (forwarded or corrupt) a kafkajs message stands for.
    const itemOf = (message: FetchedMessage): KafkaRecord | KafkaForwardedBatch | CorruptRecordBatch => forwardedBatchOf(message) ?? (message as KafkaRecord)
    const firstOffsetOf = (message: FetchedMessage): bigint => {
      const item = itemOf(message)
      return item instanceof KafkaForwardedBatch || item instanceof CorruptRecordBatch ? item.baseOffset : BigInt(item.offset)
    }
    const flush = async (next: bigint): Promise<void> => {
      if (run.length === 0) return
      const records = run
      run = []
      const from = covered
      covered = next
      await handlers.onBatch({ topic, partition, highWatermark, records, nextOffset: next, from }, control)
    }
    const mirrored =
      this.#producers === undefined
        ? undefined
        : await this.#producers.classify(
          messages.flatMap(m => {
            const item = itemOf(m)
            return item instanceof KafkaForwardedBatch ? [item.producerId] : []
          })
        )
    // The batches of the fetch that only need another codec are recompressed ahead of their turn
    // (TRANSCODE_AHEAD at a time) and each is awaited when its turn comes, so order holds.
    const transcoding = this.#transcodeWindow(messages, fetchedOffset, mirrored)
    for (const [index, fetched] of messages.entries()) {
      if (!control.isActive()) return
      const message = itemOf(fetched)
      const following = messages[index + 1]
      const next = following === undefined ? nextOffset : firstOffsetOf(following)
      if (message instanceof CorruptRecordBatch) {
        await flush(message.baseOffset)
        if (!control.isActive()) return
        // kafkajs moves its fetch position past the batch's last offset: only as good as the header.
        const bound = following === undefined ? highWatermark : next
        const rangeProblem =
          message.endOffset <= covered
            ? `its header says it ends at offset ${message.endOffset - 1n}, before offset ${covered} where the fetch stood`
            : message.endOffset > bound
              ? `its header says it ends at offset ${message.endOffset - 1n}, past ${bound - 1n} where ${following === undefined ? 'the partition ends (high watermark)' : 'the next batch begins'}`
              : undefined
        if (!handlers.onCorrupt(topic, partition, message, rangeProblem)) return
        handlers.onSkipped(topic, partition, message.endOffset, covered)
        covered = message.endOffset
        continue
      }
      if (message instanceof KafkaForwardedBatch && mirrored?.has(message.producerId) === true) {
        // Written here by the mirror of the opposite direction: it came from our target, so it is not copied back.
        this.#producers?.skipped(message.recordCount)
        if (run.length > 0 && following === undefined) await flush(next)
        continue
      }
      const pending = message instanceof KafkaForwardedBatch ? transcoding?.take(message) : undefined
      const transcoded = pending === undefined ? undefined : await pending
      if (pending !== undefined && transcoded === undefined && message instanceof KafkaForwardedBatch) handlers.onDecoded?.('codec', message.sizeBytes)
      if (!(message instanceof KafkaForwardedBatch)) {
        run.push(message)
      } else if ((message.deepReason === undefined || transcoded !== undefined) && message.baseOffset >= fetchedOffset) {
        await flush(message.baseOffset)
        if (!control.isActive()) return
        const from = covered
        covered = next
        await handlers.onBatch({ topic, partition, highWatermark, records: [], forwarded: transcoded ?? message, nextOffset: next, from }, control)
        continue
      } else {
        if (message.deepReason === undefined) handlers.onDecoded?.('starts_before_position', message.sizeBytes)
        else if (message.deepReason === 'codec' && this.#transcoder !== undefined && pending === undefined) handlers.onDecoded?.('codec', message.sizeBytes)
        for (const record of await message.decode()) if (BigInt(record.offset) >= fetchedOffset) run.push(record)
      }
      if (run.length >= this.#settings.maxPollRecords || following === undefined) await flush(next)
    }
    await flush(nextOffset)
    if (covered < nextOffset && control.isActive()) handlers.onSkipped(topic, partition, nextOffset, covered)
  }

  /**
   * The batches of `messages` declined only for their codec (and not before the fetch offset, nor
   * the opposite mirror's), recompressed `TRANSCODE_AHEAD` at a time in fetch order; undefined
   * without a transcoder. A result is undefined when the batch is to be decoded after all.
   */
  #transcodeWindow (
    messages: readonly FetchedMessage[],
    fetchedOffset: bigint,
    mirrored: ReadonlySet<string> | undefined
  ): TranscodeWindow<KafkaForwardedBatch, KafkaForwardedBatch | undefined> | undefined {
    const transcoder = this.#transcoder
    if (transcoder === undefined) return undefined
    const eligible: KafkaForwardedBatch[] = []
    for (const message of messages) {
      const batch = forwardedBatchOf(message)
      if (
        batch instanceof KafkaForwardedBatch &&
        batch.deepReason === 'codec' &&
        batch.baseOffset >= fetchedOffset &&
        mirrored?.has(batch.producerId) !== true
      ) {
        eligible.push(batch)
      }
    }
    return new TranscodeWindow(eligible, async batch => await batch.recompressed(async bytes => await transcoder.transcode(bytes)), TRANSCODE_AHEAD)
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
    await this.#transcoder?.stop()
    this.#assignments.clear()
    this.#owned = undefined
    this.#connected = false
  }
}
