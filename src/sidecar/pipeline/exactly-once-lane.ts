import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { retry } from '../../shared/retry.js'
import { settleWithin } from '../../shared/deadline.js'
import { SerialQueue } from '../../shared/serial-queue.js'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '../../shared/logger.js'
import type { MirrorBatch } from '../../ports/mirror-batch.js'
import { parsePartitionKey, partitionKey } from '../../shared/partition-key.js'
import type { PartitionProgress } from './partition-progress.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type {
  AckSegment,
  CommitOffset,
  FetchControl,
  PositionStore,
  SourcePosition,
  TransactionAck,
  TransactionalSink,
  TransactionRecord,
} from '../../ports/ports.js'
import type { WorkerListener } from './producer-worker.js'
import { TransactionFailedError } from '../../ports/transaction-failed-error.js'
import type { DeepPathReason } from '../../ports/forwarded-batch.js'

export interface LaneOptions {
  readonly positions: PositionStore
  readonly progress: PartitionProgress
  /** Longest a lane's transaction stays open. */
  readonly commitIntervalMs: number
  /** How often a fetch waiting for its lane heartbeats the group. */
  readonly heartbeatIntervalMs: number
  readonly labels: FlowLabels
  readonly observer: PipelineObserver
  readonly logger: Logger
  /** Ends retries of acquisitions (the flow stops). */
  readonly signal: AbortSignal
  /**
   * Backoff between attempts to take a lane, in ms; default 200 doubling to 5000. A retriable
   * failure (the target unreachable, a leader moving) is retried for as long as it lasts, as a
   * write is: only a permanent one stops the flow.
   */
  readonly takeBackoffMs?: { readonly initial: number, readonly max: number }
  /** A lane that cannot be taken stops the flow: its partitions would not be mirrored at all. */
  readonly onFatal: (error: Error) => void
  /** Moves the source's fetch position of owned partitions (`RecordSource.seek`): a lane taken again goes back to its positions. */
  readonly seek: (offsets: readonly CommitOffset[]) => void
  /** The records describing a transaction's acknowledgements (its offset syncs), written in it: `AckListener.transactionRecords`. */
  readonly describe?: (acks: readonly TransactionAck[], positions: readonly SourcePosition[]) => TransactionRecord[]
  /** Where acknowledgements go once their transaction committed (the flow's `AckRecorder`). */
  readonly acks: WorkerListener
  /** The queue's bytes the lanes keep for the batches of their open transactions. */
  readonly held: HeldBytes
}

/** What is a lane's own: its place, its sink, and when it commits early. */
export interface LaneParts {
  readonly index: number
  readonly sink: TransactionalSink
  /** The acquisition each batch was admitted under, shared by the lanes of a flow (`ExactlyOnceLanes.stamp`). */
  readonly tickets: WeakMap<MirrorBatch, number>
  /** The open transaction's bytes at which the lane commits at once: its share of the queue's bytes. */
  readonly commitAtBytes: number
}

/**
 * Transactions a lane may lose in a row, each followed by taking the lane again, before the flow
 * stops: a lane whose every transaction is aborted (a transaction timeout shorter than a commit
 * takes, say) would otherwise copy the same records for ever.
 */
export const MAX_RETAKES = 10

/** What a producer lane's worker runs its writes through (exactly-once). */
export interface LaneTransaction {
  /** Longest the worker waits for batches before it commits what it wrote. */
  readonly idleCommitMs: number
  /**
   * Writes the batches taken under the lane's current acquisition (`write`), then commits when the
   * transaction is old enough or holds its share of the queue's bytes. The queue's bytes of every
   * batch passed in are given back by the lane (`releaseBytes`): at once for a batch it does not
   * write, after the transaction ended for the others; the worker gives back their record counts.
   */
  write: (batches: readonly MirrorBatch[], write: (batches: readonly MirrorBatch[]) => Promise<void>) => Promise<void>
  /** The lane has nothing to write now: commits what is open. */
  idle: () => Promise<void>
}

/** The queue's bytes a lane keeps for the batches of its open transaction (`BoundedQueue`). */
export interface HeldBytes {
  readonly capacityBytes: number
  releaseBytes: (batch: MirrorBatch) => void
}

