import type { Consumer, EachBatchPayload } from 'kafkajs'
import type { ConsumerSettings } from '../config/mirror-config.js'
import type { CommitOffset, RecordSource, SourceListener } from '../pipeline/ports.js'
import { partitionKey } from '../pipeline/partition-key.js'
import { ErrorCodes } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { toMirrorError } from './errors.js'
import { asKafkaRecords, batchFetchedOffset, runWithBatchForwarding } from './kafkajs-internals.js'
import { forwardingHook, KafkaForwardedBatch, type ForwardingPolicy } from './forwarded-record-batch.js'
import type { KafkaRecord } from '../shared/kafka-record.js'

/**
 * The mirror's consumer group on the source: `streams` kafkajs consumers in one group, auto-commit
 * off. Offsets are committed only through `commit`, by the member that owns each partition.
 */
export class KafkaRecordSource implements RecordSource {
  readonly #connection: ClusterConnection
  readonly #settings: ConsumerSettings
  readonly #streams: number
  readonly #logger: Logger
  /** Set when the flow forwards record batches undecoded (pass-through). */
  readonly #forwarding: ForwardingPolicy | undefined
  #consumers: Consumer[] = []
  readonly #assignments = new Map<Consumer, Set<string>>()
  #topics: readonly string[] = []
  #connected = false
  #stopped = false
  #disconnecting: Promise<void> = Promise.resolve()

  constructor (connection: ClusterConnection, settings: ConsumerSettings, streams: number, logger: Logger, forwarding?: ForwardingPolicy) {
    this.#connection = connection
    this.#settings = settings
    this.#streams = streams
    this.#logger = logger
    this.#forwarding = forwarding
  }

