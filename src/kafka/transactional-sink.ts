import type { Producer, Transaction } from 'kafkajs'
import kafkajs from 'kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import type { ProducerSettings } from '../config/mirror-config.js'
import type { PartitionAck, PartitionWrite, SourcePosition, TransactionalSink } from '../pipeline/ports.js'
import { TransactionFailedError } from '../pipeline/transaction-failed-error.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'
import { producerIdOf, withoutBatchForwarding } from './kafkajs-internals.js'
import { encodePosition } from './position-record.js'
import { acksOf, compressionTypes, sendFailureOf, topicMessagesOf } from './record-sink.js'

const { Partitioners } = kafkajs

/** Answers after which this producer's transaction cannot go on (another process took the id, the coordinator aborted it). */
const TRANSACTION_LOST: ReadonlySet<string> = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'INVALID_TXN_STATE', 'INVALID_PRODUCER_ID_MAPPING', 'UNKNOWN_PRODUCER_ID', 'OUT_OF_ORDER_SEQUENCE_NUMBER', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'INVALID_TRANSACTION_TIMEOUT'])

export interface TransactionalSinkOptions {
  /** Stable per flow and lane: `<group.id>.lane-<n>`, the same in whichever process holds the lane. */
  readonly transactionalId: string
  readonly transactionTimeoutMs: number
  /** Where the positions go, in the same transaction as the records. */
  readonly positionsTopic: string
  /** The source group: positions are kept per group. */
  readonly groupId: string
  /** Told the producer id before it writes (active-active: the opposite mirror skips its batches). */
  readonly onProducerStarted?: (producerId: bigint) => Promise<void>
}

/**
 * One producer lane writing in transactions (exactly-once). `acquire` starts a kafkajs
 * transactional producer with the lane's transactional id; its first transaction sends
 * InitProducerId, which fences any other holder of the id and makes the coordinator abort that
 * holder's open transaction. Records (decoded or forwarded batches, which then carry this
 * producer's id, epoch, sequence and the transactional bit) are written in the open transaction;
 * `commitTransaction` adds the positions and commits. The broker's EndTxn writes the markers.
 */
export class KafkaTransactionalSink implements TransactionalSink {
  readonly #connection: ClusterConnection
  readonly #settings: ProducerSettings
  readonly #options: TransactionalSinkOptions
  readonly #logger: Logger
  #producer: Producer | undefined
  #transaction: Transaction | undefined
  #connected = false

  constructor (connection: ClusterConnection, settings: ProducerSettings, options: TransactionalSinkOptions, logger: Logger) {
    this.#connection = connection
    this.#settings = settings
    this.#options = options
    this.#logger = logger
  }

