import type { FlowConfig } from '../config/mirror-config.js'
import { errorLabel } from '../shared/errors.js'
import { KafkaRecordSink } from '../kafka/record-sink.js'
import { KafkaRecordSource, type FetchControl, type FetchedBatch } from '../kafka/record-source.js'
import { TopicAdmin } from '../kafka/topic-admin.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import { settleWithin } from '../shared/deadline.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import { BoundedQueue, QueueClosedError } from './bounded-queue.js'
import { recordBytes, type BatchSpan, type MirrorBatch, type SourceRecord } from './mirror-batch.js'
import { batchSpanInput } from '../tracing/batch-span-input.js'
import type { BatchSpanInput } from '../tracing/mirror-tracer.js'
import { PartitionProgress, partitionKey, type CommitCandidate } from './partition-progress.js'
import { flowLabels, type FlowLabels, type FlowSnapshot, type LifecycleState, type PipelineObserver } from './pipeline-observer.js'
import { ProducerWorker, type AckSegment } from './producer-worker.js'
import { TopicSync, type MirroredTopic } from './topic-sync.js'

/** How long each client's stop may take at shutdown before the flow goes on without it. */
const STOP_STEP_BOUND_MS = 5_000

/**
 * Hears about every acknowledged batch, and is flushed before each source commit. The offset-sync
 * writer implements it: syncs covering a record are durable before its source offset is committed.
 */
export interface AckListener {
  acknowledged: (batch: MirrorBatch, segments: readonly AckSegment[]) => void
  /** `committing`: the source offsets the commit that follows will write (the mirror's position). */
  flush: (committing?: readonly CommitCandidate[]) => Promise<void>
}

/** Starts a span per batch; `enabled` false means no spans are made at all. */
export interface BatchTracer {
  readonly enabled: boolean
  startBatchSpan: (input: BatchSpanInput) => BatchSpan
}

export interface MirrorFlowOptions {
  readonly observer?: PipelineObserver
  readonly tracer?: BatchTracer
  readonly ackListener?: AckListener
  readonly logger: Logger
  /** How long `stop()` waits for in-flight records to be acknowledged; default 30000. */
  readonly drainTimeoutMs?: number
}

/**
 * One copy from a source cluster to a target cluster: topic discovery, the source consumer group,
 * a bounded queue, a pool of producer lanes and the committer.
 *
 * States: starting -> running -> stopping -> stopped, or failed after a send failure with
 * abort.on.send.failure (then `done` rejects with an error naming the record). `stop()` is
 * once-only: pause fetching, let the producers drain the queue within the deadline, commit what
 * the target acknowledged, then disconnect.
 */
export class MirrorFlow {
  readonly config: FlowConfig
  readonly labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: PipelineObserver
  readonly #ackListener: AckListener | undefined
  readonly #tracer: BatchTracer | undefined
  readonly #drainTimeoutMs: number
  readonly #sourceAdmin: TopicAdmin
  readonly #targetAdmin: TopicAdmin
  readonly #topicSync: TopicSync
  readonly #sinks: KafkaRecordSink[]
  readonly #queue: BoundedQueue<MirrorBatch>
  readonly #progress = new PartitionProgress()
  readonly #lanes = new Map<string, number>()
  readonly #abort = new AbortController()
  #source: KafkaRecordSource
  #topics = new Map<string, MirroredTopic>()
  #workers: Array<Promise<void>> = []
  #state: LifecycleState = 'starting'
  #commitTimer: NodeJS.Timeout | undefined
  #refreshTimer: NodeJS.Timeout | undefined
  #committing: Promise<void> | undefined
  #refreshing: Promise<void> | undefined
  #stopping: Promise<void> | undefined
  #starting: Promise<void> | undefined
  #stopRequested = false
  /** Set once start completed; a stop before that does not drain. */
  #running = false
  #failure: Error | undefined
  #resolveDone!: () => void
  #rejectDone!: (error: Error) => void
  /** Settles when the flow has stopped: resolves after `stop()`, rejects when the flow failed. */
  readonly done: Promise<void>

