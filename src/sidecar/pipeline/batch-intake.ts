import { setTimeout as sleep } from 'node:timers/promises'
import type { FlowConfig } from '../../config/mirror-config.js'
import { batchSpanInput } from '../../ports/batch-span-input.js'
import { QueueClosedError, type BoundedQueue } from './bounded-queue.js'
import type { KafkaRecord } from '../../shared/kafka-record.js'
import { recordBytes, recordsRetain, recordTimestampsMs, type MirrorBatch } from '../../ports/mirror-batch.js'
import { fetchedBytes, type ForwardedBatch } from '../../ports/forwarded-batch.js'
import type { PartitionProgress } from './partition-progress.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type { BatchTracer, FetchControl, FetchedBatch } from '../../ports/ports.js'
import type { MirroredTopic } from './topic-sync.js'
import type { Admission, IntakeGate } from './delivery-mode.js'
import { FetchThrottle } from './fetch-throttle.js'

/**
 * Intake of fetched batches: drops what this process already handed over (a refetch after a
 * rebalance or a consumer restart), cuts the rest into batches no larger than one produce request
 * may carry, and pushes them into the queue lane of their partition. While the queue is full,
 * `accept` does not return (the source fetches that partition again only after it returns: that
 * is the backpressure) and heartbeats the group meanwhile; nothing is ever dropped. With a
 * throughput limit (`throughput.limit.bytes`), `accept` first waits until the flow's token bucket
 * lets the fetched bytes in, the same way: the next fetch of the partition waits with it.
 */
export class BatchIntake {
  readonly #flow: FlowConfig
  readonly #labels: FlowLabels
  readonly #queue: BoundedQueue<MirrorBatch>
  readonly #progress: PartitionProgress
  readonly #observer: PipelineObserver
  readonly #tracer: BatchTracer | undefined
  readonly #topicOf: (topic: string) => MirroredTopic | undefined
  /** The delivery mode's gate: which lane a partition's records go to, and when they may be queued. */
  readonly #gate: IntakeGate
  /** The flow's throughput limit over fetched bytes, shared by all its consumers; undefined without one. */
  readonly #throttle: FetchThrottle | undefined

  constructor (
    flow: FlowConfig,
    labels: FlowLabels,
    queue: BoundedQueue<MirrorBatch>,
    progress: PartitionProgress,
    observer: PipelineObserver,
    tracer: BatchTracer | undefined,
    topicOf: (topic: string) => MirroredTopic | undefined,
    gate: IntakeGate
  ) {
    this.#gate = gate
    this.#throttle = flow.throughputLimitBytes === undefined ? undefined : new FetchThrottle(flow.throughputLimitBytes)
    this.#flow = flow
    this.#labels = labels
    this.#queue = queue
    this.#progress = progress
    this.#observer = observer
    this.#tracer = tracer
    this.#topicOf = topicOf
  }

