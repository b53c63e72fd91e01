import { ErrorCodes, errorLabel, MirrorError } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { retry } from '../../shared/retry.js'
import { BATCH_HEADER_BYTES, encodedBytes, recordBytes, recordCount, type MirrorBatch } from '../../ports/mirror-batch.js'
import type { DeepPathReason } from '../../ports/forwarded-batch.js'
import { PartialSendError } from '../../ports/partial-send-error.js'
import { partitionKey } from '../../shared/partition-key.js'
import type { AckSegment, PartitionAck, PartitionWrite, RecordSink } from '../../ports/ports.js'
import { TransactionFailedError } from '../../ports/transaction-failed-error.js'

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
  /** `AckListener.heldUntil`: what still reads `batch` after its acknowledgement, or undefined. */
  heldUntil?: (batch: MirrorBatch) => Promise<void> | undefined
}

/**
 * How a producer lane takes its batches, writes them and gives their queue room back: what the
 * flow's `DeliveryMode` supplies (plain writes at least once; exactly-once, writes inside the
 * lane's transactions, with acknowledgements held until the commit).
 */
export interface LaneDelivery {
  /**
   * The lane's next batches, in queue order, within `maxBytes` (at least one): waits while there
   * are none; undefined when nothing came for a while (then `idle` runs); [] once the queue is
   * closed and the lane empty.
   */
  take: (maxBytes: number) => Promise<MirrorBatch[] | undefined>
  /** Writes `batches` through `write` (the worker's requests), in whatever unit of work the mode has. */
  write: (batches: readonly MirrorBatch[], write: (batches: readonly MirrorBatch[]) => Promise<void>) => Promise<void>
  /** `batches` taken by `take` are written or given up: their queue room goes back (or part of it, until a commit). */
  settled: (batches: readonly MirrorBatch[]) => void
  /** The lane has nothing to write now (or ever): what is open is finished. */
  idle: () => Promise<void>
}

export interface ProducerWorkerOptions {
  /**
   * Upper bound of one produce request in encoded bytes: the queue hands over batches up to this
   * many payload bytes, and the worker cuts them into requests by their encoded size.
   */
  readonly maxRequestBytes: number
  /**
   * The target topic's `max.message.bytes` where known: one partition's batch in a request stays
   * within it. Unknown (undefined, or no function): Kafka's default, 1048588, or `maxRequestBytes`
   * if larger. A batch the target refuses as too large is written in halves either way.
   */
  readonly maxMessageBytes?: (targetTopic: string) => number | undefined
  readonly requestTimeoutMs: number
  readonly abortOnSendFailure: boolean
  /** Aborting it stops retrying (forced shutdown). */
  readonly signal: AbortSignal
}

/** The send span of one batch (tracing on). */
type SendSpan = ReturnType<NonNullable<MirrorBatch['span']>['sendSpan']>

/** Kafka's default `max.message.bytes` (the broker's `message.max.bytes`). */
const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588
/** What the broker counts against `max.message.bytes` beyond the batch itself (offset and size). */
const LOG_OVERHEAD_BYTES = 12
/** Answers saying a partition's batch (or the request) is larger than the target takes. */
const TOO_LARGE: ReadonlySet<string> = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE'])

/** Oversized or malformed data: writing the request in halves finds the record to blame. */
function isPermanent (error: unknown): boolean {
  return error instanceof MirrorError && !error.retriable && !(error instanceof TransactionFailedError)
}

/**
 * One producer lane: takes batches of its partitions from the queue in order, writes them with one
 * request at a time (so order per partition holds across retries), retries retriable failures with
 * backoff for as long as it takes, and reports acknowledgements. A request holds at most
 * `maxRequestBytes` encoded bytes, and a partition's part of it at most the topic's
 * `max.message.bytes`. A partition the target refuses for good is written in halves, recursively,
 * so a batch too large goes in pieces that fit and a record refused on its own is named in the
 * error; partitions written beside it are never sent again.
 */
export class ProducerWorker {
  readonly #lane: LaneDelivery
  readonly #sink: RecordSink
  readonly #options: ProducerWorkerOptions
  readonly #listener: WorkerListener
  readonly #logger: Logger
  /** Decoded copies of forwarded batches the target refused, with the batch each stands for. */
  readonly #originals = new WeakMap<MirrorBatch, MirrorBatch>()
  /** Parts of a batch written on their own (a refused request written in halves): the batch each is part of, and where it starts in it. */
  readonly #parts = new WeakMap<MirrorBatch, { whole: MirrorBatch, from: number }>()
  /** Batches written in parts: the segments acknowledged so far, and how many of their records are settled (written or skipped). */
  readonly #inParts = new WeakMap<MirrorBatch, { segments: AckSegment[], settled: number }>()