  get connected (): boolean { return this.#connected }

  /** Partitions owned by this process across its consumers. */
  owned (): Set<string> {
    const all = new Set<string>()
    for (const keys of this.#assignments.values()) for (const key of keys) all.add(key)
    return all
  }

  /** Joins the group subscribed to `topics` (which must exist) and starts fetching. */
  async start (topics: readonly string[], handlers: SourceListener): Promise<void> {
    this.#stopped = false
    this.#topics = topics
    const kafka = createKafkaClient({ ...this.#connection, clientId: this.#connection.clientId }, this.#logger)
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
      })
      this.#consumers.push(consumer)
      this.#assignments.set(consumer, new Set())
      this.#wireEvents(consumer, handlers)
      try {
        await consumer.connect()
        if (topics.length > 0) await consumer.subscribe({ topics: [...topics], fromBeginning: this.#settings.autoOffsetReset === 'earliest' })
      } catch (error) {
        throw toMirrorError(error, `cannot join group "${this.#settings.groupId}" on the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`, ErrorCodes.KAFKA, this.#connection)
      }
      this.#connected = true
    }
    if (topics.length === 0) return
    // All streams join together, so the group settles in one rebalance instead of one per stream.
    const run = (consumer: Consumer): Promise<void> => consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 16,
      eachBatch: payload => this.#eachBatch(payload, handlers),
    })
    const forwarding = this.#forwarding
    if (forwarding === undefined) {
      await Promise.all(this.#consumers.map(run))
      return
    }
    const hook = forwardingHook(forwarding, (reason, bytes) => handlers.onDecoded?.(reason, bytes))
    await Promise.all(this.#consumers.map(consumer => runWithBatchForwarding(hook, () => run(consumer))))
  }

  #wireEvents (consumer: Consumer, handlers: SourceListener): void {
    const { GROUP_JOIN, REBALANCING, END_BATCH_PROCESS, CRASH, CONNECT, DISCONNECT } = consumer.events
    consumer.on(GROUP_JOIN, event => {
      const owned = new Set<string>()
      for (const [topic, partitions] of Object.entries(event.payload.memberAssignment)) {
        for (const partition of partitions) owned.add(partitionKey(topic, partition))
      }
      this.#assignments.set(consumer, owned)
      handlers.onAssignment(this.owned())
    })
    consumer.on(REBALANCING, () => handlers.onRebalancing())
    // kafkajs resolves batches that held only control records or aborted data itself and never
    // hands them to eachBatch; this event is where the mirror learns it may move past them.
    consumer.on(END_BATCH_PROCESS, event => {
      if (event.payload.batchSize === 0) {
        handlers.onSkipped(event.payload.topic, event.payload.partition, BigInt(event.payload.lastOffset) + 1n)
      }
    })
    consumer.on(CONNECT, () => { this.#connected = true })
    consumer.on(DISCONNECT, () => { if (this.#stopped) this.#connected = false })
    consumer.on(CRASH, event => {
      const error = event.payload.error
      this.#connected = false
      // A crash caused by our own disconnect (during a group join) makes kafkajs schedule a restart
      // after the disconnect already ran; disconnect once more when that one settles.
      if (this.#stopped) {
        void this.#disconnecting.then(() => consumer.disconnect()).catch(() => {})
        return
      }
      if (event.payload.restart) {
        this.#logger.warn('source consumer crashed and restarts', { error })
        return
      }
      handlers.onCrash(toMirrorError(error, `source consumer of group "${this.#settings.groupId}" stopped`))
    })
  }

  async #eachBatch (payload: EachBatchPayload, handlers: SourceListener): Promise<void> {
    const { batch, heartbeat, isRunning, isStale, resolveOffset } = payload
    if (batch.messages.length === 0) return
    const control = { heartbeat, isActive: () => isRunning() && !isStale() }
    const highWatermark = BigInt(batch.highWatermark)
    const nextOffset = BigInt(batch.lastOffset()) + 1n
    if (this.#forwarding === undefined) {
      await handlers.onBatch({ topic: batch.topic, partition: batch.partition, highWatermark, records: asKafkaRecords(batch.messages), nextOffset }, control)
    } else {
      const parts = await this.#parts(batch.messages, batchFetchedOffset(batch), handlers)
      for (const [index, part] of parts.entries()) {
        if (!control.isActive()) return
        const next = parts[index + 1]
        const partNext = next === undefined ? nextOffset : next.forwarded?.baseOffset ?? BigInt((next.records[0] as KafkaRecord).offset)
        await handlers.onBatch({ topic: batch.topic, partition: batch.partition, highWatermark, records: part.records, forwarded: part.forwarded, nextOffset: partNext }, control)
      }
    }
    // Moves kafkajs' fetch position only; what is committed is decided by the mirror.
    if (isRunning() && !isStale()) resolveOffset(batch.lastOffset())
  }

  /**
   * The fetched messages as runs of decoded records and single forwarded batches, in order. A
   * forwarded batch that begins before the fetch offset (the broker returns whole batches) is
   * decoded and trimmed to the records at or past it.
   */
  async #parts (messages: readonly unknown[], fetchedOffset: bigint, handlers: SourceListener): Promise<Array<{ records: readonly KafkaRecord[], forwarded?: KafkaForwardedBatch }>> {
    const parts: Array<{ records: KafkaRecord[], forwarded?: KafkaForwardedBatch }> = []
    let run: KafkaRecord[] | undefined
    for (const message of messages) {
      if (message instanceof KafkaForwardedBatch && message.baseOffset >= fetchedOffset) {
        parts.push({ records: [], forwarded: message })
        run = undefined
        continue
      }
      let records: readonly KafkaRecord[]
      if (message instanceof KafkaForwardedBatch) {
        handlers.onDecoded?.('starts_before_position', message.sizeBytes)
        records = (await message.decode()).filter(record => BigInt(record.offset) >= fetchedOffset)
      } else {
        records = [message as KafkaRecord]
      }
      if (run === undefined) parts.push({ records: run = [] })
      for (const record of records) run.push(record)
    }
    return parts.filter(part => part.forwarded !== undefined || part.records.length > 0)
  }

  /** Commits `offsets` on the source, each through the consumer that owns the partition. */
  async commit (offsets: readonly CommitOffset[]): Promise<void> {
    const byConsumer = new Map<Consumer, Array<{ topic: string, partition: number, offset: string }>>()
    for (const { topic, partition, offset } of offsets) {
      const key = partitionKey(topic, partition)
      const owner = this.#consumers.find(c => this.#assignments.get(c)?.has(key)) ?? this.#consumers[0]
      if (owner === undefined) continue
      const list = byConsumer.get(owner) ?? []
      list.push({ topic, partition, offset: offset.toString() })
      byConsumer.set(owner, list)
    }
    try {
      await Promise.all([...byConsumer].map(([consumer, list]) => consumer.commitOffsets(list)))
    } catch (error) {
      throw toMirrorError(error, `committing offsets of group "${this.#settings.groupId}" on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /** Stops fetching while keeping group membership, so acknowledged offsets can still be committed. */
  pause (): void {
    const topics = this.#topics.map(topic => ({ topic }))
    if (topics.length === 0) return
    for (const consumer of this.#consumers) consumer.pause(topics)
  }

  /** Leaves the group and closes connections. Safe to call twice. */
  async stop (): Promise<void> {
    this.#stopped = true
    const consumers = this.#consumers
    this.#consumers = []
    this.#disconnecting = Promise.all(consumers.map(async consumer => {
      try {
        await consumer.disconnect()
      } catch (error) {
        this.#logger.warn('source consumer did not disconnect cleanly', { error })
      }
    })).then(() => undefined)
    await this.#disconnecting
    this.#assignments.clear()
    this.#connected = false
  }
}
