import type { FlowConfig } from '../../config/mirror-config.js'
import { settleWithin } from '../../shared/deadline.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import type { MessageHandlerFunction } from '../../shared/message-handler-api.js'
import { AckRecorder } from './ack-recorder.js'
import { BatchIntake } from './batch-intake.js'
import type { DeliveryMode } from './delivery-mode.js'
import { deliveryModeFor } from './delivery-modes.js'
import { FetchDispatch } from './fetch-dispatch.js'
import { FlowCoordinator } from './flow-coordinator.js'
import { MessageHandler } from './message-handler.js'
import { OffsetCommitter } from './offset-committer.js'
import { PartitionProgress } from './partition-progress.js'
import { flowLabels, type FlowLabels, type FlowSnapshot, type LifecycleState, type PipelineObserver } from '../../ports/pipeline-observer.js'
import type { AckListener, BatchTracer, FlowPorts, RecordSink } from '../../ports/ports.js'
import { ProducerWorker } from './producer-worker.js'
import { SourceSubscription } from './source-subscription.js'
import { TopicSettingsSync } from './topic-settings-sync.js'
import { TopicSync, type MirroredTopic } from './topic-sync.js'
import { OnDemandSink } from './on-demand-sink.js'
import { FlowRuntime, type Component } from './flow-runtime.js'

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
 * One copy from a source cluster to a target cluster, through the ports it is given. Its parts
 * have names: the source subscription (`SourceSubscription`, topic discovery and re-subscription),
 * what the source tells the flow (`FetchDispatch`, with the message handler), the intake of
 * fetched batches with backpressure (`BatchIntake`), the delivery mode (`DeliveryMode`: the queue,
 * the intake's gate and each lane's writes), one producer lane per sink (`ProducerWorker`),
 * acknowledgements (`AckRecorder`), the committer (`OffsetCommitter`) and who coordinates the flow
 * (`FlowCoordinator`). This class holds the lifecycle only: its parts are the components of one
 * `FlowRuntime` (`#components`), started in order and stopped in reverse, each stop within its bound.
 *
 * States: starting -> running -> stopping -> stopped, or failed after a send failure with
 * abort.on.send.failure or a source crash (then `done` rejects with an error naming the cause).
 * `stop()` is once-only: pause fetching, let the producers drain the queue within the deadline,
 * commit what the target acknowledged, then disconnect. When that final commit fails, `done`
 * rejects (`MIRROR_COMMIT_FAILED`): what was acknowledged since the last commit is copied again.
 */
export class MirrorFlow {
  readonly name = 'pipeline'
  readonly config: FlowConfig
  readonly labels: FlowLabels
  /** The coordinator-only sync of target topic configs and ACLs; started and stopped by the flow's runtime. */
  readonly topicSettings: TopicSettingsSync
  readonly #logger: Logger
  readonly #observer: PipelineObserver
  readonly #drainTimeoutMs: number
  readonly #ports: FlowPorts
  readonly #topicSync: TopicSync
  readonly #progress = new PartitionProgress()
  readonly #delivery: DeliveryMode
  readonly #acks: AckRecorder
  readonly #committer: OffsetCommitter
  readonly #subscription: SourceSubscription
  readonly #coordinator: FlowCoordinator
  /** Aborting it ends the producers' retries (drain deadline passed, forced stop). */
  readonly #abort = new AbortController()
  #workers: Array<Promise<void>> = []
  /** The lanes' sinks: the ports' own, those of on-demand lanes wrapped (`OnDemandSink`). */
  readonly #laneSinks: readonly RecordSink[]
  /** Starts the flow's parts in order and stops them in reverse, each within its bound (`#components`). */
  readonly #runtime: FlowRuntime
  #state: LifecycleState = 'starting'
  #starting: Promise<void> | undefined
  /** Whether the drain finished within its deadline: set by the shutdown's drain, read by its final commit. */
  #drained = false
  /** Whether the final commit succeeded: set by the shutdown's final commit. */
  #committed = false
  /** Set once start completed; a stop before that does not drain. */
  #running = false
  #failure: MirrorError | undefined
  readonly #failed: Promise<void>
  #resolveFailed!: () => void
  #resolveDone!: () => void
  #rejectDone!: (error: Error) => void
  /** Settles when the flow has stopped: resolves after `stop()`, rejects when the flow failed. */
  readonly done: Promise<void>

