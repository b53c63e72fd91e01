import type { Producer, TopicMessages, Transaction } from '@kafka-mirror-sidecar/kafkajs'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import type { ProducerSettings } from '../config/mirror-config.js'
import type { PartitionAck, PartitionWrite, SourcePosition, TransactionalSink, TransactionRecord } from '../ports/ports.js'
import { TransactionFailedError } from '../ports/transaction-failed-error.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'
import { producerIdOf } from './kafkajs-internals.js'
import { encodePosition } from './position-record.js'
import { acksOf, compressionTypes, sendFailureOf, topicMessagesOf } from './record-sink.js'
import { withEncodedBatches } from './decoded-record-batch.js'
import { DEFAULT_MAX_MESSAGE_BYTES, recordBytesPerRequest, recordSizeBytes, splitRecords } from './split-records.js'

const { Partitioners } = kafkajs

/** Answers after which this producer's transaction cannot go on (another process took the id, the coordinator aborted it). */
const TRANSACTION_LOST: ReadonlySet<string> = new Set([
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_TXN_STATE',
  'INVALID_PRODUCER_ID_MAPPING',
  'UNKNOWN_PRODUCER_ID',
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'INVALID_TRANSACTION_TIMEOUT',
])

export interface TransactionalSinkOptions {
  /**
   * Stable per flow and lane, the same in whichever process holds the lane: `<group.id>.lane-<n>`
   * and `<group.id>.lane-<n>.2`. The lane's transactions alternate between them, so one is written
   * while the one before is being committed.
   */
  readonly transactionalIds: readonly string[]
  readonly transactionTimeoutMs: number
  /** Where the positions go, in the same transaction as the records. */
  readonly positionsTopic: string
  /** The source group: positions are kept per group. */
  readonly groupId: string
  /** Told each producer id before it writes (active-active: the opposite mirror skips its batches). */
  readonly onProducerStarted?: (producerId: bigint) => Promise<void>
}

function positionKey (position: SourcePosition): string {
  return `${position.topic}\u0000${position.partition}`
}

/** One of a lane's transactional producers. */
interface Slot {
  readonly transactionalId: string
  producer: Producer | undefined
  transaction: Transaction | undefined
  /** The commit of this producer's last transaction: its next one starts after it. */
  committed: Promise<void>
}

/**
 * One producer lane writing in transactions (exactly-once). `acquire` starts a kafkajs
 * transactional producer for each of the lane's transactional ids; each one's first transaction
 * sends InitProducerId, which fences any other holder of the id and makes the coordinator abort
 * that holder's open transaction. Records (decoded or forwarded batches, which then carry the
 * producer's id, epoch, sequence and the transactional bit) are written in the open transaction;
 * `commitTransaction` adds the positions and the offset syncs and asks for the commit, and the next transaction goes to
 * the other producer: its records are written while the coordinator completes the commit (EndTxn,
 * then the markers; a new transaction on the same id would have to wait for the markers). A
 * transaction's EndTxn is sent only after the one before it committed; if that one failed, this
 * one is aborted, so what is committed is always a prefix of what the lane wrote.
 */
export class KafkaTransactionalSink implements TransactionalSink {
  readonly #connection: ClusterConnection
  readonly #settings: ProducerSettings
  readonly #options: TransactionalSinkOptions
  readonly #logger: Logger
  #slots: Slot[] = []
  #current = 0
  #connected = false
  /** Positions for the open transaction, written with its next send (`stagePositions`). */
  readonly #staged = new Map<string, SourcePosition>()
  /** Positions the open transaction holds already: the commit writes only what differs. */
  readonly #written = new Map<string, bigint>()

  constructor (connection: ClusterConnection, settings: ProducerSettings, options: TransactionalSinkOptions, logger: Logger) {
    if (options.transactionalIds.length === 0) throw new MirrorError(ErrorCodes.INTERNAL, 'a transactional sink needs at least one transactional id')
    this.#connection = connection
    this.#settings = settings
    this.#options = options
    this.#logger = logger
  }

