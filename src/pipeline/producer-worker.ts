import type { KafkaRecordSink, PartitionAck, PartitionWrite } from '../kafka/record-sink.js'
import { errorLabel } from '../shared/errors.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import type { BoundedQueue } from './bounded-queue.js'
import type { MirrorBatch } from './mirror-batch.js'

/** Target offsets of a run of records of one batch: records `from .. from + count - 1` got `targetBaseOffset ..`. */
export interface AckSegment {
  readonly from: number
  readonly count: number
  readonly targetBaseOffset: bigint
}

/** What a worker tells the flow about each batch it finished. */
export interface WorkerCallbacks {
  /**
   * The first `recordsAcked` records of `batch` (normally all) are on the target; `segments` say
   * where (one segment unless the send was split).
   */
  acknowledged: (batch: MirrorBatch, segments: readonly AckSegment[], ackTimeMs: number, recordsAcked: number) => void
  /** A record was refused for good and the flow keeps going (abort.on.send.failure=false): it is skipped. */
  skipped: (batch: MirrorBatch, recordIndex: number, error: MirrorError) => void
  produceRequest: (durationSeconds: number, ok: boolean) => void
  retry: (operation: string, error: unknown) => void
}

export interface ProducerWorkerOptions {
  readonly lane: number
  /** Upper bound of one produce request in record bytes. */
  readonly maxRequestBytes: number
  readonly requestTimeoutMs: number
  readonly abortOnSendFailure: boolean
  /** Aborting it stops retrying (forced shutdown). */
  readonly signal: AbortSignal
}

/** Oversized or malformed data: splitting the request finds the record to blame. */
function isPermanent (error: unknown): boolean {
  return error instanceof MirrorError && !error.retriable
}

/**
 * One producer lane: takes batches of its partitions from the queue in order, writes them with one
 * request at a time (so order per partition holds across retries), retries retriable failures with
 * backoff for as long as it takes, and reports acknowledgements. A permanent failure of a request
 * is narrowed down by resending piece by piece, so the error names the exact source record.
 */
export class ProducerWorker {
  readonly #queue: BoundedQueue<MirrorBatch>
  readonly #sink: KafkaRecordSink
  readonly #options: ProducerWorkerOptions
  readonly #callbacks: WorkerCallbacks
  readonly #logger: Logger

  constructor (queue: BoundedQueue<MirrorBatch>, sink: KafkaRecordSink, options: ProducerWorkerOptions, callbacks: WorkerCallbacks, logger: Logger) {
    this.#queue = queue
    this.#sink = sink
    this.#options = options
    this.#callbacks = callbacks
    this.#logger = logger
  }

  /** Runs until the queue is closed and this lane is empty; rejects on a send failure that stops the mirror. */
  async run (): Promise<void> {
    for (;;) {
      const batches = await this.#queue.take(this.#options.lane, this.#options.maxRequestBytes)
      if (batches.length === 0) return
      try {
        await this.#write(batches)
      } finally {
        for (const batch of batches) this.#queue.release(batch)
      }
    }
  }

  async #write (batches: readonly MirrorBatch[]): Promise<void> {
    const sends = batches[0]?.span === undefined ? undefined : batches.map(b => b.span?.sendSpan())
    try {
      const acks = await this.#sendWithRetry(batches.map(b => ({ topic: b.targetTopic, partition: b.partition, records: b.records })), sends)
      const now = Date.now()
      const next = new Map<string, bigint>()
      for (const batch of batches) {
        const key = `${batch.targetTopic}\u0000${batch.partition}`
        const base = next.get(key) ?? acks.get(key)
        if (base === undefined) throw new MirrorError(ErrorCodes.INTERNAL, `no acknowledgement for ${batch.targetTopic}-${batch.partition}`)
        next.set(key, base + BigInt(batch.records.length))
        this.#callbacks.acknowledged(batch, [{ from: 0, count: batch.records.length, targetBaseOffset: base }], now, batch.records.length)
        if (sends !== undefined) {
          const send = sends[batches.indexOf(batch)]
          send?.setTargetOffset(base)
          send?.end()
          batch.span?.end()
        }
      }
    } catch (error) {
      for (const send of sends ?? []) send?.end(error)
      if (!isPermanent(error)) throw error
      if (batches.length === 1 && batches[0]?.records.length === 1) {
        batches[0].span?.end(error)
        this.#fail(batches[0], 0, error as MirrorError)
        return
      }
      this.#logger.debug('a produce request was refused; resending record by record to find the cause', { error })
      for (const batch of batches) await this.#writeRecordByRecord(batch)
    }
  }

  async #writeRecordByRecord (batch: MirrorBatch): Promise<void> {
    const segments: AckSegment[] = []
    for (let i = 0; i < batch.records.length; i++) {
      try {
        const acks = await this.#sendWithRetry([{ topic: batch.targetTopic, partition: batch.partition, records: [batch.records[i] as MirrorBatch['records'][number]] }])
        const base = acks.get(`${batch.targetTopic}\u0000${batch.partition}`)
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
        if (i > 0 && this.#options.abortOnSendFailure) this.#callbacks.acknowledged(batch, segments, Date.now(), i)
        if (this.#options.abortOnSendFailure) batch.span?.end(error)
        this.#fail(batch, i, error as MirrorError)
        if (this.#options.abortOnSendFailure) return
      }
    }
    this.#callbacks.acknowledged(batch, segments, Date.now(), batch.records.length)
    batch.span?.end()
  }

  #fail (batch: MirrorBatch, index: number, error: MirrorError): void {
    const offset = batch.records[index]?.offset ?? '?'
    const failure = new MirrorError(ErrorCodes.SEND_FAILED,
      `cannot write ${batch.sourceTopic} partition ${batch.partition} offset ${offset} to ${batch.targetTopic}: ${error.kafkaCode ?? error.code} (${error.message})`,
      { cause: error, ...(error.kafkaCode === undefined ? {} : { kafkaCode: error.kafkaCode }) })
    this.#callbacks.skipped(batch, index, failure)
    if (this.#options.abortOnSendFailure) throw failure
  }

  async #sendWithRetry (writes: PartitionWrite[], sends?: ReadonlyArray<ReturnType<NonNullable<MirrorBatch['span']>['sendSpan']> | undefined>): Promise<Map<string, bigint>> {
    const acks: PartitionAck[] = await retry(async attempt => {
      if (attempt > 1) await this.#sink.reset()
      const started = performance.now()
      try {
        const result = await this.#sink.send(writes, this.#options.requestTimeoutMs)
        this.#callbacks.produceRequest((performance.now() - started) / 1000, true)
        return result
      } catch (error) {
        this.#callbacks.produceRequest((performance.now() - started) / 1000, false)
        throw error
      }
    }, {
      signal: this.#options.signal,
      initialBackoffMs: 200,
      maxBackoffMs: 5_000,
      onRetry: (error, attempt, waitMs) => {
        this.#callbacks.retry('produce', error)
        if (sends !== undefined) for (const send of sends) send?.retry({ operation: 'produce', errorCode: errorLabel(error), attempt, backoffMs: waitMs })
        if (attempt === 1 || attempt % 10 === 0) this.#logger.warn('writing to the target failed; retrying', { attempt, backoffMs: waitMs, code: errorLabel(error), error })
      },
    })
    const byPartition = new Map<string, bigint>()
    for (const ack of acks) byPartition.set(`${ack.topic}\u0000${ack.partition}`, ack.baseOffset)
    return byPartition
  }
}