  constructor (lane: LaneDelivery, sink: RecordSink, options: ProducerWorkerOptions, listener: WorkerListener, logger: Logger) {
    this.#lane = lane
    this.#sink = sink
    this.#options = options
    this.#listener = listener
    this.#logger = logger
  }

  /** Runs until the queue is closed and this lane is empty; rejects on a send failure that stops the mirror. */
  async run (): Promise<void> {
    const lane = this.#lane
    for (;;) {
      const batches = await lane.take(this.#options.maxRequestBytes)
      if (batches === undefined || batches.length === 0) {
        // Nothing more to write for now (or ever): what is open is finished.
        await lane.idle()
        if (batches === undefined) continue
        return
      }
      try {
        await lane.write(batches, this.#writeBatches)
      } finally {
        lane.settled(batches)
      }
    }
  }

  /** `#write`, made once: the lane's delivery calls it for each take. */
  readonly #writeBatches = (batches: readonly MirrorBatch[]): Promise<void> => this.#write(batches)

  /**
   * Writes `batches` in requests that hold, per partition, either decoded records or one forwarded
   * batch (the broker takes one record batch per partition per request), each within the request
   * and batch size limits (`requestsWithin`): one request after the other, so each partition's
   * order holds.
   */
  async #write (batches: readonly MirrorBatch[]): Promise<void> {
    const rounds = batches.some(batch => batch.forwarded !== undefined) ? requestRounds(batches) : [batches]
    for (const round of rounds) {
      for (const request of requestsWithin(round, this.#options.maxRequestBytes, this.#maxBatchBytes)) await this.#writeRequest(request)
    }
  }

  /** Encoded bytes one partition's batch may have in a request to `topic`. */
  readonly #maxBatchBytes = (topic: string): number =>
    (this.#options.maxMessageBytes?.(topic) ?? Math.max(DEFAULT_MAX_MESSAGE_BYTES, this.#options.maxRequestBytes)) - LOG_OVERHEAD_BYTES

  async #writeRequest (batches: readonly MirrorBatch[]): Promise<void> {
    const sends = batches[0]?.span === undefined ? undefined : batches.map(b => b.span?.sendSpan())
    // Target partitions the target wrote, with the offset their first record got: filled as answers come.
    const written = new Map<string, bigint>()
    try {
      await this.#sendWithRetry(
        batches.map(b => partitionWrite(b)),
        written,
        sends
      )
      this.#acknowledgeWritten(batches, written, sends)
    } catch (error) {
      for (const send of sends ?? []) send?.end(error)
      // The transaction is gone, and with it what it wrote: nothing is acknowledged.
      if (error instanceof TransactionFailedError) throw error
      // What the target did write is acknowledged whatever happens next: it must not be sent again.
      const unwritten = this.#acknowledgeWritten(batches, written, undefined)
      if (!isPermanent(error)) throw error
      try {
        await this.#writeRefused(unwritten, error as MirrorError)
      } catch (failure) {
        // Nothing of these batches is acknowledged now (the flow stops, or a transaction is retaken and they are fetched again).
        for (const batch of unwritten) this.#inParts.delete(this.#parts.get(batch)?.whole ?? batch)
        throw failure
      }
    }
  }

  /**
   * Writes `unwritten` after the target refused some of it for good. A partition the answer
   * failed only for a passing reason (another partition of the request was the one refused) is
   * written again as it is. A refused partition's forwarded batches go decoded (several forwarded
   * batches joined into one and refused as too large are first written in halves); its decoded
   * records are written in halves, recursively, down to the one record the target refuses.
   */
  async #writeRefused (unwritten: readonly MirrorBatch[], error: MirrorError): Promise<void> {
    const refusals = new Map<string, MirrorError>()
    if (error instanceof PartialSendError) for (const failure of error.failed) refusals.set(partitionKey(failure.topic, failure.partition), failure.error)
    const again: MirrorBatch[] = []
    const refused = new Map<string, { error: MirrorError, batches: MirrorBatch[] }>()
    for (const batch of unwritten) {
      const key = partitionKey(batch.targetTopic, batch.partition)
      const refusal = refusals.get(key) ?? error
      if (refusal.retriable) {
        again.push(batch)
        continue
      }
      const entry = refused.get(key) ?? { error: refusal, batches: [] }
      entry.batches.push(batch)
      refused.set(key, entry)
    }
    if (refused.size === 0) {
      // The request was refused as a whole (no partition to blame): each partition is narrowed down.
      for (const batch of again) {
        const key = partitionKey(batch.targetTopic, batch.partition)
        const entry = refused.get(key) ?? { error, batches: [] }
        entry.batches.push(batch)
        refused.set(key, entry)
      }
      again.length = 0
    }
    if (again.length > 0) await this.#writeRequest(again)
    for (const { error: refusal, batches } of refused.values()) await this.#writeRefusedPartition(batches, refusal)
  }

  /** Writes one partition's `batches` (in order), which the target refused with `error`. */
  async #writeRefusedPartition (batches: readonly MirrorBatch[], error: MirrorError): Promise<void> {
    if (batches.some(batch => batch.forwarded !== undefined)) {
      if (batches.length > 1 && TOO_LARGE.has(error.kafkaCode ?? '')) {
        // Forwarded batches joined into one for the request: each half is joined on its own.
        const middle = Math.ceil(batches.length / 2)
        await this.#write(batches.slice(0, middle))
        await this.#write(batches.slice(middle))
        return
      }
      // The target refused a batch as it was (too large for the topic, for example): its records take the deep path.
      this.#logger.debug('the target refused a forwarded batch; writing its records decoded', { error })
      await this.#write(await Promise.all(batches.map(batch => this.#decoded(batch))))
      return
    }
    const holding = batches.filter(batch => batch.records.length > 0)
    if (holding.length === 1 && holding[0]?.records.length === 1) {
      this.#refuseRecord(holding[0], error)
      return
    }
    this.#logger.debug('the target refused a partition of a produce request; writing it in halves', { error })
    const [first, second] = this.#halves(holding)
    await this.#writeRequest(first)
    await this.#writeRequest(second)
  }

