import { coordinatorPartition } from './flow-coordinator.js'
import type { FlowConfig } from '../config/mirror-config.js'
import { settleWithin } from '../shared/deadline.js'
import { ErrorCodes, errorLabel, MirrorError } from '../shared/errors.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import type { Logger } from '../shared/logger.js'
import type { MessageHandlerFunction } from '../shared/message-handler-api.js'
import { RearmingTimer } from '../shared/rearming-timer.js'
import { AckRecorder } from './ack-recorder.js'
import { BatchIntake } from './batch-intake.js'
import { BoundedQueue } from './bounded-queue.js'
import { MessageHandler } from './message-handler.js'
import type { MirrorBatch } from './mirror-batch.js'
import { OffsetCommitter } from './offset-committer.js'
import { PartitionProgress } from './partition-progress.js'
import { partitionKey, parsePartitionKey } from './partition-key.js'
import { flowLabels, type FlowLabels, type FlowSnapshot, type LifecycleState, type PipelineObserver } from './pipeline-observer.js'
import type { AckListener, BatchTracer, CorruptBatch, FetchControl, FetchedBatch, FlowPorts, RecordSource, SourceListener } from './ports.js'
import { ProducerWorker } from './producer-worker.js'
import { ExactlyOnceLanes } from './exactly-once-lanes.js'
import { TopicSync, type MirroredTopic } from './topic-sync.js'

/** A CRC-32C as 8 hex digits. */
function crcText (crc: number): string {
  return `0x${crc.toString(16).padStart(8, '0')}`
}

/** How long each client's stop may take at shutdown before the flow goes on without it. */
const STOP_STEP_BOUND_MS = 5_000

/** How long the final commit may take when the drain did not finish (the target is likely unreachable). */
const FINAL_COMMIT_BOUND_MS = 5_000

export interface MirrorFlowOptions {
  readonly observer?: PipelineObserver
  readonly tracer?: BatchTracer
  readonly ackListener?: AckListener
  readonly logger: Logger
  /** How long `stop()` waits for in-flight records to be acknowledged; default 30000. */
  readonly drainTimeoutMs?: number
  /**
   * The loaded function of `config.messageHandler` (`loadMessageHandlers`): required when the
   * config names a handler; without one, records are copied as they are.
   */
  readonly messageHandler?: MessageHandlerFunction
}

/**
 * One copy from a source cluster to a target cluster, through the ports it is given: topic
 * discovery (`TopicSync`), the source consumer group (`RecordSource`), the intake of fetched
 * batches with backpressure (`BatchIntake`), a bounded queue, one producer lane per sink
 * (`ProducerWorker`), acknowledgements (`AckRecorder`) and the committer (`OffsetCommitter`).
 * This class holds the lifecycle only.
 *
 * States: starting -> running -> stopping -> stopped, or failed after a send failure with
 * abort.on.send.failure or a source crash (then `done` rejects with an error naming the cause).
 * `stop()` is once-only: pause fetching, let the producers drain the queue within the deadline,
 * commit what the target acknowledged, then disconnect. When that final commit fails, `done`
 * rejects (`MIRROR_COMMIT_FAILED`): what was acknowledged since the last commit is copied again.
 */
export class MirrorFlow {
  readonly config: FlowConfig
  readonly labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: PipelineObserver
  readonly #drainTimeoutMs: number
  readonly #ports: FlowPorts
  readonly #topicSync: TopicSync
  readonly #queue: BoundedQueue<MirrorBatch>
  readonly #progress = new PartitionProgress()
  readonly #intake: BatchIntake
  readonly #handler: MessageHandler | undefined
  readonly #acks: AckRecorder
  /** Exactly-once: the transactional producer lanes. */
  readonly #exactlyOnce: ExactlyOnceLanes | undefined
  readonly #committer: OffsetCommitter
  readonly #refreshTimer: RearmingTimer
  /** Aborting it ends the producers' retries (drain deadline passed, forced stop). */
  readonly #abort = new AbortController()
  #source: RecordSource
  #topics = new Map<string, MirroredTopic>()
  /** Whether this process coordinated the flow at the last assignment (for the log line on a change). */
  #coordinating = false
  /** When target topic configs were last compared with the source's (ms since epoch); the first refresh after start does it. */
  #configsSyncedAtMs = 0
  /** When topic ACLs were last synced (ms since epoch). */
  #aclsSyncedAtMs = 0
  #workers: Array<Promise<void>> = []
  #state: LifecycleState = 'starting'
  #refreshing: Promise<void> | undefined
  #stopping: Promise<boolean> | undefined
  #starting: Promise<void> | undefined
  #stopRequested = false
  /** Set once start completed; a stop before that does not drain. */
  #running = false
  #failure: MirrorError | undefined
  #resolveDone!: () => void
  #rejectDone!: (error: Error) => void
  /** Settles when the flow has stopped: resolves after `stop()`, rejects when the flow failed. */
  readonly done: Promise<void>