interface Acknowledgement {
  readonly batch: MirrorBatch
  readonly segments: readonly AckSegment[]
  readonly ackTimeMs: number
  readonly recordsAcked: number
}

/**
 * One producer lane of an exactly-once flow (see `ExactlyOnceLanes`): takes and gives up the lane's
 * transactional ids, holds acknowledgements until the transaction holding them committed, and
 * commits by interval, by size, or when idle. Built complete: its sink, where acknowledgements go,
 * the queue's bytes it keeps and when it commits early are given to its constructor and never change.
 *
 * Invariants (`checkInvariants` asserts them):
 * - A: the lane has partitions (their positions read under the current ticket) only while its sink
 *   holds the lane's transactional id: the id is taken before the positions are read, and the
 *   partitions are dropped before the id is given up or taken again.
 * - B: records written are settled before the id is given up: while the sink does not hold the id
 *   the lane has no open transaction (no batch written, no acknowledgement held) and no commit left
 *   to settle (`#release` and `#retake` wait for `#commits` first). Each transaction committed,
 *   was aborted, or (a write that failed part way, a commit that failed while giving up) was
 *   dropped here unacknowledged, left open for the id's next holder to abort: InitProducerId aborts
 *   the open transaction of its transactional id (KIP-98).
 * - C: the open transaction's bytes are the sum of the bytes of the batches it wrote.
 * - D: the open transaction's bookkeeping goes together: it has an opening time exactly when it
 *   wrote a batch, and a position only for an acknowledgement it holds.
 */
export class Lane implements LaneTransaction {
  readonly index: number
  readonly #sink: TransactionalSink
  readonly #options: LaneOptions
  readonly #tickets: WeakMap<MirrorBatch, number>
  readonly idleCommitMs: number
  /** Where acknowledgements go once their transaction committed (the flow's `AckRecorder`). */
  readonly #inner: WorkerListener
  readonly #held: HeldBytes
  readonly #commitAtBytes: number
  /** The worker's listener: acknowledgements are held (with the position they reach) until the transaction commits. */
  readonly listener: WorkerListener
  /** Acquisition count: batches stamped with an older one belong to a transaction that is gone. */
  #ticket = 0
  #owned = false
  /** Partitions of the bucket with their positions read under the current ticket. */
  #partitions = new Map<string, { topic: string, partition: number }>()
  /** Settles when the lane's last acquisition step ended: true when the lane is usable. */
  #ready: Promise<boolean> = Promise.resolve(false)
  /** Acquisition, writes, commits and release of this lane, one after the other. */
  readonly #steps = new SerialQueue()
  #pending: Acknowledgement[] = []
  /** Batches the open transaction wrote (or tried to), whose queue bytes the lane gives back when it ends. */
  #written: MirrorBatch[] = []
  #writtenBytes = 0
  /** Commits asked for and not settled yet, one after the other: acknowledgements go on in transaction order. */
  readonly #commits = new SerialQueue()
  /** A commit that failed while the lane went on writing: the next write or idle reports it. */
  #commitFailure: TransactionFailedError | undefined
  /** A write of the open transaction failed (the flow stops): it is left to be aborted, never committed. */
  #incomplete = false
  readonly #positions = new Map<string, SourcePosition>()
  #openedAtMs: number | undefined
  /** Times the lane was taken again since its last committed transaction (`#retake`). */
  #retakes = 0
  /** Commits asked for whose outcome is not settled yet (Invariant B). */
  #commitsUnsettled = 0
  /** True while the sink holds the lane's transactional id. */
  #sinkHeld = false

  constructor (parts: LaneParts, options: LaneOptions) {
    this.index = parts.index
    this.#sink = parts.sink
    this.#tickets = parts.tickets
    this.#commitAtBytes = parts.commitAtBytes
    this.#options = options
    this.#inner = options.acks
    this.#held = options.held
    this.idleCommitMs = options.commitIntervalMs
    this.listener = this.#listener()
  }