  /** `batches` (one partition's, in order) in two halves of about the same record count; a batch across the cut is written in two parts. */
  #halves (batches: readonly MirrorBatch[]): [MirrorBatch[], MirrorBatch[]] {
    let firstRecords = Math.ceil(batches.reduce((sum, batch) => sum + batch.records.length, 0) / 2)
    const first: MirrorBatch[] = []
    const second: MirrorBatch[] = []
    for (const batch of batches) {
      const count = batch.records.length
      if (firstRecords >= count) {
        first.push(batch)
        firstRecords -= count
      } else if (firstRecords > 0) {
        first.push(this.#part(batch, 0, firstRecords))
        second.push(this.#part(batch, firstRecords, count))
        firstRecords = 0
      } else {
        second.push(batch)
      }
    }
    return [first, second]
  }

  /** Records `from .. to - 1` of `batch` as a batch of their own, acknowledged as part of the batch they belong to. */
  #part (batch: MirrorBatch, from: number, to: number): MirrorBatch {
    const outer = this.#parts.get(batch)
    const whole = outer?.whole ?? batch
    const records = batch.records.slice(from, to)
    // No span of its own: the whole batch's span ends when all its parts are settled.
    const part: MirrorBatch = { ...batch, records, span: undefined, bytes: records.reduce((sum, record) => sum + recordBytes(record), 0) }
    this.#parts.set(part, { whole, from: (outer?.from ?? 0) + from })
    if (!this.#inParts.has(whole)) this.#inParts.set(whole, { segments: [], settled: 0 })
    return part
  }

  /** `count` records of `batch` are on the target at `segments` (relative to `batch`): reported, or for a part, gathered until its whole batch is settled. */
  #acknowledge (batch: MirrorBatch, segments: readonly AckSegment[], now: number, count: number): void {
    const part = this.#parts.get(batch)
    if (part === undefined) {
      this.#listener.acknowledged(this.#original(batch), segments, now, count)
      batch.span?.end()
      return
    }
    const progress = this.#inParts.get(part.whole) as { segments: AckSegment[], settled: number }
    for (const segment of segments) appendSegment(progress.segments, { ...segment, from: segment.from + part.from })
    progress.settled += count
    this.#reportIfSettled(part.whole, progress, now)
  }

