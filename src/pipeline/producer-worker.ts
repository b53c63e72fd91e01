import { ErrorCodes, errorLabel, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import type { BoundedQueue } from './bounded-queue.js'
import { recordCount, type MirrorBatch } from './mirror-batch.js'
import type { DeepPathReason } from './forwarded-batch.js'
import { PartialSendError } from './partial-send-error.js'
import { partitionKey } from './partition-key.js'
import type { AckSegment, PartitionAck, PartitionWrite, RecordSink } from './ports.js'
import { TransactionFailedError } from './transaction-failed-error.js'

/** What a producer lane tells the flow about each batch it finished and each request it made. */
export interface WorkerListener {
  /**
   * The first `recordsAcked` records of `batch` (normally all) are on the target; `segments` say
   * where (one segment unless the send was split).
   */
  acknowledged: (batch: MirrorBatch, segments: readonly AckSegment[], ackTimeMs: number, recordsAcked: number) => void
  /** A record was refused for good and the flow keeps going (abort.on.send.failure=false): it is skipped. */
  skipped: (batch: MirrorBatch, recordIndex: number, error: MirrorError) => void
  produceRequest: (durationSeconds: number, ok: boolean) => void
  retry: (operation: string, error: unknown) => void
  /** A forwarded batch takes the deep path after all (the target refused it as it was). */
  routed?: (batch: MirrorBatch, reason: DeepPathReason) => void
}

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

export interface ProducerWorkerOptions {
  readonly lane: number
  /** Upper bound of one produce request in record bytes. */
  readonly maxRequestBytes: number
  readonly requestTimeoutMs: number
  readonly abortOnSendFailure: boolean
  /** Aborting it stops retrying (forced shutdown). */
  readonly signal: AbortSignal
  /** Exactly-once: writes run inside the lane's transactions (`ExactlyOnceLanes`). */
  readonly transaction?: LaneTransaction
}

/** The send span of one batch (tracing on). */
type SendSpan = ReturnType<NonNullable<MirrorBatch['span']>['sendSpan']>

/** Oversized or malformed data: splitting the request finds the record to blame. */
function isPermanent (error: unknown): boolean {
  return error instanceof MirrorError && !error.retriable && !(error instanceof TransactionFailedError)
}

/**
 * One producer lane: takes batches of its partitions from the queue in order, writes them with one
 * request at a time (so order per partition holds across retries), retries retriable failures with
 * backoff for as long as it takes, and reports acknowledgements. A permanent failure of a request
 * is narrowed down by resending piece by piece, so the error names the exact source record.
 */
export class ProducerWorker {
  readonly #queue: BoundedQueue<MirrorBatch>
  readonly #sink: RecordSink
  readonly #options: ProducerWorkerOptions
  readonly #listener: WorkerListener
  readonly #logger: Logger
  /** Decoded copies of forwarded batches the target refused, with the batch each stands for. */
  readonly #originals = new WeakMap<MirrorBatch, MirrorBatch>()

  constructor (queue: BoundedQueue<MirrorBatch>, sink: RecordSink, options: ProducerWorkerOptions, listener: WorkerListener, logger: Logger) {
    this.#queue = queue
    this.#sink = sink
    this.#options = options
    this.#listener = listener
    this.#logger = logger
  }

  /** Runs until the queue is closed and this lane is empty; rejects on a send failure that stops the mirror. */
  async run (): Promise<void> {
    const transaction = this.#options.transaction
    for (;;) {
      const batches = transaction === undefined
        ? await this.#queue.take(this.#options.lane, this.#options.maxRequestBytes)
        : await this.#queue.takeWithin(this.#options.lane, this.#options.maxRequestBytes, transaction.idleCommitMs)
      if (batches === undefined || batches.length === 0) {
        // Nothing more to write for now (or ever): what the open transaction holds is committed.
        await transaction?.idle()
        if (batches === undefined) continue
        return
      }
      if (transaction === undefined) {
        try {
          await this.#write(batches)
        } finally {
          for (const batch of batches) this.#queue.release(batch)
        }
        continue
      }
      try {
        await transaction.write(batches, owned => this.#write(owned))
      } finally {
        // The lane gives their bytes back once their transaction ended (`LaneTransaction.write`).
        for (const batch of batches) this.#queue.releaseRecords(batch)
      }
    }
  }

  /**
   * Writes `batches` in requests that hold, per partition, either decoded records or one forwarded
   * batch (the broker takes one record batch per partition per request): a request per round of
   * `requestRounds`, one after the other, so each partition's order holds.
   */
  async #write (batches: readonly MirrorBatch[]): Promise<void> {
    if (!batches.some(batch => batch.forwarded !== undefined)) return this.#writeRequest(batches)
    for (const round of requestRounds(batches)) await this.#writeRequest(round)
  }

  async #writeRequest (batches: readonly MirrorBatch[]): Promise<void> {
    const sends = batches[0]?.span === undefined ? undefined : batches.map(b => b.span?.sendSpan())
    // Target partitions the target wrote, with the offset their first record got: filled as answers come.
    const written = new Map<string, bigint>()
    try {
      await this.#sendWithRetry(batches.map(b => partitionWrite(b)), written, sends)
      this.#acknowledgeWritten(batches, written, sends)
    } catch (error) {
      for (const send of sends ?? []) send?.end(error)
      // The transaction is gone, and with it what it wrote: nothing is acknowledged.
      if (error instanceof TransactionFailedError) throw error
      // What the target did write is acknowledged whatever happens next: it must not be sent again.
      const unwritten = this.#acknowledgeWritten(batches, written, undefined)
      if (!isPermanent(error)) throw error
      if (unwritten.some(batch => batch.forwarded !== undefined)) {
        // The target refused a batch as it was (too large for the topic, for example): its records take the deep path.
        this.#logger.debug('the target refused a forwarded batch; writing its records decoded', { error })
        await this.#write(await Promise.all(unwritten.map(batch => this.#decoded(batch))))
        return
      }
      if (unwritten.length === 1 && unwritten[0]?.records.length === 1) {
        unwritten[0].span?.end(error)
        this.#fail(unwritten[0], 0, error as MirrorError)
        return
      }
      this.#logger.debug('a produce request was refused; resending record by record to find the cause', { error })
      for (const batch of unwritten) await this.#writeRecordByRecord(batch)
    }
  }

  /** Reports every batch whose target partition is in `written`; returns the others, in order. */
  #acknowledgeWritten (batches: readonly MirrorBatch[], written: ReadonlyMap<string, bigint>, sends: ReadonlyArray<SendSpan | undefined> | undefined): MirrorBatch[] {
    const now = Date.now()
    const next = new Map<string, bigint>()
    const unwritten: MirrorBatch[] = []
    for (const [index, batch] of batches.entries()) {
      const key = partitionKey(batch.targetTopic, batch.partition)
      const base = next.get(key) ?? written.get(key)
      if (base === undefined) {
        unwritten.push(batch)
        continue
      }
      const count = recordCount(batch)
      next.set(key, base + BigInt(count))
      this.#listener.acknowledged(this.#original(batch), [{ from: 0, count, targetBaseOffset: base }], now, count)
      const send = sends?.[index]
      send?.setTargetOffset(base)
      send?.end()
      batch.span?.end()
    }
    return unwritten
  }

  async #writeRecordByRecord (batch: MirrorBatch): Promise<void> {
    const segments: AckSegment[] = []
    for (let i = 0; i < batch.records.length; i++) {
      try {
        const written = new Map<string, bigint>()
        await this.#sendWithRetry([{ topic: batch.targetTopic, partition: batch.partition, records: [batch.records[i] as MirrorBatch['records'][number]] }], written)
        const base = written.get(partitionKey(batch.targetTopic, batch.partition))
        if (base === undefined) throw new MirrorError(ErrorCodes.INTERNAL, `no acknowledgement for ${batch.targetTopic}-${batch.partition}`)
        const last = segments[segments.length - 1]
        if (last !== undefined && last.from + last.count === i && last.targetBaseOffset + BigInt(last.count) === base) {
          segments[segments.length - 1] = { ...last, count: last.count + 1 }
        } else {
          segments.push({ from: i, count: 1, targetBaseOffset: base })
        }
      } catch (error) {
        if (!isPermanent(error)) throw error
        // Records before this one are on the target; report them before stopping or skipping.
        if (i > 0 && this.#options.abortOnSendFailure) this.#listener.acknowledged(this.#original(batch), segments, Date.now(), i)
        if (this.#options.abortOnSendFailure) batch.span?.end(error)
        this.#fail(batch, i, error as MirrorError)
        if (this.#options.abortOnSendFailure) return
      }
    }
    this.#listener.acknowledged(this.#original(batch), segments, Date.now(), batch.records.length)
    batch.span?.end()
  }

  /** `batch` with its forwarded records decoded; acknowledgements of the copy are reported for `batch`. */
  async #decoded (batch: MirrorBatch): Promise<MirrorBatch> {
    const forwarded = batch.forwarded
    if (forwarded === undefined) return batch
    this.#listener.routed?.(batch, 'refused_by_target')
    const copy: MirrorBatch = { ...batch, forwarded: undefined, records: await forwarded.decode() }
    this.#originals.set(copy, batch)
    return copy
  }

  #original (batch: MirrorBatch): MirrorBatch {
    return this.#originals.get(batch) ?? batch
  }

  #fail (batch: MirrorBatch, index: number, error: MirrorError): void {
    const offset = batch.records[index]?.offset ?? '?'
    const failure = new MirrorError(ErrorCodes.SEND_FAILED,
      `cannot write ${batch.sourceTopic} partition ${batch.partition} offset ${offset} to ${batch.targetTopic}: ${error.kafkaCode ?? error.code} (${error.message})`,
      { cause: error, ...(error.kafkaCode === undefined ? {} : { kafkaCode: error.kafkaCode }) })
    this.#listener.skipped(this.#original(batch), index, failure)
    if (this.#options.abortOnSendFailure) throw failure
  }

  /**
   * Sends `writes` until every target partition is written, recording each in `written` as the
   * target answers. A retry sends only the partitions not written yet, through the same producer,
   * so its sequence numbers let the broker drop a copy it already has (a request that timed out
   * after the broker wrote it).
   */
  async #sendWithRetry (writes: readonly PartitionWrite[], written: Map<string, bigint>, sends?: ReadonlyArray<SendSpan | undefined>): Promise<void> {
    const record = (acks: readonly PartitionAck[]): void => { for (const ack of acks) written.set(partitionKey(ack.topic, ack.partition), ack.baseOffset) }
    await retry(async () => {
      const pending = writes.filter(write => !written.has(partitionKey(write.topic, write.partition)))
      if (pending.length === 0) return
      const started = performance.now()
      try {
        record(await this.#sink.send(pending, this.#options.requestTimeoutMs))
        this.#listener.produceRequest((performance.now() - started) / 1000, true)
      } catch (error) {
        this.#listener.produceRequest((performance.now() - started) / 1000, false)
        if (error instanceof PartialSendError) record(error.written)
        throw error
      }
    }, {
      signal: this.#options.signal,
      initialBackoffMs: 200,
      maxBackoffMs: 5_000,
      onRetry: (error, attempt, waitMs) => {
        this.#listener.retry('produce', error)
        if (sends !== undefined) for (const send of sends) send?.retry({ operation: 'produce', errorCode: errorLabel(error), attempt, backoffMs: waitMs })
        if (attempt === 1 || attempt % 10 === 0) this.#logger.warn('writing to the target failed; retrying', { attempt, backoffMs: waitMs, code: errorLabel(error), error })
      },
    })
  }

}