  constructor (config: FlowConfig, options: MirrorFlowOptions) {
    this.config = config
    this.labels = flowLabels(config)
    this.#logger = options.logger.child({ flow: config.name })
    this.#observer = options.observer ?? {}
    this.#ackListener = options.ackListener
    this.#tracer = options.tracer
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 30_000
    this.#sourceAdmin = new TopicAdmin(config.source, this.#logger)
    this.#targetAdmin = new TopicAdmin(config.target, this.#logger)
    this.#topicSync = new TopicSync(this.#sourceAdmin, this.#targetAdmin, config, this.#logger)
    this.#sinks = Array.from({ length: config.numProducers }, () => new KafkaRecordSink(config.target, config.producer, this.#logger))
    this.#queue = new BoundedQueue<MirrorBatch>(config.queueMaxRecords, config.queueMaxBytes, config.numProducers)
    this.#source = this.#newSource()
    this.done = new Promise((resolve, reject) => { this.#resolveDone = resolve; this.#rejectDone = reject })
    this.done.catch(() => {})
  }

  get state (): LifecycleState { return this.#state }

  #newSource (): KafkaRecordSource {
    return new KafkaRecordSource(this.config.source, this.config.consumer, this.config.numStreams, this.#logger)
  }

  /** Connects, creates missing target topics, joins the source group and starts copying. */
  start (): Promise<void> {
    this.#starting ??= this.#startOnce()
    return this.#starting
  }

  async #startOnce (): Promise<void> {
    if (this.#stopRequested) return
    await this.#sourceAdmin.start()
    await this.#targetAdmin.start()
    await Promise.all(this.#sinks.map(sink => sink.start()))
    this.#topics = await this.#topicSync.refresh()
    this.#workers = this.#sinks.map((sink, lane) => new ProducerWorker(this.#queue, sink, {
      lane,
      maxRequestBytes: Math.max(this.config.producer.maxRequestSizeBytes, this.config.producer.batchSizeBytes),
      requestTimeoutMs: this.config.target.requestTimeoutMs ?? 30_000,
      abortOnSendFailure: this.config.abortOnSendFailure,
      signal: this.#abort.signal,
    }, {
      acknowledged: (batch, segments, ackTimeMs, recordsAcked) => this.#acknowledged(batch, segments, ackTimeMs, recordsAcked),
      skipped: (batch, index, error) => {
        this.#observer.sendFailed?.(this.labels, batch.sourceTopic, batch.partition, error.kafkaCode ?? error.code)
        this.#logger.error(this.config.abortOnSendFailure ? 'send failed; stopping the mirror' : 'send failed; record skipped (abort.on.send.failure=false)', { error, offset: batch.records[index]?.offset })
      },
      produceRequest: (seconds, ok) => this.#observer.produceRequest?.(this.labels, seconds, ok),
      retry: (operation, error) => this.#observer.retry?.(this.labels, operation, errorLabel(error)),
    }, this.#logger.child({ lane })).run().catch(error => {
      // A stop that gave up waiting (drain deadline, forced stop) ends the retries: what is unwritten stays uncommitted, not a failure.
      if (this.#abort.signal.aborted && !(error instanceof MirrorError && error.code === ErrorCodes.SEND_FAILED)) return
      this.#fail(error as Error)
    }))
    if (this.#stopRequested) return
    await this.#startSource()
    if (this.#stopRequested) return
    this.#state = 'running'
    this.#running = true
    this.#commitTimer = setInterval(() => { void this.commit() }, this.config.offsetCommitIntervalMs)
    this.#commitTimer.unref()
    this.#refreshTimer = setInterval(() => { void this.refreshTopics() }, this.config.refreshTopicsIntervalMs)
    this.#refreshTimer.unref()
    this.#logger.info('mirroring', { topics: [...this.#topics.keys()], source: this.config.source.brokers, target: this.config.target.brokers })
  }

  async #startSource (): Promise<void> {
    await this.#source.start([...this.#topics.keys()], {
      onBatch: (batch, control) => this.#onBatch(batch, control),
      onSkipped: (topic, partition, nextOffset) => this.#progress.skipped(topic, partition, nextOffset),
      onAssignment: owned => {
        this.#progress.retain(owned)
        this.#observer.rebalanced?.(this.labels)
        this.#logger.info('partitions assigned', { partitions: owned.size })
      },
      onRebalancing: () => { void this.commit() },
      onCrash: error => this.#fail(error),
    })
  }