  #reportIfSettled (whole: MirrorBatch, progress: { segments: AckSegment[], settled: number }, now: number): void {
    if (progress.settled < whole.records.length) return
    this.#inParts.delete(whole)
    this.#listener.acknowledged(this.#original(whole), progress.segments, now, whole.records.length)
    whole.span?.end()
  }

  /** The one record of `batch` is refused for good: the mirror stops (or, abort.on.send.failure=false, skips it). */
  #refuseRecord (batch: MirrorBatch, error: MirrorError): void {
    const part = this.#parts.get(batch)
    const whole = part?.whole ?? batch
    const index = part?.from ?? 0
    const progress = this.#inParts.get(whole)
    if (this.#options.abortOnSendFailure) {
      // Records before this one are on the target; report them before stopping.
      if (index > 0 && progress !== undefined) this.#listener.acknowledged(this.#original(whole), progress.segments, Date.now(), index)
      this.#inParts.delete(whole)
      whole.span?.end(error)
    }
    this.#fail(whole, index, error)
    // Skipped: the record counts as settled, so the batch is acknowledged once the rest of it is.
    const settled = progress ?? { segments: [], settled: 0 }
    settled.settled += 1
    this.#reportIfSettled(whole, settled, Date.now())
  }

  /** Reports every batch whose target partition is in `written`; returns the others, in order. */
  #acknowledgeWritten (
    batches: readonly MirrorBatch[],
    written: ReadonlyMap<string, bigint>,
    sends: ReadonlyArray<SendSpan | undefined> | undefined
  ): MirrorBatch[] {
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
      const send = sends?.[index]
      send?.setTargetOffset(base)
      send?.end()
      this.#acknowledge(batch, [{ from: 0, count, targetBaseOffset: base }], now, count)
    }
    return unwritten
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
    const failure = new MirrorError(
      ErrorCodes.SEND_FAILED,
      `cannot write ${batch.sourceTopic} partition ${batch.partition} offset ${offset} to ${batch.targetTopic}: ${error.kafkaCode ?? error.code} (${error.message})`,
      { cause: error, ...(error.kafkaCode === undefined ? {} : { kafkaCode: error.kafkaCode }) }
    )
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
    const record = (acks: readonly PartitionAck[]): void => {
      for (const ack of acks) written.set(partitionKey(ack.topic, ack.partition), ack.baseOffset)
    }
    await retry(
      async () => {
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
      },
      {
        signal: this.#options.signal,
        initialBackoffMs: 200,
        maxBackoffMs: 5_000,
        onRetry: (error, attempt, waitMs) => {
          this.#listener.retry('produce', error)
          if (sends !== undefined) for (const send of sends) send?.retry({ operation: 'produce', errorCode: errorLabel(error), attempt, backoffMs: waitMs })
          if (attempt === 1 || attempt % 10 === 0) {
            this.#logger.warn('writing to the target failed; retrying', { attempt, backoffMs: waitMs, code: errorLabel(error), error })
          }
        },
      }
    )
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

/** Adds `segment` to `segments`, joined to the last one when it continues it in both offsets. */
function appendSegment (segments: AckSegment[], segment: AckSegment): void {
  const last = segments[segments.length - 1]
  if (last !== undefined && last.from + last.count === segment.from && last.targetBaseOffset + BigInt(last.count) === segment.targetBaseOffset) {
    segments[segments.length - 1] = { ...last, count: last.count + segment.count }
  } else {
    segments.push(segment)
  }
}

/**
 * `batches` (one round: in queue order) cut into requests, in order, each within
 * `maxRequestBytes` encoded bytes and with each partition's batch within `maxBatchBytes(topic)`
 * (encoded sizes: `encodedBytes`, plus a batch header per partition). Request `k` holds each
 * partition's `k`-th chunk, so a partition's records keep their order across requests; a batch
 * larger than a limit by itself has a request of its own.
 */
function requestsWithin (batches: readonly MirrorBatch[], maxRequestBytes: number, maxBatchBytes: (topic: string) => number): MirrorBatch[][] {
  const chunks: MirrorBatch[][] = []
  const partitions = new Map<string, { chunk: number, bytes: number }>()
  // Each batch's encoded size once: for decoded records it is a walk over every record and header.
  const sizes = new Map<MirrorBatch, number>()
  for (const batch of batches) {
    const key = partitionKey(batch.targetTopic, batch.partition)
    const size = encodedBytes(batch)
    sizes.set(batch, size)
    const previous = partitions.get(key)
    const fits = previous !== undefined && previous.bytes + size <= maxBatchBytes(batch.targetTopic)
    const placed =
      previous === undefined
        ? { chunk: 0, bytes: BATCH_HEADER_BYTES + size }
        : fits
          ? { chunk: previous.chunk, bytes: previous.bytes + size }
          : { chunk: previous.chunk + 1, bytes: BATCH_HEADER_BYTES + size }
    partitions.set(key, placed)
    ;(chunks[placed.chunk] ??= []).push(batch)
  }
  const requests: MirrorBatch[][] = []
  for (const chunk of chunks) {
    let request: MirrorBatch[] = []
    let bytes = 0
    const started = new Set<string>()
    for (const batch of chunk) {
      const key = partitionKey(batch.targetTopic, batch.partition)
      const encoded = sizes.get(batch) as number
      if (request.length > 0 && bytes + encoded + (started.has(key) ? 0 : BATCH_HEADER_BYTES) > maxRequestBytes) {
        requests.push(request)
        request = []
        bytes = 0
        started.clear()
      }
      request.push(batch)
      bytes += encoded + (started.has(key) ? 0 : BATCH_HEADER_BYTES)
      started.add(key)
    }
    if (request.length > 0) requests.push(request)
  }
  return requests
}
