import { randomBytes } from 'node:crypto'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { Admin, Consumer, Producer } from '@kafka-mirror-sidecar/kafkajs'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry, type RetryPolicy } from '../shared/retry.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { toMirrorError } from './errors.js'
import { retryWhileStarting } from './start-retry.js'
import { DEFAULT_MAX_MESSAGE_BYTES, recordBytesPerRequest, splitRecords, type InternalRecord } from './split-records.js'

const { ConfigResourceTypes, Partitioners } = kafkajs

export type { InternalRecord }

export interface InternalTopicWriterOptions {
  /** The target producer's `max.request.size`: no produce request is larger; default 1048576. */
  readonly maxRequestSizeBytes?: number
}

/** Where a replication factor came from, for the message when the cluster refuses it. */
export interface ReplicationFactorSetting {
  readonly replicationFactor: number
  /** The configuration key that set it, e.g. `offset-syncs.topic.replication.factor`. */
  readonly key: string
}

/** Attempts to create an internal topic and see it (backoff from 0.3 s doubling to 10 s: about 40 s in all). */
const ENSURE_TOPIC_ATTEMPTS = 8

/**
 * Writes the mirror's bookkeeping records (offset syncs, checkpoints) to one cluster: idempotent
 * producer, acks=all, so a resolved `write` means the records are durable on the in-sync replicas.
 * A write is split into produce requests within the producer's `max.request.size` and the topic's
 * `max.message.bytes` (read once per topic), sent one after the other to partition 0, in order.
 */
export class InternalTopicWriter {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  readonly #maxRequestSizeBytes: number
  /** `max.message.bytes` per topic, read with describeConfigs on first use. */
  readonly #maxMessageBytes = new Map<string, number>()
  #producer: Producer | undefined
  #admin: Admin | undefined
  /** Aborted by `stop()`: ends a start that waits out a passing fault of the cluster. */
  #stopping: AbortController | undefined

  constructor (connection: ClusterConnection, logger: Logger, options: InternalTopicWriterOptions = {}) {
    this.#connection = connection
    this.#logger = logger
    this.#maxRequestSizeBytes = options.maxRequestSizeBytes ?? 1_048_576
  }

  async start (): Promise<void> {
    const stopping = new AbortController()
    this.#stopping = stopping
    const { producer, admin } = await retryWhileStarting(
      `starting the writer of internal topics on the ${this.#connection.alias} cluster`,
      () => this.#connect(),
      this.#logger,
      stopping.signal
    )
    this.#producer = producer
    this.#admin = admin
  }

