/**
 * The idempotent producer's state, kept in our code (no client library): the producer id and epoch
 * from InitProducerId, and per partition the sequence of the next record the broker has not
 * acknowledged plus the batches in flight. Pure logic; `BrokerProduceSink` drives it.
 *
 * Rules (Kafka's `TransactionManager` and the broker's `ProducerStateManager` follow the same):
 * - A batch's base sequence is the partition's acknowledged sequence plus the records of the batches
 *   in flight before it; sequences wrap to 0 after 2^31-1 (`DefaultRecordBatch.incrementSequence`).
 * - A retriable error (NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, a lost connection, ...) resends the
 *   batch with the same producer id, epoch and sequence: the broker keeps the last 5 batches of each
 *   producer and answers a resent one with its first offset instead of writing it again (KAFKA-5494).
 *   A partition with a failed batch sends nothing until all its requests have answered, then resends
 *   its unacknowledged batches in sequence order.
 * - OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID for the first unacknowledged batch of a
 *   partition means the broker holds no state that continues ours (retention removed the producer's
 *   last batch, or a leader lost it): the epoch is bumped as KIP-360 does (KAFKA-5793). Nothing new is
 *   sent, the requests in flight are waited for, then InitProducerId is sent with the current id and
 *   epoch, and every partition's sequences start again at 0 under what it answers. The same error
 *   for a later batch only says an earlier one is missing: that batch is retried after it.
 * - A batch whose error says it may have been written (a timeout, a lost connection, a leader moving
 *   while it waited for replicas) is resent only under the epoch it was sent with, where the broker
 *   deduplicates; at a bump it is given up with its partition's later batches (`BumpResult.unresolved`).
 *
 * Invariant A: a partition's acknowledged sequence advances only by the record count of a batch the
 * broker acknowledged, and only in sequence order.
 * Invariant B: a partition's batches in flight are at most `MAX_IN_FLIGHT_PER_PARTITION` (5, the
 * broker's deduplication window, KAFKA-5494), and their sequences continue the acknowledged sequence
 * without a gap, each batch after the one before.
 * Invariant C: a batch is only ever sent under the producer id and epoch it was first sent with,
 * unless it was never written (its sequences are reassigned at a bump only then).
 * Invariant D: while a bump is pending, no batch is sent.
 */
import { KafkaErrorCodes, kafkaErrorName } from './kafka-error-codes.js'

/** The broker deduplicates the last 5 batches of a producer per partition (KAFKA-5494): never more in flight. */
export const MAX_IN_FLIGHT_PER_PARTITION = 5

const MAX_SEQUENCE = 0x7fffffff

/** Kafka's error codes the produce path tells apart (the wire layer's one table of them). */
export const ProduceErrors = KafkaErrorCodes

/** Kafka's name of error `code` (`NOT_LEADER_OR_FOLLOWER`), or `error code N`. */
export const produceErrorName = kafkaErrorName

/** Not written: the broker refused the batch before appending it. Retried with the same sequence. */
const RETRIABLE_NOT_WRITTEN = new Set<number>([
  ProduceErrors.UNKNOWN_TOPIC_OR_PARTITION,
  ProduceErrors.LEADER_NOT_AVAILABLE,
  ProduceErrors.NOT_ENOUGH_REPLICAS,
  ProduceErrors.FENCED_LEADER_EPOCH,
  ProduceErrors.UNKNOWN_LEADER_EPOCH,
])

/**
 * Perhaps written: appended on a leader that did not answer in time or lost leadership while the
 * replicas caught up (acks=-1). Retried with the same sequence, where the broker deduplicates.
 */
const RETRIABLE_MAYBE_WRITTEN = new Set<number>([
  ProduceErrors.NOT_LEADER_OR_FOLLOWER,
  ProduceErrors.REQUEST_TIMED_OUT,
  ProduceErrors.NETWORK_EXCEPTION,
  ProduceErrors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ProduceErrors.KAFKA_STORAGE_ERROR,
])

/** A request that got no answer (connection lost, request timeout): the batch may have been written. */
export const NO_ANSWER = -1

/** Leader errors: the partition's leader is to be looked up again before the resend. */
export function isLeaderError (code: number): boolean {
  return code === ProduceErrors.NOT_LEADER_OR_FOLLOWER || code === ProduceErrors.LEADER_NOT_AVAILABLE ||
    code === ProduceErrors.UNKNOWN_TOPIC_OR_PARTITION || code === ProduceErrors.FENCED_LEADER_EPOCH ||
    code === ProduceErrors.UNKNOWN_LEADER_EPOCH || code === NO_ANSWER
}