/** What `batch` asks of the target partition it goes to. */
function partitionWrite (batch: MirrorBatch): PartitionWrite {
  const write = { topic: batch.targetTopic, partition: batch.partition, records: batch.records }
  return batch.forwarded === undefined ? write : { ...write, forwarded: batch.forwarded }
}

/**
 * `batches` (one lane's, in queue order) cut into requests: a partition's decoded batches share
 * a request, and so do its consecutive mergeable forwarded batches; any other forwarded batch has
 * a request of its own for its partition. Round `k` holds the `k`-th unit of every partition, so
 * a partition's units keep their order across rounds.
 */
export function requestRounds (batches: readonly MirrorBatch[]): MirrorBatch[][] {
  const rounds: MirrorBatch[][] = []
  const last = new Map<string, { round: number, kind: 'decoded' | 'mergeable' | 'alone' }>()
  for (const batch of batches) {
    const key = partitionKey(batch.targetTopic, batch.partition)
    const kind = batch.forwarded === undefined ? 'decoded' : batch.forwarded.mergeable ? 'mergeable' : 'alone'
    const previous = last.get(key)
    const round = previous === undefined ? 0 : previous.kind === kind && kind !== 'alone' ? previous.round : previous.round + 1
    last.set(key, { round, kind })
    ;(rounds[round] ??= []).push(batch)
  }
  return rounds
}