  /** A connected producer (its InitProducerId answered) and admin; what a failed attempt opened is disconnected. */
  async #connect (): Promise<{ producer: Producer, admin: Admin }> {
    const kafka = createKafkaClient(this.#connection, this.#logger)
    const producer = kafka.producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    })
    const admin = kafka.admin({ retry: { retries: 3, initialRetryTime: 300 } })
    try {
      await producer.connect()
      await admin.connect()
    } catch (error) {
      await producer.disconnect().catch(() => { /* cleanup of a failed attempt: the error thrown below is what the caller gets */ })
      await admin.disconnect().catch(() => { /* cleanup of a failed attempt, as above */ })
      throw toMirrorError(
        error,
        `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
        ErrorCodes.CONNECTION,
        this.#connection
      )
    }
    return { producer, admin }
  }

  /**
   * Creates `topic` (one partition, compacted, with `configs`) unless it exists, with the replication
   * factor of `setting` (-1: the broker's `default.replication.factor`), then reads its `max.message.bytes`.
   * A replication factor the cluster cannot give is a non-retriable `MirrorError` naming the key.
   */
  async ensureCompactedTopic (topic: string, setting: ReplicationFactorSetting, configs: Readonly<Record<string, string>> = {}): Promise<void> {
    const admin = this.#admin
    if (admin === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'internal topic writer is not started')
    // A cluster that just started, or a controller that moved, may not show the new topic's leader
    // yet when kafkajs' wait for it gives up (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, both
    // retriable): the next attempt finds the topic and goes on. A non-retriable error ends it at once.
    await retry(async () => {
      try {
        if (!(await admin.listTopics()).includes(topic)) {
          await admin.createTopics({
            waitForLeaders: true,
            topics: [
              {
                topic,
                numPartitions: 1,
                replicationFactor: setting.replicationFactor,
                configEntries: [{ name: 'cleanup.policy', value: 'compact' }, ...Object.entries(configs).map(([name, value]) => ({ name, value }))],
              },
            ],
          })
          this.#logger.info('created internal topic', { topic, cluster: this.#connection.alias, replicationFactor: setting.replicationFactor })
        }
      } catch (error) {
        const converted = toMirrorError(
          error,
          `creating the internal topic ${topic} on the ${this.#connection.alias} cluster failed`,
          ErrorCodes.KAFKA,
          this.#connection
        )
        if (converted.kafkaCode === 'INVALID_REPLICATION_FACTOR' || /replication factor/i.test(converted.message)) {
          const what =
            setting.replicationFactor === -1 ? `${setting.key} -1 (the broker's default.replication.factor)` : `${setting.key} ${setting.replicationFactor}`
          throw new MirrorError(
            ErrorCodes.CONFIG,
            `${what}: the ${this.#connection.alias} cluster cannot create ${topic} with it (${converted.message}); set ${setting.key} to at most the number of brokers`,
            { cause: error }
          )
        }
        if (converted.kafkaCode !== 'TOPIC_ALREADY_EXISTS') throw converted
      }
    }, {
      maxAttempts: ENSURE_TOPIC_ATTEMPTS,
      initialBackoffMs: 300,
      onRetry: (error, attempt, backoffMs) => this.#logger.warn('creating an internal topic failed; trying again', {
        topic,
        cluster: this.#connection.alias,
        attempt,
        backoffMs,
        error: (error as Error).message,
      }),
    })
    await this.#limitOf(topic)
  }

  /** The topic's `max.message.bytes`; the broker's `message.max.bytes`, else Kafka's default, when the topic's config cannot be read. */
  async #limitOf (topic: string): Promise<number> {
    const known = this.#maxMessageBytes.get(topic)
    if (known !== undefined) return known
    const admin = this.#admin
    if (admin === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'internal topic writer is not started', { retriable: true })
    let limit: number | undefined
    try {
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] }],
      })
      limit = Number(described.resources[0]?.configEntries.find(e => e.configName === 'max.message.bytes')?.configValue)
    } catch (error) {
      this.#logger.warn("cannot read max.message.bytes of an internal topic; using the broker's message.max.bytes", {
        topic,
        error: toMirrorError(error, 'describeConfigs').message,
      })
      try {
        const { brokers } = await admin.describeCluster()
        const described = await admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: ConfigResourceTypes.BROKER, name: String(brokers[0]?.nodeId ?? 0), configNames: ['message.max.bytes'] }],
        })
        limit = Number(described.resources[0]?.configEntries.find(e => e.configName === 'message.max.bytes')?.configValue)
      } catch {
        // Neither readable (no DescribeConfigs permission): Kafka's default below; a smaller limit halves it on refusal.
      }
    }
    const maxMessageBytes = limit !== undefined && Number.isSafeInteger(limit) && limit > 0 ? limit : DEFAULT_MAX_MESSAGE_BYTES
    this.#maxMessageBytes.set(topic, maxMessageBytes)
    return maxMessageBytes
  }

  /**
   * Writes `records` to partition 0 of `topic`, in order, in as many produce requests as the
   * limits need, one after the other; resolves when all are durable. Each request is retried
   * with `retryPolicy` (default: not retried); on a failure the requests before it are durable
   * and the rest are not sent. A record too large for any request is a non-retriable error.
   */
  async write (topic: string, records: readonly InternalRecord[], retryPolicy: RetryPolicy = { maxAttempts: 1 }): Promise<void> {
    if (records.length === 0) return
    let maxMessageBytes = await this.#limitOf(topic)
    const split = (pending: readonly InternalRecord[]): InternalRecord[][] =>
      splitRecords(pending, recordBytesPerRequest({ maxRequestSizeBytes: this.#maxRequestSizeBytes, maxMessageBytes }), topic)
    let chunks = split(records)
    for (let i = 0; i < chunks.length;) {
      const chunk = chunks[i] as InternalRecord[]
      try {
        await retry(() => this.#send(topic, chunk), retryPolicy)
        i++
      } catch (error) {
        // The topic's limit changed since it was read (or a broker counts differently): halve it and split the rest again.
        if (!(error instanceof MirrorError) || (error.kafkaCode !== 'MESSAGE_TOO_LARGE' && error.kafkaCode !== 'RECORD_LIST_TOO_LARGE') || chunk.length === 1) {
          throw error
        }
        maxMessageBytes = Math.floor(maxMessageBytes / 2)
        this.#maxMessageBytes.set(topic, maxMessageBytes)
        this.#logger.warn('internal topic refused a request as too large; writing smaller requests', { topic, records: chunk.length, maxMessageBytes })
        chunks = split(chunks.slice(i).flat())
        i = 0
      }
    }
  }

  async #send (topic: string, records: readonly InternalRecord[]): Promise<void> {
    const producer = this.#producer
    if (producer === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'internal topic writer is not started', { retriable: true })
    try {
      await producer.send({ topic, acks: -1, messages: records.map(r => ({ key: r.key, value: r.value, partition: 0, timestamp: String(Date.now()) })) })
    } catch (error) {
      throw toMirrorError(error, `writing to ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.SEND_FAILED, this.#connection)
    }
  }

  /**
   * The earliest offset of each partition of `topic` (the log start: below it, retention or
   * deleteRecords removed the records). Undefined when the topic does not exist.
   */
  async logStartOffsets (topic: string): Promise<Map<number, bigint> | undefined> {
    const admin = this.#admin
    if (admin === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'internal topic writer is not started', { retriable: true })
    try {
      if (!(await admin.listTopics()).includes(topic)) return undefined
      return new Map((await admin.fetchTopicOffsets(topic)).map(p => [p.partition, BigInt(p.low)]))
    } catch (error) {
      throw toMirrorError(error, `reading the log start offsets of ${topic} on the ${this.#connection.alias} cluster failed`)
    }
  }

  async stop (): Promise<void> {
    this.#stopping?.abort()
    const producer = this.#producer
    const admin = this.#admin
    this.#producer = undefined
    this.#admin = undefined
    await producer?.disconnect().catch(error => this.#logger.warn('internal topic producer did not disconnect cleanly', { error }))
    await admin?.disconnect().catch(error => this.#logger.warn('internal topic admin did not disconnect cleanly', { error }))
  }
}

export type InternalRecordHandler = (key: string | null, value: string | null, offset: bigint) => void
/** As `InternalRecordHandler`, for topics of binary records (MirrorMaker 2's). */
export type InternalBytesHandler = (key: Buffer | null, value: Buffer | null, offset: bigint) => void

/**
 * Follows an internal topic from its beginning and hands every record to `onRecord`, in order.
 * `caughtUp()` resolves once everything written before the call has been handed over. The
 * consumer group it needs (kafkajs has no group-less consumer) is throwaway, named `__mirror-...`
 * so group filters skip it, and never commits.
 */
export class InternalTopicReader {
  readonly #connection: ClusterConnection
  readonly #topic: string
  #onRecord: InternalBytesHandler
  readonly #logger: Logger
  #consumer: Consumer | undefined
  #admin: Admin | undefined
  #next = 0n
  #stopped = false

  constructor (connection: ClusterConnection, topic: string, onRecord: InternalRecordHandler, logger: Logger) {
    this.#connection = connection
    this.#topic = topic
    this.#onRecord = (key, value, offset) => onRecord(key?.toString('utf8') ?? null, value?.toString('utf8') ?? null, offset)
    this.#logger = logger
  }

  /** A reader handing over the records' bytes as they are. */
  static ofBytes (connection: ClusterConnection, topic: string, onRecord: InternalBytesHandler, logger: Logger): InternalTopicReader {
    const reader = new InternalTopicReader(connection, topic, () => { /* replaced by onRecord below */ }, logger)
    reader.#onRecord = onRecord
    return reader
  }

  async start (): Promise<void> {
    const kafka = createKafkaClient(this.#connection, this.#logger)
    const admin = kafka.admin({ retry: { retries: 3, initialRetryTime: 300 } })
    const consumer = kafka.consumer({
      groupId: `__mirror-sidecar-reader-${randomBytes(6).toString('hex')}`,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 200,
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 5_000 },
    })
    consumer.on(consumer.events.END_BATCH_PROCESS, event => {
      const next = BigInt(event.payload.lastOffset) + 1n
      if (next > this.#next) this.#next = next
    })
    try {
      await admin.connect()
      this.#admin = admin
      await consumer.connect()
      this.#consumer = consumer
      await consumer.subscribe({ topics: [this.#topic], fromBeginning: true })
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) {
            this.#onRecord(message.key ?? null, message.value ?? null, BigInt(message.offset))
          }
          const next = BigInt(batch.lastOffset()) + 1n
          if (next > this.#next) this.#next = next
        },
      })
    } catch (error) {
      await this.stop()
      throw toMirrorError(
        error,
        `cannot read ${this.#topic} on the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
  }

  /** Resolves when every record written to the topic before this call has been handed over. */
  async caughtUp (timeoutMs = 30_000): Promise<void> {
    const admin = this.#admin
    if (admin === undefined || this.#stopped) throw new MirrorError(ErrorCodes.STOPPED, `reader of ${this.#topic} is not started`)
    let end: bigint
    try {
      const offsets = await admin.fetchTopicOffsets(this.#topic)
      end = BigInt(offsets[0]?.high ?? '0')
    } catch (error) {
      throw toMirrorError(error, `reading the end offset of ${this.#topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
    const deadline = Date.now() + timeoutMs
    while (this.#next < end) {
      if (this.#stopped) throw new MirrorError(ErrorCodes.STOPPED, `reader of ${this.#topic} stopped`)
      if (Date.now() > deadline) {
        throw new MirrorError(
          ErrorCodes.KAFKA,
          `reading ${this.#topic} on the ${this.#connection.alias} cluster did not reach offset ${end} within ${timeoutMs} ms (at ${this.#next})`,
          { retriable: true }
        )
      }
      await new Promise(resolve => setTimeout(resolve, 25))
    }
  }

  async stop (): Promise<void> {
    this.#stopped = true
    const consumer = this.#consumer
    const admin = this.#admin
    this.#consumer = undefined
    this.#admin = undefined
    await consumer?.disconnect().catch(error => this.#logger.warn('internal topic reader did not disconnect cleanly', { error }))
    await admin?.disconnect().catch(error => this.#logger.warn('internal topic reader admin did not disconnect cleanly', { error }))
  }
}

/** Reads `topic` from the beginning to its current end, then disconnects. A missing topic reads as empty. */
export async function readInternalTopic (
  connection: ClusterConnection,
  topic: string,
  onRecord: InternalRecordHandler,
  logger: Logger,
  timeoutMs = 30_000
): Promise<boolean> {
  return readWhole(connection, topic, new InternalTopicReader(connection, topic, onRecord, logger), logger, timeoutMs)
}

/** As `readInternalTopic`, handing over the records' bytes. */
export async function readInternalTopicBytes (
  connection: ClusterConnection,
  topic: string,
  onRecord: InternalBytesHandler,
  logger: Logger,
  timeoutMs = 30_000
): Promise<boolean> {
  return readWhole(connection, topic, InternalTopicReader.ofBytes(connection, topic, onRecord, logger), logger, timeoutMs)
}

async function readWhole (connection: ClusterConnection, topic: string, reader: InternalTopicReader, logger: Logger, timeoutMs: number): Promise<boolean> {
  const admin = createKafkaClient(connection, logger).admin()
  try {
    await admin.connect()
    if (!(await admin.listTopics()).includes(topic)) return false
  } catch (error) {
    throw toMirrorError(error, `cannot connect to the ${connection.alias} cluster (${connection.brokers.join(',')})`, ErrorCodes.CONNECTION, connection)
  } finally {
    await admin.disconnect().catch(error => logger.warn('internal topic admin did not disconnect cleanly', { topic, error }))
  }
  try {
    await reader.start()
    await reader.caughtUp(timeoutMs)
  } finally {
    await reader.stop()
  }
  return true
}