  /** True while the partitions of this lane's bucket are this process's (`assign`). */
  get owned (): boolean { return this.#owned }

  /**
   * Throws an Error naming the first invariant (A-D in the class comment) the state breaks. For
   * tests: they call it after every step.
   */
  checkInvariants (): void {
    const at = `lane ${this.index}`
    if (this.#partitions.size > 0 && !this.#sinkHeld) {
      throw new Error(`Invariant A broken: ${at} has ${this.#partitions.size} partitions without its transactional id`)
    }
    if (!this.#sinkHeld && (this.#written.length > 0 || this.#pending.length > 0 || this.#commitsUnsettled > 0)) {
      throw new Error(
        `Invariant B broken: ${at} gave up its transactional id with ${this.#written.length} batches written, ` +
          `${this.#pending.length} acknowledgements held and ${this.#commitsUnsettled} commits unsettled`
      )
    }
    const bytes = this.#written.reduce((sum, batch) => sum + batch.bytes, 0)
    if (bytes !== this.#writtenBytes) throw new Error(`Invariant C broken: ${at} counts ${this.#writtenBytes} bytes written, its batches hold ${bytes}`)
    if ((this.#openedAtMs !== undefined) !== (this.#written.length > 0) || (this.#positions.size > 0 && this.#pending.length === 0)) {
      throw new Error(`Invariant D broken: ${at} has an opening time, batches written, positions and acknowledgements out of step`)
    }
  }

  assign (partitions: ReadonlyMap<string, { topic: string, partition: number }> | undefined): Promise<unknown> {
    if (partitions === undefined || partitions.size === 0) {
      if (!this.#owned) return this.#steps.idle
      this.#owned = false
      this.#ticket++
      this.#ready = Promise.resolve(false)
      return this.#steps.run(() => this.#release())
    }
    const added = [...partitions].filter(([key]) => !this.#partitions.has(key))
    if (this.#owned && added.length === 0) return this.#steps.idle
    if (!this.#owned) {
      this.#owned = true
      this.#ticket++
      this.#partitions = new Map()
    }
    const ticket = this.#ticket
    this.#ready = this.#steps.run(() => this.#acquire(ticket, new Map(added)))
    return this.#ready
  }

  /**
   * Takes the lane's transactional ids (unless held) and reads the positions of `partitions`; the
   * source fetches each partition from its position (a seek: the group offset may be behind it, or,
   * past offsets with nothing to copy, ahead of it). A partition with no position is fetched from
   * the group offset, or with `rewindTo` (the lane is taken again, `#retake`) from its offset
   * there: what this process acknowledged.
   */
  async #acquire (
    ticket: number,
    partitions: ReadonlyMap<string, { topic: string, partition: number }>,
    rewindTo?: ReadonlyMap<string, bigint>
  ): Promise<boolean> {
    const { progress, positions, logger, signal } = this.#options
    try {
      await retry(
        async () => {
          if (ticket !== this.#ticket) return
          // Invariant A: the id is held before any partition's position is read.
          if (!this.#sinkHeld) {
            await this.#sink.acquire()
            this.#sinkHeld = true
          }
          const read = await positions.read([...partitions.keys()])
          if (ticket !== this.#ticket) return
          const seeks: CommitOffset[] = []
          for (const [key, { topic, partition }] of partitions) {
            const position = read.get(key) ?? rewindTo?.get(key)
            progress.resume(topic, partition, position)
            if (position !== undefined) seeks.push({ topic, partition, offset: position })
            this.#partitions.set(key, { topic, partition })
          }
          if (seeks.length > 0) this.#options.seek(seeks)
        },
        {
          signal,
          initialBackoffMs: this.#options.takeBackoffMs?.initial ?? 200,
          maxBackoffMs: this.#options.takeBackoffMs?.max ?? 5_000,
          onRetry: (error, attempt) => {
            if (attempt === 1 || attempt % 10 === 0) logger.warn('taking a producer lane failed; retrying', { lane: this.index, attempt, error })
          },
        }
      )
    } catch (error) {
      if (ticket === this.#ticket && !signal.aborted) {
        const cause = error as Error
        this.#options.onFatal(
          new MirrorError(
            ErrorCodes.TRANSACTION_FAILED,
            `cannot take producer lane ${this.index} (its transactional id, or the positions on the target): ${cause.message}`,
            { cause, ...(error instanceof MirrorError && error.kafkaCode !== undefined ? { kafkaCode: error.kafkaCode } : {}) }
          )
        )
      }
      logger.debug('taking a producer lane ended without it', { lane: this.index, error })
      return false
    }
    if (ticket === this.#ticket) logger.info('producer lane taken (exactly-once)', { lane: this.index, partitions: this.#partitions.size })
    return ticket === this.#ticket
  }

  async #release (): Promise<void> {
    // Still ours until someone fences us: commit what was written, else it is aborted by the next owner.
    if (this.#pending.length > 0 || this.#written.length > 0) {
      await this.#commit(false).catch(error => {
        this.#options.logger.warn('committing the open transaction of a producer lane given up failed; its next owner aborts it', { lane: this.index, error })
      })
    }
    // Invariant B: every commit asked for settled, and what is still open dropped, before the id goes.
    await this.#commits.idle
    this.#commitFailure = undefined
    this.#dropOpen()
    for (const { topic, partition } of this.#partitions.values()) this.#options.progress.resume(topic, partition, undefined)
    // Invariant A: the partitions go before the id.
    this.#partitions = new Map()
    if (this.#sinkHeld) {
      this.#sinkHeld = false
      await this.#sink.release().catch(error => this.#options.logger.warn('giving up a producer lane did not end cleanly', { lane: this.index, error }))
    }
  }

  async admit (key: string, control: FetchControl): Promise<number | undefined> {
    for (;;) {
      if (!this.#owned || !control.isActive()) return undefined
      const ticket = this.#ticket
      const ready = this.#ready
      if (!(await settleWithin(ready, this.#options.heartbeatIntervalMs))) {
        await control.heartbeat()
        continue
      }
      if (ticket !== this.#ticket) continue
      if (!(await ready)) return undefined
      // Fetched before the lane was taken again and its partitions sent back (a seek): fetched again.
      if (!control.isActive()) return undefined
      if (this.#partitions.has(key)) return ticket
      // A partition of this bucket fetched before its assignment was seen: read its position too.
      this.#ready = this.#steps.run(() => this.#acquire(ticket, new Map([[key, parsePartitionKey(key)]])))
    }
  }

  /**
   * True unless the batch continues `from` past what this process handed over for the partition:
   * records in between would never be copied, yet the next position would pass them. A guard: it
   * takes a fetch position that neither a seek nor a new assignment brought back to the position.
   * The partition is then fetched again from what was handed over, and the batch refused.
   */
  contiguous (topic: string, partition: number, from: bigint | undefined, skip = false): boolean {
    if (from === undefined) return true
    const next = this.#options.progress.admittedNext(topic, partition)
    if (next === undefined || from <= next) return true
    // A skip of a batch fetched before a seek back is expected (kafkajs reports those without
    // asking whether the partition was sought): only a batch of records past the gap is news.
    const log = skip ? this.#options.logger.debug : this.#options.logger.warn
    log.call(
      this.#options.logger,
      skip
        ? 'a skip from past what was handed over was ignored; fetching the partition again from there'
        : 'the source fetched a partition from past what was handed over; fetching it again from there',
      { lane: this.index, topic, partition, fetchedFrom: from.toString(), handedOver: next.toString() }
    )
    this.#options.seek([{ topic, partition, offset: next }])
    return false
  }

  #listener (): WorkerListener {
    return {
      acknowledged: (batch, segments, ackTimeMs, recordsAcked) => {
        this.#pending.push({ batch, segments, ackTimeMs, recordsAcked })
        const key = partitionKey(batch.sourceTopic, batch.partition)
        const offset = positionAfter(batch, recordsAcked)
        const known = this.#positions.get(key)
        if (known === undefined || offset > known.offset) this.#positions.set(key, { topic: batch.sourceTopic, partition: batch.partition, offset })
      },
      skipped: (batch: MirrorBatch, index: number, error: MirrorError) => this.#inner.skipped(batch, index, error),
      produceRequest: (seconds, ok) => this.#inner.produceRequest(seconds, ok),
      retry: (operation, error) => this.#inner.retry(operation, error),
      routed: (batch: MirrorBatch, reason: DeepPathReason) => this.#inner.routed?.(batch, reason),
    }
  }

  async write (batches: readonly MirrorBatch[], write: (batches: readonly MirrorBatch[]) => Promise<void>): Promise<void> {
    await this.#steps.run(async () => {
      // The lane is taken again: these batches belong to the transaction that is gone (their bytes go back below).
      if (this.#commitFailure !== undefined) this.#failed(this.#takeCommitFailure())
      const current: MirrorBatch[] = []
      for (const batch of batches) {
        if (this.#owned && this.#tickets.get(batch) === this.#ticket) current.push(batch)
        else this.#held.releaseBytes(batch)
      }
      if (current.length === 0) return
      this.#openedAtMs ??= Date.now()
      // Invariants C and D: the batches, their bytes and the opening time go together.
      for (const batch of current) {
        this.#written.push(batch)
        this.#writtenBytes += batch.bytes
      }
      // The write that closes the transaction carries its positions (where these batches take their
      // partitions, and any the transaction reached before) in its own requests: the commit then needs
      // no request of its own before EndTxn.
      const closing = Date.now() - this.#openedAtMs >= this.#options.commitIntervalMs || this.#writtenBytes >= this.#commitAtBytes
      if (closing) {
        const reached = new Map(this.#positions)
        for (const batch of current) {
          const key = partitionKey(batch.sourceTopic, batch.partition)
          const known = reached.get(key)
          if (known === undefined || batch.nextOffset > known.offset) {
            reached.set(key, { topic: batch.sourceTopic, partition: batch.partition, offset: batch.nextOffset })
          }
        }
        this.#sink.stagePositions([...reached.values()])
      }
      try {
        await write(current)
      } catch (error) {
        if (error instanceof TransactionFailedError) return this.#failed(error)
        // Not all of it was written, but its positions may have been: this transaction must never commit.
        this.#incomplete = true
        throw error
      }
      if (closing) await this.#commit(true)
    })
  }

  /** Nothing to write now: commits what is open, and waits until every commit asked for settled. */
  async idle (): Promise<void> {
    await this.#steps.run(async () => {
      if (this.#pending.length > 0 || this.#written.length > 0) await this.#commit(true)
      await this.#commits.idle
      if (this.#commitFailure !== undefined) this.#failed(this.#takeCommitFailure())
    })
  }

  /**
   * Asks for the commit of the open transaction with its positions, and goes on: the sink writes
   * the next transaction meanwhile. The held acknowledgements (and the queue bytes) are passed on
   * once it committed, after those of the transactions before it.
   */
  async #commit (failOnError: boolean): Promise<void> {
    const { observer, labels, logger } = this.#options
    if (this.#incomplete) {
      // Left open: the next holder of the lane (this process after a restart, or another) aborts it.
      if (this.#pending.length > 0 || this.#written.length > 0) observer.transactionEnded?.(labels, 'aborted', 0)
      this.#dropOpen()
      return
    }
    if (this.#pending.length === 0) {
      this.#dropOpen()
      return
    }
    const started = performance.now()
    const acks = this.#pending
    const written = this.#written
    const positions = [...this.#positions.values()]
    this.#pending = []
    this.#written = []
    this.#writtenBytes = 0
    this.#positions.clear()
    this.#openedAtMs = undefined
    const giveBack = (): void => {
      for (const batch of written) this.#held.releaseBytes(batch)
    }
    const aborted = (error: unknown): TransactionFailedError => {
      giveBack()
      observer.transactionEnded?.(labels, 'aborted', (performance.now() - started) / 1000)
      return error instanceof TransactionFailedError
        ? error
        : new TransactionFailedError(`committing the transaction of lane ${this.index} failed: ${(error as Error).message}`, { cause: error })
    }
    let committed: Promise<void>
    try {
      // The offset syncs of what the transaction holds go in it: durable exactly when its records are.
      const records = this.#options.describe?.(acks, positions) ?? []
      ;({ committed } = await this.#sink.commitTransaction(positions, records))
    } catch (error) {
      const failure = aborted(error)
      if (failOnError) this.#failed(failure)
      return
    }
    this.#commitsUnsettled++
    void this.#commits.run(async () => {
      try {
        await committed
      } catch (error) {
        this.#commitsUnsettled--
        const failure = aborted(error)
        if (failOnError && this.#owned) this.#commitFailure ??= failure
        else {
          logger.info('the transaction of a producer lane given up was aborted; its new owner copies those records', {
            lane: this.index,
            code: failure.kafkaCode,
          })
        }
        return
      }
      this.#commitsUnsettled--
      observer.transactionEnded?.(labels, 'committed', (performance.now() - started) / 1000)
      this.#retakes = 0
      // Acknowledged first, bytes given back after: a digest that reads a batch after its acknowledgement
      // keeps the batch's bytes counted through `heldUntil` (Invariant A of BoundedQueue).
      for (const ack of acks) this.#inner.acknowledged(ack.batch, ack.segments, ack.ackTimeMs, ack.recordsAcked)
      giveBack()
    }).catch((error: unknown) => {
      // Only an acknowledgement listener can throw here (a failed commit is handled above); the commits after this one still run.
      logger.error('an acknowledgement listener failed on a committed transaction', { lane: this.index, error })
    })
  }

  #takeCommitFailure (): TransactionFailedError {
    const failure = this.#commitFailure as TransactionFailedError
    this.#commitFailure = undefined
    return failure
  }

  #dropOpen (): void {
    this.#incomplete = false
    this.#pending = []
    this.#positions.clear()
    this.#openedAtMs = undefined
    const written = this.#written
    this.#written = []
    this.#writtenBytes = 0
    for (const batch of written) this.#held.releaseBytes(batch)
  }

  /** The open transaction cannot commit: dropped when the lane was given up meanwhile, else the lane is taken again. */
  #failed (error: TransactionFailedError): void {
    const { observer, labels, logger } = this.#options
    if (this.#pending.length > 0 || this.#written.length > 0) observer.transactionEnded?.(labels, 'aborted', 0)
    this.#dropOpen()
    if (!this.#owned) {
      logger.info('the transaction of a producer lane given up was aborted; its new owner copies those records', { lane: this.index, code: error.kafkaCode })
      return
    }
    this.#retake(error)
  }

  /**
   * The open transaction of a lane this process still owns was aborted: another process took the
   * lane's transactional id in a rebalance this one has not heard of yet, or the transaction timed
   * out. The lane is taken again after a heartbeat interval (time for a stale owner to hear of the
   * rebalance and give the lane up; if this process is the stale one, its next assignment ends the
   * attempt), and its partitions go back to the positions the target holds. Nothing the aborted
   * transaction held was acknowledged: its records are written again, once, in a new transaction.
   */
  #retake (error: TransactionFailedError): void {
    const { progress, logger, signal, heartbeatIntervalMs } = this.#options
    const code = error.kafkaCode === undefined ? {} : { kafkaCode: error.kafkaCode }
    if (++this.#retakes > MAX_RETAKES) {
      throw new TransactionFailedError(
        `producer lane ${this.index} lost ${MAX_RETAKES} transactions in a row, none committed in between; the last: ${error.message}`,
        { cause: error, ...code }
      )
    }
    logger.warn('a transaction of a producer lane held here was aborted; taking the lane again from the positions on the target', {
      lane: this.index,
      code: error.kafkaCode,
      attempt: this.#retakes,
      error: error.message,
    })
    const ticket = ++this.#ticket
    const partitions = this.#partitions
    this.#partitions = new Map()
    const acknowledged = new Map<string, bigint>()
    for (const [key, { topic, partition }] of partitions) {
      const next = progress.acknowledgedNext(topic, partition)
      if (next !== undefined) acknowledged.set(key, next)
      progress.resume(topic, partition, undefined)
    }
    this.#ready = this.#steps.run(async () => {
      // Commits asked for before this one settle first: the positions read below include theirs (Invariant B).
      await this.#commits.idle
      // Failures of transactions that came after the aborted one: they are part of what is taken again.
      this.#commitFailure = undefined
      // Rejects only when the flow stops (the signal): the check below ends the retake then.
      await sleep(heartbeatIntervalMs, undefined, { signal }).catch(() => undefined)
      if (ticket !== this.#ticket || signal.aborted) return false
      // acquire() replaces the producers the other process fenced. Invariant A: the partitions went above.
      this.#sinkHeld = false
      return await this.#acquire(ticket, partitions, acknowledged)
    })
  }
}

/** The source offset after the first `recordsAcked` records of `batch` (its `nextOffset` when all). */
function positionAfter (batch: MirrorBatch, recordsAcked: number): bigint {
  if (batch.forwarded !== undefined) return batch.nextOffset
  const record = batch.records[recordsAcked]
  return record === undefined ? batch.nextOffset : BigInt(record.offset)
}