  get connected (): boolean { return this.#connected || this.#slots.length === 0 }

  /** Nothing to do: a lane's producers start when its bucket is assigned here (`acquire`), never before, or they would fence the owner. */
  async start (): Promise<void> { /* the producers start in acquire() */ }

  async acquire (): Promise<void> {
    await this.release()
    const slots: Slot[] = []
    try {
      for (const transactionalId of this.#options.transactionalIds) slots.push(await this.#startProducer(transactionalId))
    } catch (error) {
      const disconnect = async (slot: Slot): Promise<void> => await slot.producer?.disconnect()
        .catch(() => { /* cleanup on a failed start: the error thrown below is what the caller gets */ })
      await Promise.all(slots.map(disconnect))
      throw error
    }
    this.#slots = slots
    this.#current = 0
    this.#connected = true
  }

  async #startProducer (transactionalId: string): Promise<Slot> {
    const producer = createKafkaClient(this.#connection, this.#logger).producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionalId,
      transactionTimeout: this.#options.transactionTimeoutMs,
      // Enough retries to ride out an outage shorter than the transaction timeout (EndTxn, AddPartitionsToTxn).
      retry: { retries: 12, initialRetryTime: 200, maxRetryTime: 4_000 },
      createPartitioner: Partitioners.DefaultPartitioner,
    })
    let transaction: Transaction
    try {
      await producer.connect()
      // The first transaction initialises the transactional id: previous holders are fenced here.
      transaction = await producer.transaction()
    } catch (error) {
      await producer.disconnect().catch(() => { /* cleanup on a failed start: the error thrown below is what the caller gets */ })
      throw toMirrorError(
        error,
        `cannot start the transactional producer ${transactionalId} on the ${this.#connection.alias} cluster`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
    const producerId = producerIdOf(producer)
    if (producerId !== undefined && this.#options.onProducerStarted !== undefined) {
      try {
        await this.#options.onProducerStarted(producerId)
      } catch (error) {
        await producer.disconnect().catch(() => { /* cleanup on a failed start: the error thrown below is what the caller gets */ })
        throw toMirrorError(error, `cannot publish the producer id of the mirror on the ${this.#connection.alias} cluster`, ErrorCodes.KAFKA, this.#connection)
      }
    }
    return { transactionalId, producer, transaction, committed: Promise.resolve() }
  }

  /** The producer the open transaction is on, once its previous transaction's commit settled. */
  async #slot (): Promise<Slot> {
    const slot = this.#slots[this.#current]
    if (slot?.producer === undefined) {
      throw new TransactionFailedError(`the transactional producers ${this.#options.transactionalIds.join(', ')} are not started (their lane is not held here)`)
    }
    await slot.committed
    return slot
  }

  async #open (slot: Slot): Promise<Transaction> {
    if (slot.transaction?.isActive() !== true) {
      try {
        slot.transaction = await (slot.producer as Producer).transaction()
      } catch (error) {
        throw this.#lost(slot, error, 'beginning a transaction')
      }
    }
    return slot.transaction as Transaction
  }

  stagePositions (positions: readonly SourcePosition[]): void {
    for (const position of positions) {
      const key = positionKey(position)
      const known = this.#staged.get(key)?.offset ?? this.#written.get(key)
      if (known === undefined || position.offset > known) this.#staged.set(key, position)
    }
  }

  async send (writes: readonly PartitionWrite[], timeoutMs = 30_000): Promise<PartitionAck[]> {
    // Decoded records go as one batch per partition encoded here (`withEncodedBatches`), not kafkajs' record by record.
    const prepared = await withEncodedBatches(writes, compressionTypes[this.#settings.compression])
    const slot = await this.#slot()
    const transaction = await this.#open(slot)
    // Staged positions ride along (their partition joins the transaction with the records' partitions: no request of their own).
    const positions = [...this.#staged.values()]
    const topicMessages = topicMessagesOf(prepared)
    if (positions.length > 0) topicMessages.push({ topic: this.#options.positionsTopic, messages: this.#positionMessages(positions) })
    try {
      const metadata = await transaction.sendBatch({ topicMessages, acks: -1, compression: compressionTypes[this.#settings.compression], timeout: timeoutMs })
      this.#connected = true
      this.#positionsWritten(positions)
      return acksOf(metadata.filter(m => m.topicName !== this.#options.positionsTopic), writes, this.#connection)
    } catch (error) {
      const failure = sendFailureOf(error, writes, this.#connection)
      if (failure.producerStateLost || [...failure.kafkaCodes].some(code => TRANSACTION_LOST.has(code)) || transaction.isActive() !== true) {
        throw this.#lost(slot, error, 'writing')
      }
      if (failure.retriable) this.#connected = false
      throw failure.error
    }
  }

  /**
   * The requests that carry `records` and the missing positions (partition 0 of their topics), in
   * that order, each within `max.request.size` and the default `max.message.bytes`: usually one.
   */
  #commitRequests (missing: readonly SourcePosition[], records: readonly TransactionRecord[]): TopicMessages[][] {
    const byTopic = new Map<string, Array<{ key: string | Buffer, value: string | Buffer }>>()
    for (const { topic, key, value } of records) {
      let list = byTopic.get(topic)
      if (list === undefined) byTopic.set(topic, list = [])
      list.push({ key, value })
    }
    if (missing.length > 0) {
      byTopic.set(this.#options.positionsTopic, [...(byTopic.get(this.#options.positionsTopic) ?? []), ...this.#positionMessages(missing)])
    }
    const maxRecordBytes = recordBytesPerRequest({ maxRequestSizeBytes: this.#settings.maxRequestSizeBytes, maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES })
    const requests: Array<{ topics: TopicMessages[], bytes: number }> = []
    for (const [topic, list] of byTopic) {
      for (const chunk of splitRecords(list, maxRecordBytes, topic)) {
        const bytes = chunk.reduce((sum, record) => sum + recordSizeBytes(record), 0)
        const messages = chunk.map(({ key, value }) => ({ partition: 0, key, value }))
        // Topics share a request while it stays within the limit (each topic's batch is within it on its own).
        const last = requests[requests.length - 1]
        if (last !== undefined && last.bytes + bytes <= maxRecordBytes) {
          last.topics.push({ topic, messages })
          last.bytes += bytes
        } else {
          requests.push({ topics: [{ topic, messages }], bytes })
        }
      }
    }
    return requests.map(request => request.topics)
  }

  #positionMessages (positions: readonly SourcePosition[]): Array<{ partition: number, key: string, value: string }> {
    return positions.map(position => ({ partition: 0, ...encodePosition({ group: this.#options.groupId, ...position }) }))
  }

  #positionsWritten (positions: readonly SourcePosition[]): void {
    for (const position of positions) {
      const key = positionKey(position)
      this.#written.set(key, position.offset)
      if (this.#staged.get(key)?.offset === position.offset) this.#staged.delete(key)
    }
  }

  async commitTransaction (positions: readonly SourcePosition[], records: readonly TransactionRecord[] = []): Promise<{ readonly committed: Promise<void> }> {
    const slot = await this.#slot()
    const transaction = await this.#open(slot)
    // Normally every position went with the records already; what did not is written now, with the offset syncs.
    const missing = positions.filter(position => this.#written.get(positionKey(position)) !== position.offset)
    this.#staged.clear()
    this.#written.clear()
    try {
      for (const topicMessages of this.#commitRequests(missing, records)) {
        // Retried while the target is unreachable; a resend inside the same transaction only repeats the same records.
        await retry(
          () =>
            transaction.sendBatch({ topicMessages, acks: -1, timeout: 30_000 }).catch(error => {
              throw toMirrorError(
                error,
                `writing ${topicMessages.map(t => t.topic).join(' and ')} in the transaction of ${slot.transactionalId}`,
                ErrorCodes.KAFKA,
                this.#connection
              )
            }),
          {
            maxAttempts: 20,
            initialBackoffMs: 200,
            maxBackoffMs: 3_000,
            shouldRetry: error => error instanceof MirrorError && error.retriable && !TRANSACTION_LOST.has(error.kafkaCode ?? '') && transaction.isActive(),
          }
        )
      }
    } catch (error) {
      throw this.#lost(slot, error, 'writing the positions and offset syncs')
    }
    const previous = (this.#slots[(this.#current + this.#slots.length - 1) % this.#slots.length] as Slot).committed
    const committed = this.#commitAfter(previous, slot, transaction)
    committed.catch(() => { /* settled by whoever waits for it; never an unhandled rejection when nobody does */ })
    slot.committed = committed
    this.#current = (this.#current + 1) % this.#slots.length
    return { committed }
  }

  async #commitAfter (previous: Promise<void>, slot: Slot, transaction: Transaction): Promise<void> {
    try {
      await previous
    } catch (error) {
      // The transaction before did not commit: this one's records come after those, so it must not commit either.
      await transaction.abort().catch(abortError => {
        this.#logger.warn('aborting the transaction after the one before it failed also failed; the coordinator aborts it when it times out', {
          transactionalId: slot.transactionalId,
          error: abortError,
        })
      })
      if (transaction.isActive() !== true) slot.transaction = undefined
      throw new TransactionFailedError(
        `the transaction of ${slot.transactionalId} was aborted: the one before it on the lane did not commit (${(error as Error).message})`,
        { cause: error, ...(error instanceof MirrorError && error.kafkaCode !== undefined ? { kafkaCode: error.kafkaCode } : {}) }
      )
    }
    try {
      // EndTxn is retried inside kafkajs (patch) while the coordinator cannot be reached.
      await transaction.commit()
    } catch (error) {
      throw this.#lost(slot, error, 'committing')
    } finally {
      if (transaction.isActive() !== true) slot.transaction = undefined
    }
  }

  #lost (slot: Slot, error: unknown, doing: string): TransactionFailedError {
    if (error instanceof TransactionFailedError) return error
    const converted =
      error instanceof MirrorError
        ? error
        : toMirrorError(error, `${doing} in the transaction of ${slot.transactionalId} failed`, ErrorCodes.KAFKA, this.#connection)
    return new TransactionFailedError(
      `${doing} in the transaction of ${slot.transactionalId} on the ${this.#connection.alias} cluster failed: ${converted.kafkaCode ?? converted.code} (${converted.message}); nothing of it is visible to read_committed consumers`,
      { cause: error, ...(converted.kafkaCode === undefined ? {} : { kafkaCode: converted.kafkaCode }) }
    )
  }

  async release (): Promise<void> {
    const slots = this.#slots
    this.#slots = []
    this.#staged.clear()
    this.#written.clear()
    await Promise.all(slots.map(async slot => {
      const producer = slot.producer
      slot.producer = undefined
      slot.transaction = undefined
      if (producer === undefined) return
      try {
        await producer.disconnect()
      } catch (error) {
        this.#logger.warn('transactional producer did not disconnect cleanly', { transactionalId: slot.transactionalId, error })
      }
    }))
  }

  async stop (): Promise<void> {
    await this.release()
  }
}
