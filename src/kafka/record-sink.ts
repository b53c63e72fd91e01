import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { Message, Producer, RecordBatchMessage, TopicMessages } from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import type { CompressionName, ProducerSettings } from '../config/mirror-config.js'
import { PartialSendError, type PartitionFailure } from '../ports/partial-send-error.js'
import { partitionKey } from '../shared/partition-key.js'
import type { PartitionAck, PartitionWrite, RecordSink } from '../ports/ports.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'
import { partitionErrorsOf, producerHeaders, producerIdOf, writtenBeforeFailure } from './kafkajs-internals.js'
import { KafkaForwardedBatch } from './forwarded-record-batch.js'
import { withEncodedBatches } from './decoded-record-batch.js'
import { retryWhileStarting } from './start-retry.js'

const { CompressionTypes, Partitioners } = kafkajs

export const compressionTypes: Record<CompressionName, number> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

/**
 * Errors after which the broker will not take this producer's next batch (its id, epoch or
 * sequence is unknown or out of step): the sink replaces the producer before its next send.
 */
const PRODUCER_STATE_LOST: ReadonlySet<string> = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
  'PRODUCER_FENCED',
])

/** Answers to a request with a forwarded batch that no retry of the same bytes can change. */
const FORWARD_REFUSED: ReadonlySet<string> = new Set(['CORRUPT_MESSAGE', 'INVALID_RECORD'])

/**
 * One producer on the target. Each `send` is one produce request per target broker (acks=all by
 * default) with one record batch per partition, so the records of a partition get consecutive
 * target offsets. The same idempotent producer serves every retry: kafkajs hands a failed
 * partition's sequence numbers back, so a resend of a batch the broker did write (a timed-out
 * request) is answered as a duplicate, not written again. A failure of some partitions is a
 * `PartialSendError` naming the partitions written and each failed partition's own error. The producer is replaced only after an
 * error that leaves it unusable (`PRODUCER_STATE_LOST`).
 */
export class KafkaRecordSink implements RecordSink {
  readonly #connection: ClusterConnection
  readonly #settings: ProducerSettings
  readonly #logger: Logger
  #producer: Producer | undefined
  #connected = false
  /** Set by a failure that leaves the idempotent producer unusable; the next send starts a new one. */
  #replaceProducer = false
  /** Aborted by `stop()`: ends a start that waits out a passing fault of the target. */
  #stopping: AbortController | undefined

  /** Told each new producer's id before it writes (active-active: the opposite mirror skips its batches). */
  readonly #onProducerStarted: ((producerId: bigint) => Promise<void>) | undefined

  constructor (connection: ClusterConnection, settings: ProducerSettings, logger: Logger, onProducerStarted?: (producerId: bigint) => Promise<void>) {
    this.#connection = connection
    this.#settings = settings
    this.#logger = logger
    this.#onProducerStarted = onProducerStarted
  }