  constructor (config: FlowConfig, ports: FlowPorts, options: MirrorFlowOptions) {
    this.config = config
    this.labels = flowLabels(config)
    this.#logger = options.logger.child({ flow: config.name })
    this.#observer = options.observer ?? {}
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 30_000
    this.#ports = ports
    this.#topicSync = new TopicSync(ports.sourceTopics, ports.targetTopics, config, this.#logger)
    // Exactly-once lanes are buckets of partitions with a transactional id each; otherwise any lane
    // takes any partition not in flight, so batches fetched together share a request.
    this.#queue = new BoundedQueue<MirrorBatch>(config.queueMaxRecords, config.queueMaxBytes, config.exactlyOnce !== undefined
      ? ports.sinks.length
      : { keyOf: batch => partitionKey(batch.targetTopic, batch.partition) })
    if (config.messageHandler !== undefined && options.messageHandler === undefined) {
      throw new MirrorError(ErrorCodes.CONFIG, `flow ${config.name}: ${config.messageHandler.key} "${config.messageHandler.module}" is not loaded; load it with loadMessageHandlers(config) and pass it as messageHandler`)
    }
    this.#handler = options.messageHandler === undefined
      ? undefined
      : new MessageHandler(options.messageHandler, { module: config.messageHandler?.module ?? 'messageHandler', args: config.messageHandler?.args, flow: config.name })
    if (config.exactlyOnce !== undefined) {
      if (ports.exactlyOnce === undefined || ports.exactlyOnce.sinks.length !== ports.sinks.length) {
        throw new MirrorError(ErrorCodes.INTERNAL, `flow ${config.name}: ${config.exactlyOnce.key} is on but the ports have no transactional sinks for every lane`)
      }
      this.#exactlyOnce = new ExactlyOnceLanes({
        sinks: ports.exactlyOnce.sinks,
        positions: ports.exactlyOnce.positions,
        progress: this.#progress,
        commitIntervalMs: config.exactlyOnce.commitIntervalMs,
        heartbeatIntervalMs: config.consumer.heartbeatIntervalMs,
        labels: this.labels,
        observer: this.#observer,
        logger: this.#logger,
        signal: this.#abort.signal,
        onFatal: error => this.#fail(error),
        seek: offsets => this.#source.seek(offsets),
        ...(options.ackListener?.transactionRecords === undefined ? {} : { describe: options.ackListener.transactionRecords.bind(options.ackListener) }),
      })
    }
    this.#intake = new BatchIntake(config, this.labels, this.#queue, this.#progress, this.#observer, options.tracer, topic => this.#topics.get(topic), this.#exactlyOnce)
    this.#acks = new AckRecorder(config, this.labels, this.#progress, this.#observer, options.ackListener, this.#logger)
    this.#source = ports.source()
    this.#committer = new OffsetCommitter({
      labels: this.labels,
      progress: this.#progress,
      source: () => this.#source,
      ackListener: options.ackListener,
      observer: this.#observer,
      logger: this.#logger,
      intervalMs: config.offsetCommitIntervalMs,
    })
    this.#refreshTimer = new RearmingTimer(config.refreshTopicsIntervalMs, () => this.refreshTopics())
    this.done = new Promise((resolve, reject) => { this.#resolveDone = resolve; this.#rejectDone = reject })
    // Observed by whoever awaits it; without this an unawaited rejection would end the process.
    this.done.catch(() => {})
  }

  get state (): LifecycleState { return this.#state }

  /** Connects, creates missing target topics, joins the source group and starts copying. */
  start (): Promise<void> {
    this.#starting ??= this.#startOnce()
    return this.#starting
  }

  async #startOnce (): Promise<void> {
    if (this.#stopRequested) return
    const { sourceTopics, targetTopics, sinks } = this.#ports
    await sourceTopics.start()
    await targetTopics.start()
    // Exactly-once: the positions topic exists and the target can run transactions before anything is copied.
    await this.#ports.exactlyOnce?.positions.start()
    await Promise.all(sinks.map(sink => sink.start()))
    this.#topics = await this.#topicSync.refresh()
    this.#workers = sinks.map((sink, lane) => this.#runWorker(sink, lane))
    if (this.#stopRequested) return
    await this.#source.start([...this.#topics.keys()], this.#sourceListener())
    if (this.#stopRequested) return
    this.#state = 'running'
    this.#running = true
    this.#committer.start()
    this.#refreshTimer.start()
    this.#logger.info('mirroring', {
      topics: [...this.#topics.keys()], source: this.config.source.brokers, target: this.config.target.brokers,
      ...(this.config.messageHandler === undefined ? {} : { messageHandler: this.config.messageHandler.module }),
    })
  }

  #runWorker (sink: FlowPorts['sinks'][number], lane: number): Promise<void> {
    const transactional = this.#exactlyOnce?.lane(lane, this.#acks, this.#queue)
    return new ProducerWorker(this.#queue, sink, {
      lane,
      maxRequestBytes: Math.max(this.config.producer.maxRequestSizeBytes, this.config.producer.batchSizeBytes),
      maxMessageBytes: topic => this.#topicSync.maxMessageBytes(topic),
      requestTimeoutMs: this.config.target.requestTimeoutMs ?? 30_000,
      abortOnSendFailure: this.config.abortOnSendFailure,
      signal: this.#abort.signal,
      ...(transactional === undefined ? {} : { transaction: transactional.transaction }),
    }, transactional?.listener ?? this.#acks, this.#logger.child({ lane })).run().catch(error => {
      // A stop that gave up waiting (drain deadline, forced stop) ends the retries: what is unwritten stays uncommitted, not a failure.
      // A record refused for good (a non-retriable SEND_FAILED) still fails the flow.
      if (this.#abort.signal.aborted && !(error instanceof MirrorError && error.code === ErrorCodes.SEND_FAILED && !error.retriable)) return
      this.#fail(error as Error)
    })
  }

  #sourceListener (): SourceListener {
    return {
      // After a failure nothing more is admitted or skipped: no commit may pass what stopped the flow.
      onBatch: async (batch, control) => {
        if (this.#failure !== undefined) return
        await (this.#handler === undefined ? this.#intake.accept(batch, control) : this.#acceptHandled(this.#handler, batch, control))
      },
      onSkipped: (topic, partition, nextOffset, from) => { if (this.#failure === undefined) this.#skipped(topic, partition, nextOffset, from) },
      onCorrupt: (topic, partition, batch, rangeProblem) => this.#corrupt(topic, partition, batch, rangeProblem),
      onAssignment: owned => {
        this.#progress.retain(owned)
        this.#exactlyOnce?.assign(owned)
        this.#observer.rebalanced?.(this.labels)
        this.#logger.info('partitions assigned', { partitions: owned.size })
        this.#noteCoordination()
      },
      onRebalancing: () => { void this.commit() },
      onCrash: error => this.#fail(error),
      onDecoded: (reason, bytes) => this.#observer.batchRouted?.(this.labels, 'deep', reason, bytes),
    }
  }

  /**
   * A fetched batch through the message handler, then into the intake. A handler failure fails
   * the flow here instead of rejecting to the consumer (which would retry the batch and restart):
   * nothing of this fetch is admitted, and nothing is admitted after a failure, so no commit can
   * pass the record. When the handler dropped every record, the commit may move past them.
   */
  async #acceptHandled (handler: MessageHandler, given: FetchedBatch, control: FetchControl): Promise<void> {
    if (this.#failure !== undefined || !this.#topics.has(given.topic)) return
    // A handler flow's source forwards nothing (`kafkaFlowPorts`); a batch from another source is decoded here, never passed by.
    const fetched = given.forwarded === undefined ? given : { ...given, forwarded: undefined, records: await given.forwarded.decode() }
    if (fetched.records.length === 0) return
    let handled: FetchedBatch
    try {
      handled = await handler.apply(fetched)
    } catch (error) {
      this.#fail(error as Error)
      return
    }
    if (this.#failure !== undefined) return
    if (handled.records.length > 0) return await this.#intake.accept(handled, control)
    this.#progress.observeHighWatermark(fetched.topic, fetched.partition, fetched.highWatermark, BigInt((fetched.records[0] as KafkaRecord).offset))
    if (handled.nextOffset !== undefined) this.#skipped(fetched.topic, fetched.partition, handled.nextOffset, fetched.from)
  }

  /**
   * A corrupt source batch (CRC-32C mismatch): counted, then the flow stops (`corrupt.batches`
   * fail, the default; also in skip mode when the batch's range cannot be trusted or it is a
   * transaction marker, whose loss would change which records count as aborted), or the batch is
   * left out with a warning and the source moves past it (true).
   */
  #corrupt (topic: string, partition: number, batch: CorruptBatch, rangeProblem: string | undefined): boolean {
    if (this.#failure !== undefined) return false
    this.#observer.corruptBatch?.(this.labels, topic, partition)
    const where = `topic "${topic}" partition ${partition}: the record batch at offsets ${batch.baseOffset}..${batch.endOffset - 1n} (${batch.sizeBytes} bytes${batch.control ? ', a transaction marker' : ''}) is corrupt on the ${this.config.source.alias} cluster (CRC-32C of its bytes ${crcText(batch.computedCrc)}, expected ${crcText(batch.storedCrc)} as its header says)`
    const skip = (this.config.corruptBatches ?? 'fail') === 'skip'
    if (skip && rangeProblem === undefined && !batch.control) {
      this.#logger.warn(`${where}: skipped (corrupt.batches=skip); its offsets are committed past and its records are not on the target`, { topic, partition, fromOffset: batch.baseOffset.toString(), toOffset: (batch.endOffset - 1n).toString() })
      return true
    }
    const why = !skip
      ? 'the mirror stopped; nothing of it, nor after it in the partition, was copied or committed. Repair the partition on the source (its other replicas may hold an intact copy: reassign or re-elect the leader), or set corrupt.batches to skip (--corrupt.batches skip) to leave the batch out and go on'
      : `the mirror stopped; it cannot be skipped: ${batch.control ? 'it is a transaction marker, and leaving it out would change which records count as aborted' : `its offset range cannot be trusted (${rangeProblem ?? ''})`}. Repair the partition on the source (its other replicas may hold an intact copy)`
    this.#fail(new MirrorError(ErrorCodes.CORRUPT_BATCH, `${where}: ${why}`))
    return false
  }

  /**
   * The source moved past offsets with nothing to copy. Exactly-once, only when that continues
   * from what was handed over: a skip from a fetch that is ahead (a batch fetched before a seek
   * back, kafkajs hands those over too) would pass records never written.
   */
  #skipped (topic: string, partition: number, nextOffset: bigint, from: bigint | undefined): void {
    if (this.#exactlyOnce?.contiguous(topic, partition, from, true) === false) return
    this.#progress.skipped(topic, partition, nextOffset)
  }

  /** Commits what the target acknowledged (see `OffsetCommitter`); resolves false when the commit failed. */
  commit (): Promise<boolean> {
    return this.#committer.commit()
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
    await this.#syncTopicConfigs(topics)
    await this.#syncTopicAcls(topics)
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
    this.#source = this.#ports.source()
    await this.#source.start([...this.#topics.keys()], this.#sourceListener())
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
    const failure = this.#failure
    void this.#shutdown().then(() => this.#rejectDone(failure), () => this.#rejectDone(failure))
  }

  /** Drains and stops; resolves when done. Once-only: later calls return the same promise. */
  stop (): Promise<void> {
    this.#stopRequested = true
    if (this.#state !== 'failed') this.#state = 'stopping'
    void this.#shutdown().then(committed => {
      if (this.#failure !== undefined) return
      this.#state = 'stopped'
      if (committed) this.#resolveDone()
      else this.#rejectDone(new MirrorError(ErrorCodes.COMMIT_FAILED, `flow ${this.config.name}: the final commit on the ${this.config.source.alias} cluster failed; ${this.#exactlyOnce === undefined ? 'records acknowledged since the last commit will be copied again at the next start' : 'the group\'s offsets stay behind what was copied (exactly-once resumes from the positions on the target: nothing is copied twice)'}`))
    })
    return this.done
  }

  /** Stops waiting for the target at once: retries end, in-flight records are left uncommitted. */
  abort (): void {
    this.#abort.abort()
    this.#queue.close()
    this.#queue.drainQueued()
  }

  /** Resolves with whether the final commit succeeded (true when nothing was due). */
  #shutdown (): Promise<boolean> {
    this.#stopping ??= this.#shutdownOnce()
    return this.#stopping
  }

  async #shutdownOnce (): Promise<boolean> {
    // A stop during start cuts the group join short (it can wait a whole session timeout for a
    // dead member): nothing was handed over yet, so leaving at once loses nothing.
    if (this.#state === 'stopping' && !this.#running) await this.#source.stop()
    await this.#starting?.catch(() => {})
    this.#committer.stop()
    this.#refreshTimer.stop()
    this.#source.pause()
    this.#queue.close()
    const drained = await this.#waitIdle(this.#failure === undefined ? this.#drainTimeoutMs : 0)
    if (!drained && this.#failure === undefined) this.#logger.warn('drain deadline passed; records in flight stay uncommitted and will be mirrored again', { records: this.#queue.records })
    this.#abort.abort()
    // What is still queued was never written: leave it uncommitted, to be mirrored again.
    this.#queue.drainQueued()
    await this.#refreshing?.catch(() => {})
    // With the target unreachable the offset syncs cannot be written, so the commit that waits
    // for them could wait for the client's retries: give it a bound.
    const commitBoundMs = drained ? Math.max(this.#drainTimeoutMs, FINAL_COMMIT_BOUND_MS) : FINAL_COMMIT_BOUND_MS
    let committed = false
    const settled = await settleWithin(this.commit().then(ok => { committed = ok }), commitBoundMs)
    if (!settled || !committed) this.#logger.error(this.#exactlyOnce === undefined ? 'final commit failed; what was acknowledged since the last commit will be mirrored again' : 'final commit failed; the group\'s offsets stay behind the positions on the target', { boundMs: commitBoundMs, timedOut: !settled })
    await this.#stopStep('source consumer', this.#source.stop())
    await this.#stopStep('producer workers', Promise.allSettled(this.#workers))
    await this.#stopStep('producer lanes', this.#exactlyOnce?.stop() ?? Promise.resolve())
    await this.#stopStep('target producers', Promise.all(this.#ports.sinks.map(sink => sink.stop())))
    await this.#stopStep('positions', this.#ports.exactlyOnce?.positions.stop() ?? Promise.resolve())
    await this.#stopStep('source admin', this.#ports.sourceTopics.stop())
    await this.#stopStep('target admin', this.#ports.targetTopics.stop())
    return settled && committed
  }

  /** One step of the shutdown, bounded: a client retrying against an unreachable cluster must not hold the process. */
  async #stopStep (step: string, work: Promise<unknown>): Promise<void> {
    if (!await settleWithin(work, STOP_STEP_BOUND_MS)) this.#logger.warn('shutdown step did not finish in time; going on', { step, boundMs: STOP_STEP_BOUND_MS })
  }

  /** Every `syncTopicConfigsIntervalMs`, in the coordinating process only: target topic configs follow the source's. */
  async #syncTopicConfigs (topics: ReadonlyMap<string, MirroredTopic>): Promise<void> {
    const now = Date.now()
    if (!this.config.syncTopicConfigs || !this.coordinates() || now - this.#configsSyncedAtMs < this.config.syncTopicConfigsIntervalMs) return
    this.#configsSyncedAtMs = now
    try {
      const changed = await this.#topicSync.syncConfigs([...topics.values()])
      this.#observer.topicConfigsSynced?.(this.labels, changed)
    } catch (error) {
      this.#observer.retry?.(this.labels, 'sync_topic_configs', errorLabel(error))
      this.#logger.warn('syncing topic configs failed; trying again at the next interval', { error })
    }
  }

  /** Every `syncTopicAclsIntervalMs`, in the coordinating process only: the mirrored topics' ACLs are copied to the target. */
  async #syncTopicAcls (topics: ReadonlyMap<string, MirroredTopic>): Promise<void> {
    const now = Date.now()
    if (!this.config.syncTopicAcls || !this.coordinates() || now - this.#aclsSyncedAtMs < this.config.syncTopicAclsIntervalMs) return
    this.#aclsSyncedAtMs = now
    try {
      this.#observer.topicAclsSynced?.(this.labels, await this.#topicSync.syncAcls([...topics.values()]))
    } catch (error) {
      this.#observer.retry?.(this.labels, 'sync_topic_acls', errorLabel(error))
      this.#logger.warn('syncing topic ACLs failed; trying again at the next interval', { error })
    }
  }

  /** True while this process coordinates the flow (owns its `coordinatorPartition`): group offset sync, checkpoints and pruning run here only. */
  coordinates (): boolean {
    const key = coordinatorPartition(this.#topics.keys())
    return key !== undefined && this.#source.owned().has(key)
  }

  #noteCoordination (): void {
    const now = this.coordinates()
    if (now === this.#coordinating) return
    this.#coordinating = now
    const key = coordinatorPartition(this.#topics.keys())
    this.#logger.info(now ? 'this process coordinates the flow: group offset sync, checkpoints and offset-sync pruning run here' : 'another process coordinates the flow', key === undefined ? {} : parsePartitionKey(key))
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
      targetConnected: this.#ports.sinks.every(sink => sink.connected),
      assignedPartitions: this.#source.owned().size,
      topicsMirrored: this.#topics.size,
      coordinator: this.coordinates(),
      partitions: this.#progress.snapshot(),
    }
  }
}
