import { randomBytes } from 'node:crypto'
import kafkajs from 'kafkajs'
import type { Admin, Consumer, Producer } from 'kafkajs'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { toMirrorError } from './errors.js'

const { Partitioners } = kafkajs

/** One record of an internal topic: UTF-8 key and value; a null value is a tombstone. */
export interface InternalRecord {
  readonly key: string
  readonly value: string | null
}

/**
 * Writes the mirror's bookkeeping records (offset syncs, checkpoints) to one cluster: idempotent
 * producer, acks=all, so a resolved `write` means the records are durable on the in-sync replicas.
 */
export class InternalTopicWriter {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  #producer: Producer | undefined
  #admin: Admin | undefined

  constructor (connection: ClusterConnection, logger: Logger) {
    this.#connection = connection
    this.#logger = logger
  }

  async start (): Promise<void> {
    const kafka = createKafkaClient(this.#connection, this.#logger)
    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
    const admin = kafka.admin({ retry: { retries: 3, initialRetryTime: 300 } })
    try {
      await producer.connect()
      await admin.connect()
    } catch (error) {
      await producer.disconnect().catch(() => {})
      throw toMirrorError(error, `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`, ErrorCodes.CONNECTION, this.#connection)
    }
    this.#producer = producer
    this.#admin = admin
  }

  /** Creates `topic` (one partition, compacted) unless it exists. */
  async ensureCompactedTopic (topic: string, replicationFactor: number): Promise<void> {
    const admin = this.#admin
    if (admin === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'internal topic writer is not started')
    try {
      if ((await admin.listTopics()).includes(topic)) return
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: 1, replicationFactor, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
      })
      this.#logger.info('created internal topic', { topic, cluster: this.#connection.alias })
    } catch (error) {
      const converted = toMirrorError(error, `creating the internal topic ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
      if (converted.kafkaCode === 'TOPIC_ALREADY_EXISTS') return
      throw converted
    }
  }

  async write (topic: string, records: readonly InternalRecord[]): Promise<void> {
    const producer = this.#producer
    if (producer === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'internal topic writer is not started', { retriable: true })
    if (records.length === 0) return
    try {
      await producer.send({ topic, acks: -1, messages: records.map(r => ({ key: r.key, value: r.value, partition: 0, timestamp: String(Date.now()) })) })
    } catch (error) {
      throw toMirrorError(error, `writing to ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.SEND_FAILED, this.#connection)
    }
  }

  /** The earliest offset of each partition of `topic` (the log start: below it, retention or deleteRecords removed the records). Undefined when the topic does not exist. */
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
    const producer = this.#producer
    const admin = this.#admin
    this.#producer = undefined
    this.#admin = undefined
    await producer?.disconnect().catch(error => this.#logger.warn('internal topic producer did not disconnect cleanly', { error }))
    await admin?.disconnect().catch(() => {})
  }
}

export type InternalRecordHandler = (key: string | null, value: string | null, offset: bigint) => void

/**
 * Follows an internal topic from its beginning and hands every record to `onRecord`, in order.
 * `caughtUp()` resolves once everything written before the call has been handed over. The
 * consumer group it needs (kafkajs has no group-less consumer) is throwaway, named `__mirror-...`
 * so group filters skip it, and never commits.
 */
export class InternalTopicReader {
  readonly #connection: ClusterConnection
  readonly #topic: string
  readonly #onRecord: InternalRecordHandler
  readonly #logger: Logger
  #consumer: Consumer | undefined
  #admin: Admin | undefined
  #next = 0n
  #stopped = false

  constructor (connection: ClusterConnection, topic: string, onRecord: InternalRecordHandler, logger: Logger) {
    this.#connection = connection
    this.#topic = topic
    this.#onRecord = onRecord
    this.#logger = logger
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
            this.#onRecord(message.key?.toString('utf8') ?? null, message.value?.toString('utf8') ?? null, BigInt(message.offset))
          }
          const next = BigInt(batch.lastOffset()) + 1n
          if (next > this.#next) this.#next = next
        },
      })
    } catch (error) {
      await this.stop()
      throw toMirrorError(error, `cannot read ${this.#topic} on the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`, ErrorCodes.KAFKA, this.#connection)
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
      if (Date.now() > deadline) throw new MirrorError(ErrorCodes.KAFKA, `reading ${this.#topic} on the ${this.#connection.alias} cluster did not reach offset ${end} within ${timeoutMs} ms (at ${this.#next})`, { retriable: true })
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
    await admin?.disconnect().catch(() => {})
  }
}

/** Reads `topic` from the beginning to its current end, then disconnects. A missing topic reads as empty. */
export async function readInternalTopic (connection: ClusterConnection, topic: string, onRecord: InternalRecordHandler, logger: Logger, timeoutMs = 30_000): Promise<boolean> {
  const admin = createKafkaClient(connection, logger).admin()
  try {
    await admin.connect()
    if (!(await admin.listTopics()).includes(topic)) return false
  } catch (error) {
    throw toMirrorError(error, `cannot connect to the ${connection.alias} cluster (${connection.brokers.join(',')})`, ErrorCodes.CONNECTION, connection)
  } finally {
    await admin.disconnect().catch(() => {})
  }
  const reader = new InternalTopicReader(connection, topic, onRecord, logger)
  try {
    await reader.start()
    await reader.caughtUp(timeoutMs)
  } finally {
    await reader.stop()
  }
  return true
}