  #laneOf (key: string): number {
    let lane = this.#lanes.get(key)
    if (lane === undefined) {
      lane = this.#lanes.size % this.#sinks.length
      this.#lanes.set(key, lane)
    }
    return lane
  }

  async #onBatch (fetched: FetchedBatch, control: FetchControl): Promise<void> {
    const { topic, partition, records } = fetched
    const mirrored = this.#topics.get(topic)
    if (mirrored === undefined || records.length === 0) return
    const firstOffset = BigInt((records[0] as SourceRecord).offset)
    this.#progress.observeHighWatermark(topic, partition, fetched.highWatermark, firstOffset)
    const start = this.#progress.admitFrom(topic, partition, records)
    if (start >= records.length) return
    const pollTimeMs = Date.now()
    const lane = this.#laneOf(partitionKey(topic, partition))
    const maxRecords = this.config.consumer.maxPollRecords
    const maxBytes = this.config.producer.batchSizeBytes
    const timestampsMs: number[] = []
    let totalBytes = 0

    let from = start
    while (from < records.length) {
      let to = from
      let bytes = 0
      while (to < records.length && to - from < maxRecords) {
        const size = recordBytes(records[to] as SourceRecord)
        if (to > from && bytes + size > maxBytes) break
        bytes += size
        timestampsMs.push(Number((records[to] as SourceRecord).timestamp))
        to++
      }
      const chunk = records.slice(from, to)
      // The last chunk ends where the fetch ended: past trailing control records (transaction markers) too.
      const last = BigInt((records[to - 1] as SourceRecord).offset) + 1n
      const next = to < records.length ? BigInt((records[to] as SourceRecord).offset) : fetched.nextOffset !== undefined && fetched.nextOffset > last ? fetched.nextOffset : last
      let batch: MirrorBatch = { sourceTopic: topic, targetTopic: mirrored.target, partition, records: chunk, firstOffset: BigInt((chunk[0] as SourceRecord).offset), nextOffset: next, bytes, pollTimeMs }
      if (this.#tracer?.enabled === true) batch = { ...batch, span: this.#tracer.startBatchSpan(batchSpanInput(this.labels, batch, true, this.config.consumer.groupId)) }
      this.#progress.admitted(batch)
      try {
        while (!await this.#queue.pushWithin(batch, lane, this.config.consumer.heartbeatIntervalMs)) {
          if (!control.isActive()) {
            this.#progress.abandoned(batch)
            batch.span?.end()
            return
          }
          await control.heartbeat()
        }
      } catch (error) {
        this.#progress.abandoned(batch)
        batch.span?.end()
        if (error instanceof QueueClosedError) return
        throw error
      }
      totalBytes += bytes
      from = to
    }
    this.#observer.consumed?.(this.labels, { topic, partition, records: records.length - start, bytes: totalBytes, timestampsMs, pollTimeMs })
  }

  #acknowledged (batch: MirrorBatch, segments: readonly AckSegment[], ackTimeMs: number, recordsAcked: number): void {
    if (recordsAcked === batch.records.length) this.#progress.acknowledged(batch, ackTimeMs)
    else this.#progress.acknowledgedPrefix(batch, BigInt((batch.records[recordsAcked] as SourceRecord).offset), ackTimeMs)
    this.#ackListener?.acknowledged(batch, segments)
    if (this.#observer.produced === undefined || segments.length === 0) return
    const timestampsMs: number[] = []
    for (let i = 0; i < recordsAcked; i++) timestampsMs.push(Number((batch.records[i] as SourceRecord).timestamp))
    this.#observer.produced(this.labels, {
      sourceTopic: batch.sourceTopic,
      targetTopic: batch.targetTopic,
      partition: batch.partition,
      records: recordsAcked,
      bytes: recordsAcked === batch.records.length ? batch.bytes : batch.records.slice(0, recordsAcked).reduce((sum, r) => sum + recordBytes(r), 0),
      timestampsMs,
      ackTimeMs,
      firstSourceOffset: batch.firstOffset,
      lastSourceOffset: BigInt((batch.records[recordsAcked - 1] as SourceRecord).offset),
      targetBaseOffset: (segments[0] as AckSegment).targetBaseOffset,
    })
  }

  /**
   * Commits, on the source, the offsets of records the target acknowledged (never further), after
   * the offset syncs that cover them are durable. Concurrent calls share one commit.
   */
  commit (): Promise<void> {
    this.#committing ??= this.#commitOnce().finally(() => { this.#committing = undefined })
    return this.#committing
  }

  async #commitOnce (): Promise<void> {
    const candidates = this.#progress.commitCandidates(this.#source.owned())
    if (candidates.length === 0) return
    try {
      await this.#ackListener?.flush(candidates)
      await retry(() => this.#source.commit(candidates), {
        maxAttempts: 3,
        initialBackoffMs: 200,
        onRetry: error => this.#observer.retry?.(this.labels, 'commit', errorLabel(error)),
      })
      this.#progress.committed(candidates)
      this.#observer.committed?.(this.labels, candidates, Date.now())
    } catch (error) {
      this.#observer.commitFailed?.(this.labels, errorLabel(error))
      this.#logger.warn('commit failed; the next commit retries', { error })
    }
  }

  /** Picks up topics created (or partitions added) on the source since the last look. */
  refreshTopics (): Promise<void> {
    this.#refreshing ??= this.#refreshOnce().finally(() => { this.#refreshing = undefined })
    return this.#refreshing
  }

  async #refreshOnce (): Promise<void> {
    if (this.#state !== 'running') return
    let topics: Map<string, MirroredTopic>
    try {
      topics = await this.#topicSync.refresh()
    } catch (error) {
      this.#observer.retry?.(this.labels, 'refresh_topics', errorLabel(error))
      this.#logger.warn('looking for new topics failed; trying again at the next refresh', { error })
      return
    }
    const same = topics.size === this.#topics.size && [...topics].every(([name, t]) => this.#topics.get(name)?.partitions === t.partitions)
    if (same || this.#state !== 'running') return
    this.#logger.info('topics changed; re-subscribing', { topics: [...topics.keys()] })
    // kafkajs cannot change a running subscription: drain, commit, and join again with the new list.
    const old = this.#source
    old.pause()
    await this.#waitIdle(this.#drainTimeoutMs)
    await this.commit()
    await old.stop()
    if (this.#state !== 'running') return
    this.#topics = topics
    this.#source = this.#newSource()
    await this.#startSource()
  }

  async #waitIdle (timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (!this.#progress.idle || this.#queue.records > 0) {
      if (Date.now() > deadline || this.#failure !== undefined) return false
      await new Promise(resolve => setTimeout(resolve, 20))
    }
    return true
  }

  #fail (error: Error): void {
    if (this.#failure !== undefined) return
    this.#failure = error instanceof MirrorError ? error : new MirrorError(ErrorCodes.INTERNAL, error.message, { cause: error })
    this.#state = 'failed'
    this.#observer.fatal?.(this.labels, this.#failure)
    void this.#shutdown().then(() => this.#rejectDone(this.#failure as Error), () => this.#rejectDone(this.#failure as Error))
  }

  /** Drains and stops; resolves when done. Once-only: later calls return the same promise. */
  stop (): Promise<void> {
    this.#stopRequested = true
    if (this.#state !== 'failed') this.#state = 'stopping'
    void this.#shutdown().then(() => {
      if (this.#failure === undefined) {
        this.#state = 'stopped'
        this.#resolveDone()
      }
    })
    return this.done
  }

  /** Stops waiting for the target at once: retries end, in-flight records are left uncommitted. */
  abort (): void {
    this.#abort.abort()
    this.#queue.close()
    this.#queue.drainQueued()
  }

  #shutdown (): Promise<void> {
    this.#stopping ??= (async () => {
      // A stop during start cuts the group join short (it can wait a whole session timeout for a
      // dead member): nothing was handed over yet, so leaving at once loses nothing.
      if (this.#state === 'stopping' && !this.#running) await this.#source.stop()
      await this.#starting?.catch(() => {})
      clearInterval(this.#commitTimer)
      clearInterval(this.#refreshTimer)
      this.#source.pause()
      this.#queue.close()
      const drained = await this.#waitIdle(this.#failure === undefined ? this.#drainTimeoutMs : 0)
      if (!drained && this.#failure === undefined) this.#logger.warn('drain deadline passed; records in flight stay uncommitted and will be mirrored again', { records: this.#queue.records })
      this.#abort.abort()
      // What is still queued was never written: leave it uncommitted, to be mirrored again.
      this.#queue.drainQueued()
      await this.#refreshing?.catch(() => {})
      // With the target unreachable the offset syncs cannot be written, so the commit that waits
      // for them could wait for the client's retries: give it a bound. Skipping it only means
      // records acknowledged since the last commit are mirrored again.
      const commitBoundMs = drained ? Math.max(this.#drainTimeoutMs, 5_000) : 5_000
      const committed = await settleWithin(this.commit(), commitBoundMs)
      if (!committed) this.#logger.warn('final commit did not finish in time; what was acknowledged since the last commit will be mirrored again', { boundMs: commitBoundMs })
      await this.#stopStep('source consumer', this.#source.stop())
      await this.#stopStep('producer workers', Promise.allSettled(this.#workers))
      await this.#stopStep('target producers', Promise.all(this.#sinks.map(sink => sink.stop())))
      await this.#stopStep('source admin', this.#sourceAdmin.stop())
      await this.#stopStep('target admin', this.#targetAdmin.stop())
    })()
    return this.#stopping
  }

  /** One step of the shutdown, bounded: a client retrying against an unreachable cluster must not hold the process. */
  async #stopStep (step: string, work: Promise<unknown>): Promise<void> {
    if (!await settleWithin(work, STOP_STEP_BOUND_MS)) this.#logger.warn('shutdown step did not finish in time; going on', { step, boundMs: STOP_STEP_BOUND_MS })
  }

  snapshot (): FlowSnapshot {
    return {
      labels: this.labels,
      state: this.#state,
      queueRecords: this.#queue.records,
      queueBytes: this.#queue.bytes,
      queueCapacityRecords: this.#queue.capacityRecords,
      queueCapacityBytes: this.#queue.capacityBytes,
      sourceConnected: this.#source.connected,
      targetConnected: this.#sinks.every(sink => sink.connected),
      assignedPartitions: this.#source.owned().size,
      topicsMirrored: this.#topics.size,
      partitions: this.#progress.snapshot(),
    }
  }
}