/** `sequence` advanced by `count` records, wrapping after 2^31-1 as Kafka does. */
export function incrementSequence (sequence: number, count: number): number {
  return sequence > MAX_SEQUENCE - count ? count - (MAX_SEQUENCE - sequence) - 1 : sequence + count
}

/** What a batch's header carries for the broker. */
export interface SequenceFields {
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly baseSequence: number
}

type EntryStatus = 'sent' | 'resend' | 'failed'

interface Entry<T> {
  readonly batch: T
  readonly recordCount: number
  baseSequence: number
  producerId: bigint
  epoch: number
  status: EntryStatus
  maybeWritten: boolean
  error: number
}

interface PartitionState<T> {
  /** The sequence of the first record not acknowledged (Invariant A). */
  acked: number
  /** Unacknowledged batches in sequence order (Invariant B). */
  readonly entries: Array<Entry<T>>
}

/** What `failed` decided for a batch. */
export type FailureVerdict = 'retry' | 'bump' | 'fatal'

/** A batch that is not sent again: its error, and whether it may be in the log. */
export interface GivenUp<T> {
  readonly batch: T
  readonly error: number
  readonly maybeWritten: boolean
}

export interface BumpResult<T> {
  /** Batches given up at the bump, per partition from the first that failed or may have been written, in order. */
  readonly unresolved: ReadonlyArray<GivenUp<T>>
}

/** The idempotent producer's sequences for one producer id (see the module's rules and invariants). */
export class IdempotentProducerState<T> {
  #producerId = -1n
  #epoch = -1
  #bumpPending = false
  readonly #partitions = new Map<string, PartitionState<T>>()