  constructor (config: FlowConfig, ports: FlowPorts, options: MirrorFlowOptions) {
    this.config = config
    this.labels = flowLabels(config)
    this.#logger = options.logger.child({ flow: config.name })
    const observer = options.observer ?? {}
    this.#observer = observer
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 30_000
    this.#ports = ports
    this.#topicSync = new TopicSync(ports.sourceTopics, ports.targetTopics, config, this.#logger)
    const handler = this.#messageHandler(options.messageHandler)
    this.#acks = new AckRecorder(config, this.labels, this.#progress, observer, options.ackListener, this.#logger)
    this.#delivery = deliveryModeFor(config, ports, {
      acks: this.#acks,
      progress: this.#progress,
      labels: this.labels,
      observer,
      logger: this.#logger,
      signal: this.#abort.signal,
      onFatal: error => this.#fail(error),
      seek: offsets => this.#subscription.current.seek(offsets),
      ackListener: options.ackListener,
    })
    // A lane that writes only at times gets its producer at its first write (`OnDemandSink`).
    const onDemandFrom = this.#delivery.onDemandFrom
    this.#laneSinks = ports.sinks.map((sink, lane) => (lane < onDemandFrom ? sink : new OnDemandSink(sink)))
    const topics = (): ReadonlyMap<string, MirroredTopic> => this.#subscription.topics
    this.#coordinator = new FlowCoordinator(() => topics().keys(), () => this.#subscription.current.owned(), this.#logger)
    const topicOf = (topic: string): MirroredTopic | undefined => this.#subscription.topics.get(topic)
    const intake = new BatchIntake(config, this.labels, this.#delivery.queue, this.#progress, observer, options.tracer, topicOf, this.#delivery.gate)
    const flow = this
    const dispatch = new FetchDispatch(config, {
      intake,
      handler,
      progress: this.#progress,
      delivery: this.#delivery,
      coordinator: this.#coordinator,
      topics,
      labels: this.labels,
      observer,
      logger: this.#logger,
      failure: { get failed () { return flow.#failure !== undefined }, fail: error => this.#fail(error) },
      rejoining: () => this.#rejoining(),
    })
    this.#subscription = new SourceSubscription({
      sources: ports.source,
      topicSync: this.#topicSync,
      listener: dispatch,
      refreshIntervalMs: config.refreshTopicsIntervalMs,
      drain: () => this.#waitIdle(this.#drainTimeoutMs),
      commit: () => this.commit(),
      running: () => this.#state === 'running',
      labels: this.labels,
      observer,
      logger: this.#logger,
    })
    this.#committer = new OffsetCommitter({
      labels: this.labels,
      progress: this.#progress,
      source: () => this.#subscription.current,
      ackListener: options.ackListener,
      observer,
      logger: this.#logger,
      intervalMs: config.offsetCommitIntervalMs,
    })
    this.topicSettings = new TopicSettingsSync(config, {
      topicSync: this.#topicSync, topics, isCoordinator: () => this.coordinates(), labels: this.labels, observer, logger: this.#logger,
    })
    this.#runtime = new FlowRuntime({ name: this.name, logger: this.#logger, stopBoundMs: STOP_STEP_BOUND_MS }, this.#components())
    this.#failed = new Promise(resolve => { this.#resolveFailed = resolve })
    this.done = new Promise((resolve, reject) => { this.#resolveDone = resolve; this.#rejectDone = reject })
    // Observed by whoever awaits it; without this an unawaited rejection would end the process.
    this.done.catch(() => { /* seen by whoever awaits done */ })
  }

  #messageHandler (loaded: MessageHandlerFunction | undefined): MessageHandler | undefined {
    const named = this.config.messageHandler
    if (named !== undefined && loaded === undefined) {
      throw new MirrorError(ErrorCodes.CONFIG, `flow ${this.config.name}: ${named.key} "${named.module}" is not loaded; ` +
        'load it with loadMessageHandlers(config) and pass it as messageHandler')
    }
    if (loaded === undefined) return undefined
    return new MessageHandler(loaded, { module: named?.module ?? 'messageHandler', args: named?.args, flow: this.config.name })
  }

  get state (): LifecycleState { return this.#state }

  /** The longest `stop()` takes: the drain deadline, the final commit's bound, then each client's stop (the bounded components). */
  get stopBoundMs (): number {
    const clientStops = this.#runtime.components
      .map(component => component.stopBoundMs ?? STOP_STEP_BOUND_MS)
      .filter(boundMs => Number.isFinite(boundMs))
      .reduce((sum, boundMs) => sum + boundMs, 0)
    return this.#drainTimeoutMs + Math.max(this.#drainTimeoutMs, FINAL_COMMIT_BOUND_MS) + clientStops
  }

  /** Connects, creates missing target topics, joins the source group and starts copying (the runtime's components, in order). */
  start (): Promise<void> {
    this.#starting ??= this.#runtime.start()
    return this.#starting
  }

  /**
   * The flow's parts as components of its runtime, in start order; the runtime stops them in
   * reverse, each within its bound, so `stop()` runs: the drain (the stop of `copying`, within the
   * drain deadline), the final commit (within its own bound), then source consumer, producer
   * workers, delivery, target producers, target admin and source admin (5 s each, the delivery 10 s).
   * A stop that fails or passes its bound is logged, and the next one runs.
   */
  #components (): Component[] {
    const { sourceTopics, targetTopics } = this.#ports
    const laneSinks = this.#laneSinks
    const bounded = STOP_STEP_BOUND_MS
    return [
      { name: 'source admin', start: () => sourceTopics.start(), stop: () => sourceTopics.stop(), stopBoundMs: bounded },
      { name: 'target admin', start: () => targetTopics.start(), stop: () => targetTopics.stop(), stopBoundMs: bounded },
      {
        // Stopped after the delivery: its stop gives the lanes' transactional ids up through these sinks.
        name: 'target producers',
        start: async () => { await Promise.all(laneSinks.map(sink => sink.start())) },
        stop: async () => { await Promise.all(laneSinks.map(sink => sink.stop())) },
        stopBoundMs: bounded,
      },
      // Ready before anything is copied (`DeliveryMode.start`); its stop gives every lane up.
      { name: 'delivery', start: () => this.#delivery.start(), stop: () => this.#delivery.stop(), stopBoundMs: 2 * bounded },
      {
        name: 'topic discovery',
        start: () => this.#subscription.discover(),
        stop: async () => { /* nothing runs after the discovery */ },
        // Its stop has nothing to wait for.
        stopBoundMs: 0,
      },
      {
        name: 'producer workers',
        start: async () => { this.#workers = laneSinks.map((sink, lane) => this.#runWorker(sink, lane)) },
        // Each worker's end is already handled (`#runWorker`): allSettled only waits for them.
        stop: async () => { await Promise.allSettled(this.#workers) },
        stopBoundMs: bounded,
      },
      { name: 'source consumer', start: () => this.#subscription.subscribe(), stop: () => this.#subscription.current.stop(), stopBoundMs: bounded },
      {
        name: 'final commit',
        start: async () => { /* commits run by interval once the flow runs (`copying`) */ },
        stop: async () => { this.#committed = await this.#finalCommit(this.#drained) },
        // Bounded inside: the bound depends on whether the drain finished (`#finalCommit`).
        stopBoundMs: Number.POSITIVE_INFINITY,
      },
      {
        name: 'copying',
        start: async () => { this.#run() },
        stop: async () => { this.#drained = await this.#drainAfterStart() },
        // Bounded inside: by the drain deadline, none after a failure.
        stopBoundMs: Number.POSITIVE_INFINITY,
      },
    ]
  }

  /** The last step of the start: the flow runs, commits by interval and looks for new topics. */
  #run (): void {
    this.#state = 'running'
    this.#running = true
    this.#committer.start()
    this.#subscription.startRefresh()
    this.#logger.info('mirroring', {
      topics: [...this.#subscription.topics.keys()],
      source: this.config.source.brokers,
      target: this.config.target.brokers,
      ...(this.config.messageHandler === undefined ? {} : { messageHandler: this.config.messageHandler.module }),
    })
  }

  #runWorker (sink: RecordSink, lane: number): Promise<void> {
    const { delivery, listener } = this.#delivery.lane(lane)
    return new ProducerWorker(delivery, sink, {
      maxRequestBytes: Math.max(this.config.producer.maxRequestSizeBytes, this.config.producer.batchSizeBytes),
      maxMessageBytes: topic => this.#topicSync.maxMessageBytes(topic),
      requestTimeoutMs: this.config.target.requestTimeoutMs ?? 30_000,
      abortOnSendFailure: this.config.abortOnSendFailure,
      signal: this.#abort.signal,
    }, listener, this.#logger.child({ lane })).run().catch(error => {
      // A stop that gave up waiting (drain deadline, forced stop) ends the retries: what is unwritten stays uncommitted, not a failure.
      // A record refused for good (a non-retriable SEND_FAILED) still fails the flow.
      if (this.#abort.signal.aborted && !(error instanceof MirrorError && error.code === ErrorCodes.SEND_FAILED && !error.retriable)) return
      this.#fail(error as Error)
    })
  }

  /** Commits what the target acknowledged (see `OffsetCommitter`); resolves false when the commit failed. */
  commit (): Promise<boolean> {
    return this.#committer.commit()
  }

  /**
   * Before this member joins its group again and gives its partitions up (a rebalance, eager
   * protocol): at least once, waits until what was handed over so far is acknowledged, then
   * commits it, while the group still takes this generation's commits.
   * The partitions' next owners start where the target's copy ends, so a rebalance copies nothing
   * acknowledged again. Exactly once, a partition's next owner starts from the lanes' positions,
   * not the group's offset: only the commit. The source bounds the whole (`KafkaRecordSource`).
   */
  async #rejoining (): Promise<void> {
    // Bounded: a flow that failed or a target that does not answer acknowledges nothing more.
    if (this.config.exactlyOnce === undefined) {
      await settleWithin(Promise.race([this.#progress.whenLanded(), this.#failed]), this.config.consumer.sessionTimeoutMs)
    }
    // The commit logs and counts its own failure; the next commit retries.
    await this.commit()
  }

  /** Picks up topics created (or partitions added) on the source since the last look. */
  refreshTopics (): Promise<void> {
    return this.#subscription.refresh()
  }

  /**
   * Resolves true once nothing handed over is unacknowledged and the queue holds nothing (events
   * of `PartitionProgress` and `BoundedQueue`, no polling); false when `timeoutMs` passed first or
   * the flow failed.
   */
  async #waitIdle (timeoutMs: number): Promise<boolean> {
    const queue = this.#delivery.queue
    const isIdle = (): boolean => this.#progress.idle && queue.records === 0 && queue.bytes === 0
    if (isIdle()) return true
    if (this.#failure !== undefined || timeoutMs <= 0) return false
    let gaveUp = false
    const idle = (async () => {
      // Each wait is for a change: progress to go idle when it is not, else the queue to empty.
      while (!isIdle() && !gaveUp) await (this.#progress.idle ? queue.whenEmpty() : this.#progress.whenIdle())
    })()
    const settled = await settleWithin(Promise.race([idle, this.#failed]), timeoutMs)
    gaveUp = true
    return settled && this.#failure === undefined && isIdle()
  }

  #fail (error: Error): void {
    if (this.#failure !== undefined) return
    this.#failure = error instanceof MirrorError ? error : new MirrorError(ErrorCodes.INTERNAL, error.message, { cause: error })
    this.#state = 'failed'
    this.#resolveFailed()
    const failure = this.#failure
    this.#observer.fatal?.(this.labels, failure)
    void this.#shutdown().then(() => this.#rejectDone(failure), () => this.#rejectDone(failure))
  }

  /** Drains and stops; resolves when done. Once-only: later calls return the same promise. */
  stop (): Promise<void> {
    if (this.#state !== 'failed') this.#state = 'stopping'
    void this.#shutdown().then(committed => {
      if (this.#failure !== undefined) return
      this.#state = 'stopped'
      const what = `flow ${this.config.name}: the final commit on the ${this.config.source.alias} cluster failed`
      if (committed) this.#resolveDone()
      else this.#rejectDone(new MirrorError(ErrorCodes.COMMIT_FAILED, `${what}; ${this.#delivery.uncommittedConsequence}`))
    })
    return this.done
  }

  /** Stops waiting for the target at once: retries end, in-flight records are left uncommitted. */
  abort (): void {
    this.#abort.abort()
    this.#delivery.queue.close()
    this.#delivery.queue.drainQueued()
  }

  /** Stops the runtime (once-only); resolves with whether the final commit succeeded (true when nothing was due). */
  async #shutdown (): Promise<boolean> {
    await this.#runtime.stop()
    return this.#committed
  }

  /** Waits for the start to end (cutting a group join short), then drains (`#drain`). */
  async #drainAfterStart (): Promise<boolean> {
    // A stop during start cuts the group join short (it can wait a whole session timeout for a
    // dead member): nothing was handed over yet, so leaving at once loses nothing.
    if (this.#state === 'stopping' && !this.#running) await this.#subscription.current.stop()
    // A start that failed was reported to whoever called start(); here only its end matters.
    await this.#starting?.catch(() => undefined)
    return await this.#drain()
  }

  /** Stops intake, lets the producers write what is queued within the drain deadline (none after a failure), then ends their retries. */
  async #drain (): Promise<boolean> {
    const queue = this.#delivery.queue
    this.#committer.stop()
    const refreshEnded = this.#subscription.stopRefresh()
    this.#subscription.current.pause()
    queue.close()
    const drained = await this.#waitIdle(this.#failure === undefined ? this.#drainTimeoutMs : 0)
    if (!drained && this.#failure === undefined) {
      this.#logger.warn('drain deadline passed; records in flight stay uncommitted and will be mirrored again', { records: queue.records })
    }
    this.#abort.abort()
    // What is still queued was never written: leave it uncommitted, to be mirrored again.
    queue.drainQueued()
    await refreshEnded
    return drained
  }

  /** Commits what the target acknowledged, within a bound; true when it succeeded (or nothing was due). */
  async #finalCommit (drained: boolean): Promise<boolean> {
    // With the target unreachable the offset syncs cannot be written, so the commit that waits
    // for them could wait for the client's retries: give it a bound.
    const commitBoundMs = drained ? Math.max(this.#drainTimeoutMs, FINAL_COMMIT_BOUND_MS) : FINAL_COMMIT_BOUND_MS
    let committed = false
    const settled = await settleWithin(this.commit().then(ok => { committed = ok }), commitBoundMs)
    if (settled && committed) return true
    this.#logger.error(`final commit failed; ${this.#delivery.uncommittedConsequence}`, { boundMs: commitBoundMs, timedOut: !settled })
    return false
  }

  /** True while this process coordinates the flow (owns its `coordinatorPartition`): group offset sync, checkpoints and pruning run here only. */
  coordinates (): boolean {
    return this.#coordinator.coordinates()
  }

  snapshot (): FlowSnapshot {
    const queue = this.#delivery.queue
    const source = this.#subscription.current
    return {
      labels: this.labels,
      state: this.#state,
      queueRecords: queue.records,
      queueBytes: queue.bytes,
      queueCapacityRecords: queue.capacityRecords,
      queueCapacityBytes: queue.capacityBytes,
      sourceConnected: source.connected,
      targetConnected: this.#laneSinks.every(sink => sink.connected),
      producerLanes: { total: this.#laneSinks.length, writing: this.#delivery.lanesWriting() },
      assignedPartitions: source.owned().size,
      topicsMirrored: this.#subscription.topics.size,
      coordinator: this.coordinates(),
      ...(source.transcoding === undefined ? {} : { transcoder: source.transcoding }),
      partitions: this.#progress.snapshot(),
    }
  }
}