  get connected (): boolean { return this.#connected || this.#producer === undefined }

  /** Nothing to do: a lane's producer starts when its bucket is assigned here (`acquire`), never before, or it would fence the owner. */
  async start (): Promise<void> {}

  /** Runs outside the source consumer's batch-forwarding context (lanes are taken from its group events): what it reads gets records. */
  async acquire (): Promise<void> {
    await withoutBatchForwarding(() => this.#acquire())
  }

  async #acquire (): Promise<void> {
    await this.release()
    const producer = createKafkaClient(this.#connection, this.#logger).producer({
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionalId: this.#options.transactionalId,
      transactionTimeout: this.#options.transactionTimeoutMs,
      // Enough retries to ride out an outage shorter than the transaction timeout (EndTxn, AddPartitionsToTxn).
      retry: { retries: 12, initialRetryTime: 200, maxRetryTime: 4_000 },
      createPartitioner: Partitioners.DefaultPartitioner,
    })
    try {
      await producer.connect()
      // The first transaction initialises the transactional id: previous holders are fenced here.
      this.#transaction = await producer.transaction()
    } catch (error) {
      await producer.disconnect().catch(() => {})
      throw toMirrorError(error, `cannot start the transactional producer ${this.#options.transactionalId} on the ${this.#connection.alias} cluster`, ErrorCodes.KAFKA, this.#connection)
    }
    this.#producer = producer
    const producerId = producerIdOf(producer)
    if (producerId !== undefined && this.#options.onProducerStarted !== undefined) {
      try {
        await this.#options.onProducerStarted(producerId)
      } catch (error) {
        await this.release()
        throw toMirrorError(error, `cannot publish the producer id of the mirror on the ${this.#connection.alias} cluster`, ErrorCodes.KAFKA, this.#connection)
      }
    }
    this.#connected = true
  }

  async #open (): Promise<Transaction> {
    const producer = this.#producer
    if (producer === undefined) throw new TransactionFailedError(`the transactional producer ${this.#options.transactionalId} is not started (its lane is not held here)`)
    if (this.#transaction?.isActive() !== true) {
      try {
        this.#transaction = await producer.transaction()
      } catch (error) {
        throw this.#lost(error, 'beginning a transaction')
      }
    }
    return this.#transaction as Transaction
  }

  async send (writes: readonly PartitionWrite[], timeoutMs = 30_000): Promise<PartitionAck[]> {
    const transaction = await this.#open()
    try {
      const metadata = await transaction.sendBatch({ topicMessages: topicMessagesOf(writes), acks: -1, compression: compressionTypes[this.#settings.compression], timeout: timeoutMs })
      this.#connected = true
      return acksOf(metadata, writes, this.#connection)
    } catch (error) {
      const failure = sendFailureOf(error, writes, this.#connection)
      if (failure.producerStateLost || TRANSACTION_LOST.has(failure.error.kafkaCode ?? '') || transaction.isActive() !== true) throw this.#lost(error, 'writing')
      if (failure.retriable) this.#connected = false
      throw failure.error
    }
  }

  async commitTransaction (positions: readonly SourcePosition[]): Promise<void> {
    const transaction = await this.#open()
    try {
      if (positions.length > 0) {
        const messages = positions.map(position => ({ partition: 0, ...encodePosition({ group: this.#options.groupId, ...position }) }))
        // Retried while the target is unreachable; a resend inside the same transaction only repeats the same positions.
        await retry(() => transaction.sendBatch({ topicMessages: [{ topic: this.#options.positionsTopic, messages }], acks: -1, timeout: 30_000 }).catch(error => {
          throw toMirrorError(error, `writing positions to ${this.#options.positionsTopic}`, ErrorCodes.KAFKA, this.#connection)
        }), { maxAttempts: 20, initialBackoffMs: 200, maxBackoffMs: 3_000, shouldRetry: error => error instanceof MirrorError && error.retriable && !TRANSACTION_LOST.has(error.kafkaCode ?? '') && transaction.isActive() })
      }
      // EndTxn is retried inside kafkajs (patch) while the coordinator cannot be reached.
      await transaction.commit()
    } catch (error) {
      throw this.#lost(error, 'committing')
    } finally {
      if (transaction.isActive() !== true) this.#transaction = undefined
    }
  }

  #lost (error: unknown, doing: string): TransactionFailedError {
    if (error instanceof TransactionFailedError) return error
    const converted = error instanceof MirrorError ? error : toMirrorError(error, `${doing} in the transaction of ${this.#options.transactionalId} failed`, ErrorCodes.KAFKA, this.#connection)
    return new TransactionFailedError(`${doing} in the transaction of ${this.#options.transactionalId} on the ${this.#connection.alias} cluster failed: ${converted.kafkaCode ?? converted.code} (${converted.message}); nothing of it is visible to read_committed consumers`, { cause: error, ...(converted.kafkaCode === undefined ? {} : { kafkaCode: converted.kafkaCode }) })
  }

  async release (): Promise<void> {
    const producer = this.#producer
    this.#producer = undefined
    this.#transaction = undefined
    if (producer === undefined) return
    try {
      await producer.disconnect()
    } catch (error) {
      this.#logger.warn('transactional producer did not disconnect cleanly', { error })
    }
  }

  async stop (): Promise<void> {
    await this.release()
  }
}