  get producerId (): bigint { return this.#producerId }
  get epoch (): number { return this.#epoch }
  /** Whether an epoch bump waits (Invariant D: nothing is sent meanwhile). */
  get bumpPending (): boolean { return this.#bumpPending }

  /** The first producer id and epoch (InitProducerId without one). */
  initialized (producerId: bigint, epoch: number): void {
    if (this.#producerId !== -1n) throw new Error('producer state initialized twice')
    this.#producerId = producerId
    this.#epoch = epoch
  }

  #partition (partition: string): PartitionState<T> {
    let state = this.#partitions.get(partition)
    if (state === undefined) {
      state = { acked: 0, entries: [] }
      this.#partitions.set(partition, state)
    }
    return state
  }

  /** Whether `partition` may send a new batch: no bump pending, no batch waiting to be resent, fewer than 5 in flight. */
  canSend (partition: string): boolean {
    if (this.#bumpPending || this.#producerId === -1n) return false
    const entries = this.#partitions.get(partition)?.entries ?? []
    return entries.length < MAX_IN_FLIGHT_PER_PARTITION && entries.every(entry => entry.status === 'sent')
  }

  /** The fields for a new batch of `recordCount` records on `partition`, now in flight; undefined when it may not be sent (`canSend`). */
  send (partition: string, batch: T, recordCount: number): SequenceFields | undefined {
    if (!this.canSend(partition)) return undefined
    const state = this.#partition(partition)
    const last = state.entries.at(-1)
    const baseSequence = last === undefined ? state.acked : incrementSequence(last.baseSequence, last.recordCount)
    const entry: Entry<T> = {
      batch, recordCount, baseSequence, producerId: this.#producerId, epoch: this.#epoch, status: 'sent', maybeWritten: false, error: 0,
    }
    state.entries.push(entry)
    return fieldsOf(entry)
  }

  #entry (partition: string, batch: T): { state: PartitionState<T>, index: number, entry: Entry<T> } {
    const state = this.#partitions.get(partition)
    const index = state?.entries.findIndex(entry => entry.batch === batch) ?? -1
    if (state === undefined || index < 0) throw new Error(`no batch in flight on ${partition}`)
    return { state, index, entry: state.entries[index]! }
  }

  /** The broker wrote `batch`: the partition's sequence advances by its records (Invariant A). Only the first unacknowledged batch can be. */
  acknowledged (partition: string, batch: T): void {
    const { state, index, entry } = this.#entry(partition, batch)
    if (index !== 0) throw new Error(`${partition}: batch of sequence ${entry.baseSequence} acknowledged before sequence ${state.entries[0]!.baseSequence}`)
    state.entries.shift()
    state.acked = incrementSequence(entry.baseSequence, entry.recordCount)
  }

  /** The broker answered `batch` with error `code` (or `NO_ANSWER`): what happens to it (see the module's rules). */
  failed (partition: string, batch: T, code: number): FailureVerdict {
    const { index, entry } = this.#entry(partition, batch)
    entry.error = code
    if (RETRIABLE_MAYBE_WRITTEN.has(code) || code === NO_ANSWER) {
      entry.status = 'resend'
      entry.maybeWritten = true
      return 'retry'
    }
    if (RETRIABLE_NOT_WRITTEN.has(code)) {
      entry.status = 'resend'
      return 'retry'
    }
    if (code === ProduceErrors.OUT_OF_ORDER_SEQUENCE_NUMBER || code === ProduceErrors.UNKNOWN_PRODUCER_ID) {
      entry.status = 'resend'
      if (index > 0) return 'retry'
      // KIP-360 (KAFKA-5793): the first unacknowledged batch does not continue what the broker holds; it was not written.
      entry.maybeWritten = false
      this.#bumpPending = true
      return 'bump'
    }
    // Anything else fails the batch; the batches after it would leave a gap in the sequences, so the epoch is bumped too.
    entry.status = 'failed'
    this.#bumpPending = true
    return 'fatal'
  }

  /** Whether no batch of any partition awaits an answer: a bump may go ahead. */
  get quiet (): boolean {
    for (const state of this.#partitions.values()) {
      if (state.entries.some(entry => entry.status === 'sent')) return false
    }
    return true
  }

  /**
   * The batches of `partition` to send again, in sequence order, now in flight: those waiting for a resend
   * once none of the partition's requests awaits an answer, and no bump is pending (Invariant D).
   */
  resends (partition: string): Array<{ batch: T, fields: SequenceFields }> {
    const entries = this.#partitions.get(partition)?.entries ?? []
    if (this.#bumpPending || entries.some(entry => entry.status === 'sent')) return []
    return entries.filter(entry => entry.status === 'resend').map(entry => {
      entry.status = 'sent'
      return { batch: entry.batch, fields: fieldsOf(entry) }
    })
  }

  /** Partitions with batches waiting to be resent. */
  get resendPartitions (): string[] {
    return [...this.#partitions].filter(([, state]) => state.entries.some(entry => entry.status === 'resend')).map(([partition]) => partition)
  }

  /**
   * KIP-360 (KAFKA-5793): InitProducerId, sent with the current id and epoch once `quiet`, answered
   * `producerId` and `epoch` (a bumped epoch, or a new id at epoch 0 for a producer without a transactional
   * id). Every partition's sequences start again at 0; its batches never written get new sequences from 0
   * and wait for a resend. From the first batch that failed or may have been written (Invariant C), a
   * partition's batches are given up, in order.
   */
  bumped (producerId: bigint, epoch: number): BumpResult<T> {
    if (!this.quiet) throw new Error('epoch bumped with batches in flight')
    const unresolved: Array<GivenUp<T>> = []
    this.#producerId = producerId
    this.#epoch = epoch
    this.#bumpPending = false
    for (const [partition, state] of this.#partitions) {
      const cut = state.entries.findIndex(entry => entry.status === 'failed' || entry.maybeWritten)
      if (cut >= 0) {
        for (const entry of state.entries.splice(cut)) unresolved.push({ batch: entry.batch, error: entry.error, maybeWritten: entry.maybeWritten })
      }
      state.acked = 0
      let sequence = 0
      for (const entry of state.entries) {
        entry.baseSequence = sequence
        entry.producerId = producerId
        entry.epoch = epoch
        entry.status = 'resend'
        sequence = incrementSequence(sequence, entry.recordCount)
      }
      if (state.entries.length === 0) this.#partitions.delete(partition)
    }
    return { unresolved }
  }

  /** Checks invariants A to C on the current state (D holds by `canSend` and `resends`); throws naming the first broken one. */
  checkInvariants (): void {
    for (const [partition, state] of this.#partitions) {
      if (state.entries.length > MAX_IN_FLIGHT_PER_PARTITION) throw new Error(`invariant B: ${partition} has ${state.entries.length} batches in flight`)
      let expected = state.acked
      for (const entry of state.entries) {
        if (entry.baseSequence !== expected) throw new Error(`invariant A/B: ${partition} batch at sequence ${entry.baseSequence}, expected ${expected}`)
        expected = incrementSequence(expected, entry.recordCount)
        if (entry.status === 'sent' && (entry.producerId !== this.#producerId || entry.epoch !== this.#epoch)) {
          throw new Error(`invariant C: ${partition} batch at sequence ${entry.baseSequence} in flight under epoch ${entry.epoch}, the producer's is ${this.#epoch}`)
        }
        if (entry.maybeWritten && (entry.producerId !== this.#producerId || entry.epoch !== this.#epoch)) {
          throw new Error(`invariant C: ${partition} batch at sequence ${entry.baseSequence} may be written under another epoch`)
        }
      }
    }
  }
}

function fieldsOf (entry: Entry<unknown>): SequenceFields {
  return { producerId: entry.producerId, producerEpoch: entry.epoch, baseSequence: entry.baseSequence }
}