  get connected (): boolean { return this.#connected }

  async start (): Promise<void> {
    const stopping = new AbortController()
    this.#stopping = stopping
    const producer = await retryWhileStarting('starting the target producer', () => this.#connect(), this.#logger, stopping.signal)
    const producerId = this.#settings.idempotent ? producerIdOf(producer) : undefined
    if (producerId !== undefined && this.#onProducerStarted !== undefined) {
      try {
        await this.#onProducerStarted(producerId)
      } catch (error) {
        await producer.disconnect().catch(() => { /* cleanup on a failed start: the error thrown below is what the caller gets */ })
        throw toMirrorError(error, `cannot publish the producer id of the mirror on the ${this.#connection.alias} cluster`, ErrorCodes.KAFKA, this.#connection)
      }
    }
    this.#producer = producer
    this.#connected = true
  }

  /** A new producer, connected (its InitProducerId answered); one that failed to connect is disconnected. */
  async #connect (): Promise<Producer> {
    const producer = createKafkaClient(this.#connection, this.#logger).producer({
      allowAutoTopicCreation: false,
      idempotent: this.#settings.idempotent,
      maxInFlightRequests: 1,
      // One attempt per send: the worker retries (shared/retry.ts, counted in
      // kafka_mirror_retries_total), sending only the partitions not written yet through this same
      // producer, so a partition whose write may have landed goes again with the same sequences.
      retry: { retries: 0 },
      // Every record names its partition, so no partitioner runs; naming one stops kafkajs' start-up warning about its default.
      createPartitioner: Partitioners.DefaultPartitioner,
    })
    try {
      await producer.connect()
    } catch (error) {
      await producer.disconnect().catch(() => { /* cleanup of a failed attempt: the error thrown below is what the caller gets */ })
      throw toMirrorError(
        error,
        `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
        ErrorCodes.CONNECTION,
        this.#connection
      )
    }
    return producer
  }

  async send (writes: readonly PartitionWrite[], timeoutMs = 30_000): Promise<PartitionAck[]> {
    if (this.#replaceProducer) {
      // The broker no longer knows this producer's id or sequence: only a new producer can write.
      this.#replaceProducer = false
      await this.stop()
      await this.start()
    }
    const producer = this.#producer
    if (producer === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'producer is not started', { retriable: true })
    // Decoded records go as one batch per partition encoded here (`withEncodedBatches`), not kafkajs' record by record.
    const topicMessages = topicMessagesOf(await withEncodedBatches(writes, compressionTypes[this.#settings.compression]))
    try {
      const metadata = await producer.sendBatch({
        topicMessages,
        acks: this.#settings.acks,
        compression: compressionTypes[this.#settings.compression],
        timeout: timeoutMs,
      })
      this.#connected = true
      return acksOf(metadata, writes, this.#connection)
    } catch (error) {
      const failure = sendFailureOf(error, writes, this.#connection)
      if (failure.retriable) this.#connected = false
      if (failure.producerStateLost) this.#replaceProducer = true
      throw failure.error
    }
  }

  async stop (): Promise<void> {
    this.#stopping?.abort()
    const producer = this.#producer
    this.#producer = undefined
    if (producer === undefined) return
    try {
      await producer.disconnect()
    } catch (error) {
      this.#logger.warn('target producer did not disconnect cleanly', { error })
    }
  }
}

/** The kafkajs messages for `writes`: decoded records as messages, forwarded batches of a partition joined into one message. */
export function topicMessagesOf (writes: readonly PartitionWrite[]): TopicMessages[] {
  const byTopic = new Map<string, Array<Message | RecordBatchMessage>>()
  // Forwarded batches of one partition become one batch (one message): the broker takes one per partition per request.
  const forwarded = new Map<string, { topic: string, partition: number, parts: KafkaForwardedBatch[] }>()
  for (const write of writes) {
    let messages = byTopic.get(write.topic)
    if (messages === undefined) byTopic.set(write.topic, messages = [])
    const partition = write.partition
    if (write.forwarded !== undefined) {
      if (!(write.forwarded instanceof KafkaForwardedBatch)) {
        throw new MirrorError(ErrorCodes.INTERNAL, `a forwarded batch for ${write.topic}-${partition} was not fetched by this project's record source`)
      }
      const key = `${write.topic}\u0000${partition}`
      const entry = forwarded.get(key) ?? { topic: write.topic, partition, parts: [] }
      entry.parts.push(write.forwarded)
      forwarded.set(key, entry)
      continue
    }
    for (const record of write.records) {
      messages.push({ partition, key: record.key, value: record.value, timestamp: record.timestamp, headers: producerHeaders(record) })
    }
  }
  for (const { topic, partition, parts } of forwarded.values()) {
    byTopic.get(topic)!.push(KafkaForwardedBatch.message(partition, parts))
  }
  const topicMessages: TopicMessages[] = []
  for (const [topic, messages] of byTopic) topicMessages.push({ topic, messages })
  return topicMessages
}

/**
 * The acknowledgements in kafkajs' answer. A partition it left out is not acknowledged: a
 * retriable `PartialSendError` carries the acknowledgements that did arrive, so a retry sends only
 * the partitions left out (through the same producer, with their same sequence numbers).
 */
export function acksOf (
  metadata: ReadonlyArray<{ topicName: string, partition: number, baseOffset?: string }>,
  writes: readonly PartitionWrite[],
  connection: ClusterConnection
): PartitionAck[] {
  const acks = metadata.map(m => ({ topic: m.topicName, partition: m.partition, baseOffset: BigInt(m.baseOffset ?? '-1') }))
  const seen = new Set(acks.map(a => partitionKey(a.topic, a.partition)))
  const missing: PartitionWrite[] = []
  for (const write of writes) {
    const key = partitionKey(write.topic, write.partition)
    if (seen.has(key)) continue
    seen.add(key)
    missing.push(write)
  }
  if (missing.length === 0) return acks
  const error = new MirrorError(
    ErrorCodes.SEND_FAILED,
    `the ${connection.alias} cluster did not acknowledge ${missing.map(w => `${w.topic}-${w.partition}`).join(', ')}`,
    { retriable: true, kafkaCode: 'UNKNOWN_TOPIC_OR_PARTITION' }
  )
  throw new PartialSendError(
    error,
    acks,
    missing.map(w => ({ topic: w.topic, partition: w.partition, error }))
  )
}

/**
 * A failed send as the pipeline sees it: the error to throw (a `PartialSendError` when some
 * partitions were written, or when kafkajs told the partitions' errors apart), and what it means
 * for the producer. A forwarded batch refused as CORRUPT_MESSAGE or INVALID_RECORD is refused for
 * good (kafkajs retries CORRUPT_MESSAGE; for a forwarded batch it means the target will not take
 * these bytes, so its records go decoded). `kafkaCodes` holds the Kafka error of the send and of
 * each failed partition.
 */
export function sendFailureOf (
  error: unknown,
  writes: readonly PartitionWrite[],
  connection: ClusterConnection
): { error: MirrorError, retriable: boolean, producerStateLost: boolean, kafkaCodes: ReadonlySet<string> } {
  if (error instanceof PartialSendError) {
    // From `acksOf`: already the pipeline's error, with what was written.
    return { error, retriable: error.retriable, producerStateLost: false, kafkaCodes: new Set(error.kafkaCode === undefined ? [] : [error.kafkaCode]) }
  }
  const context = `writing to the ${connection.alias} cluster failed`
  const forwardedTo = new Set(writes.filter(w => w.forwarded !== undefined).map(w => partitionKey(w.topic, w.partition)))
  const refusedForwarded = (converted: MirrorError, forwarded: boolean, cause: unknown): MirrorError =>
    converted.retriable && forwarded && FORWARD_REFUSED.has(converted.kafkaCode ?? '')
      ? new MirrorError(converted.code, converted.message, { cause, retriable: false, kafkaCode: converted.kafkaCode })
      : converted
  let converted = refusedForwarded(
    toMirrorError(error, context, ErrorCodes.SEND_FAILED, connection),
    forwardedTo.size > 0 && partitionErrorsOf(error).length === 0,
    error
  )
  const inWrites = (ack: { topic: string, partition: number }): boolean => writes.some(w => w.topic === ack.topic && w.partition === ack.partition)
  const failed: PartitionFailure[] = partitionErrorsOf(error)
    .filter(inWrites)
    .map(failure => ({
      topic: failure.topic,
      partition: failure.partition,
      error: refusedForwarded(
        toMirrorError(
          failure.error,
          `writing ${failure.topic}-${failure.partition} to the ${connection.alias} cluster failed`,
          ErrorCodes.SEND_FAILED,
          connection
        ),
        forwardedTo.has(partitionKey(failure.topic, failure.partition)),
        failure.error
      ),
    }))
  // A partition refused for good decides: retrying the whole send cannot write it.
  const refused = failed.find(failure => !failure.error.retriable)
  if (refused !== undefined && converted.retriable) converted = refused.error
  const written = writtenBeforeFailure(error).filter(inWrites)
  const kafkaCodes = new Set([converted, ...failed.map(f => f.error)].flatMap(e => (e.kafkaCode === undefined ? [] : [e.kafkaCode])))
  return {
    error: written.length === 0 && failed.length === 0 ? converted : new PartialSendError(converted, written, failed),
    retriable: converted.retriable,
    producerStateLost: [...kafkaCodes].some(code => PRODUCER_STATE_LOST.has(code)),
    kafkaCodes,
  }
}