  /** Hands the new records of `fetched` to the producers; resolves once all are queued, or the batch went stale. */
  async accept (fetched: FetchedBatch, control: FetchControl): Promise<void> {
    if (this.#throttle !== undefined && !(await this.#waitForLimit(this.#throttle, fetched, control))) return
    const admitting = this.#gate.admit(fetched.topic, fetched.partition, control)
    const admission = admitting instanceof Promise ? await admitting : admitting
    // Not owned here (any more): the owner of its lane copies it.
    if (admission !== undefined) await this.#accept(fetched, control, admission)
  }

  /**
   * Takes the fetched bytes from the token bucket and waits out any debt, heartbeating the group;
   * false when the batch went stale meanwhile (the source fetches it again; its tokens stay spent).
   */
  async #waitForLimit (throttle: FetchThrottle, fetched: FetchedBatch, control: FetchControl): Promise<boolean> {
    // Fetched bytes, before any transcoding: what the limit is about.
    let bytes = fetched.forwarded === undefined ? 0 : fetchedBytes(fetched.forwarded)
    if (fetched.forwarded === undefined) for (const record of fetched.records) bytes += recordBytes(record)
    const { waitMs, throttledMs } = throttle.reserve(bytes)
    if (waitMs <= 0) return true
    const untilMs = Date.now() + waitMs
    // This wait's own share of the throttled time is its last `throttledMs` (earlier ones cover the
    // rest); it is counted as it passes, so the counter neither runs ahead of the clock nor counts twice.
    const ownFromMs = untilMs - throttledMs
    let countedMs = 0
    const count = (): void => {
      const dueMs = Math.min(Math.max(Date.now() - ownFromMs, 0), throttledMs) - countedMs
      if (dueMs <= 0) return
      countedMs += dueMs
      this.#observer.throttled?.(this.#labels, dueMs / 1000)
    }
    try {
      for (let leftMs = waitMs; leftMs > 0; leftMs = untilMs - Date.now()) {
        // In slices of at most a second: a stop or a rebalance ends the wait within one.
        await sleep(Math.min(leftMs, this.#flow.consumer.heartbeatIntervalMs, 1000))
        count()
        if (!control.isActive()) return false
        if (untilMs > Date.now()) await control.heartbeat()
      }
      return true
    } finally {
      count()
    }
  }

  async #accept (fetched: FetchedBatch, control: FetchControl, admission: Admission): Promise<void> {
    if (fetched.forwarded !== undefined) return this.#acceptForwarded(fetched, fetched.forwarded, control, admission)
    const { topic, partition, records } = fetched
    const mirrored = this.#topicOf(topic)
    if (mirrored === undefined || records.length === 0) return
    if (!this.#gate.contiguous(topic, partition, fetched.from)) return
    const firstOffset = BigInt((records[0] as KafkaRecord).offset)
    this.#progress.observeHighWatermark(topic, partition, fetched.highWatermark, firstOffset)
    const start = this.#progress.admitFrom(topic, partition, records)
    if (start >= records.length) return
    const pollTimeMs = Date.now()
    const lane = this.#gate.laneOf(topic, partition)
    const maxRecords = this.#flow.consumer.maxPollRecords
    const maxBytes = this.#flow.producer.batchSizeBytes
    const timestampsMs: number[] = []
    let totalBytes = 0

    let from = start
    while (from < records.length) {
      let to = from
      let bytes = 0
      while (to < records.length && to - from < maxRecords) {
        const size = recordBytes(records[to] as KafkaRecord)
        if (to > from && bytes + size > maxBytes) break
        bytes += size
        timestampsMs.push(Number((records[to] as KafkaRecord).timestamp))
        to++
      }
      const chunk = records.slice(from, to)
      // The last chunk ends where the fetch ended: past trailing control records (transaction markers) too.
      const last = BigInt((records[to - 1] as KafkaRecord).offset) + 1n
      const next =
        to < records.length
          ? BigInt((records[to] as KafkaRecord).offset)
          : fetched.nextOffset !== undefined && fetched.nextOffset > last
            ? fetched.nextOffset
            : last
      let batch: MirrorBatch = {
        sourceTopic: topic,
        targetTopic: mirrored.target,
        partition,
        records: chunk,
        firstOffset: BigInt((chunk[0] as KafkaRecord).offset),
        nextOffset: next,
        bytes,
        retains: recordsRetain(chunk),
        pollTimeMs,
      }
      if (this.#tracer?.enabled === true) {
        batch = { ...batch, span: this.#tracer.startBatchSpan(batchSpanInput(this.#labels, batch, true, this.#flow.consumer.groupId)) }
      }
      if (!(await this.#push(batch, lane, control, admission))) return
      totalBytes += bytes
      from = to
    }
    this.#observer.consumed?.(this.#labels, { topic, partition, records: records.length - start, bytes: totalBytes, timestampsMs, pollTimeMs })
  }

  /**
   * A fetched record batch to forward undecoded: queued whole as one `MirrorBatch`. When this
   * process already handed over part of it (a refetch), it is decoded and its new records take the
   * deep path; when all of it, it is dropped.
   */
  async #acceptForwarded (fetched: FetchedBatch, forwarded: ForwardedBatch, control: FetchControl, admission: Admission): Promise<void> {
    const { topic, partition } = fetched
    const mirrored = this.#topicOf(topic)
    if (mirrored === undefined) return
    if (!this.#gate.contiguous(topic, partition, fetched.from)) return
    const firstOffset = forwarded.baseOffset
    const lastOffset = firstOffset + BigInt(forwarded.recordCount - 1)
    this.#progress.observeHighWatermark(topic, partition, fetched.highWatermark, firstOffset)
    const admitted = this.#progress.admitFrom(topic, partition, [{ offset: firstOffset.toString() }, { offset: lastOffset.toString() }])
    if (admitted === 2) return
    if (admitted === 1) {
      this.#observer.batchRouted?.(this.#labels, 'deep', 'starts_before_position', forwarded.sizeBytes)
      return this.#accept({ ...fetched, forwarded: undefined, records: await forwarded.decode() }, control, admission)
    }
    const pollTimeMs = Date.now()
    const nextOffset = fetched.nextOffset !== undefined && fetched.nextOffset > lastOffset + 1n ? fetched.nextOffset : lastOffset + 1n
    let batch: MirrorBatch = {
      sourceTopic: topic,
      targetTopic: mirrored.target,
      partition,
      records: [],
      forwarded,
      firstOffset,
      nextOffset,
      bytes: forwarded.sizeBytes,
      ...(forwarded.retains === undefined ? {} : { retains: forwarded.retains }),
      pollTimeMs,
    }
    if (this.#tracer?.enabled === true) {
      // Links to the producers' traces need the records' traceparent headers: with tracing on, a
      // forwarded batch is decoded once to read them (it is still written as it was fetched).
      const input = batchSpanInput(this.#labels, { ...batch, records: await forwarded.decode() }, true, this.#flow.consumer.groupId)
      batch = { ...batch, span: this.#tracer.startBatchSpan(input) }
    }
    const path = forwarded.transcoded === true ? 'transcoded' : 'pass_through'
    this.#observer.batchRouted?.(this.#labels, path, forwarded.transcoded === true ? 'codec' : undefined, forwarded.sizeBytes)
    if (!(await this.#push(batch, this.#gate.laneOf(topic, partition), control, admission))) return
    this.#observer.consumed?.(this.#labels, {
      topic,
      partition,
      records: forwarded.recordCount,
      bytes: fetchedBytes(forwarded),
      timestampsMs: recordTimestampsMs(batch),
      pollTimeMs,
    })
  }

  /** Queues `batch`, heartbeating while the queue is full; false when the batch went stale or the queue closed. */
  async #push (batch: MirrorBatch, lane: number | undefined, control: FetchControl, admission: Admission): Promise<boolean> {
    this.#gate.stamp(batch, admission)
    this.#progress.admitted(batch)
    try {
      while (!(await this.#queue.pushWithin(batch, lane, this.#flow.consumer.heartbeatIntervalMs))) {
        if (!control.isActive()) {
          this.#abandon(batch)
          return false
        }
        await control.heartbeat()
      }
      return true
    } catch (error) {
      this.#abandon(batch)
      if (error instanceof QueueClosedError) return false
      throw error
    }
  }

  #abandon (batch: MirrorBatch): void {
    // Out of the line of waiting pushes, so the pushes behind it go on.
    this.#queue.withdraw(batch)
    this.#progress.abandoned(batch)
    batch.span?.end()
  }
}
