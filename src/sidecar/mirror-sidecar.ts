import type { LossObserver } from './integrity/loss-detector.js'
import type { FlowDigests } from './integrity/flow-digests.js'
import type { LoadedMessageHandler } from '../config/message-handler-loader.js'
import type { MirrorConfig } from '../config/mirror-config.js'
import { createFlowRuntime, type BuiltFlow } from './flow-runtime-factory.js'
import { Observability } from './http/observability.js'
import { DigestMetrics } from './metrics/digest-metrics.js'
import { LossMetrics } from './metrics/loss-metrics.js'
import { OffsetsMetrics } from './metrics/offsets-metrics.js'
import { registerRetentionMetrics } from './metrics/retention-metrics.js'
import { OffsetsObserverEvents, type OffsetsObserver } from './offsets/offsets-observer.js'
import { FlowRuntime } from './pipeline/flow-runtime.js'
import type { MirrorFlow } from './pipeline/mirror-flow.js'
import type { FlowSnapshot } from '../ports/pipeline-observer.js'
import { fanOut } from '../shared/fan-out.js'
import type { Logger } from '../shared/logger.js'

export interface MirrorSidecarOptions {
  readonly logger: Logger
  /** Offset-sync and group-sync counters (metrics). */
  readonly offsetsObserver?: OffsetsObserver
  /** The message handlers of the flows that name one, by flow name: what `loadMessageHandlers(config)` returns. */
  readonly messageHandlers?: ReadonlyMap<string, LoadedMessageHandler>
  /** Hears each silent loss the loss monitors find (besides the metric). */
  readonly lossObserver?: LossObserver
  /** Milliseconds between loss checks of each flow; default 5000. */
  readonly lossCheckIntervalMs?: number
}

/**
 * The composition root: one `FlowRuntime` per configured flow (`createFlowRuntime`), after the
 * process's observability (metrics, health endpoints, tracing). `start()` starts them in order;
 * `stop()` (once-only) turns readiness to 503, then stops the flows in reverse order, each
 * component of each in reverse (every failure logged), and observability last. A flow that fails
 * (or a loss that stops it) stops the process. `done` settles when the sidecar has stopped,
 * rejecting with the first flow failure.
 */
export class MirrorSidecar {
  readonly config: MirrorConfig
  /** Each flow as built: its runtime, pipeline, group offset sync and digests. */
  readonly built: readonly BuiltFlow[]
  /** Metrics, health endpoints and tracing for every flow of this process. */
  readonly observability: Observability
  readonly #logger: Logger
  readonly #runtime: FlowRuntime
  #stopping: Promise<void> | undefined
  readonly done: Promise<void>

  constructor (config: MirrorConfig, options: MirrorSidecarOptions) {
    this.config = config
    this.#logger = options.logger
    this.observability = new Observability({
      snapshots: () => this.snapshot(),
      host: config.metricsHost,
      port: config.metricsPort,
      logger: options.logger,
      metrics: { flows: config.flows, partitionLabels: config.metricsPartitionLabels ?? true },
    })
    const registry = this.observability.metrics.registry
    const offsetsMetrics = new OffsetsMetrics(registry, () => this.built.flatMap(({ flow, groupOffsetSync }) =>
      groupOffsetSync === undefined ? [] : [{ flow: flow.labels, groups: groupOffsetSync.snapshot() }]))
    const lossMetrics = new LossMetrics(registry)
    registerRetentionMetrics(registry, () => this.built.map(({ flow, retention }) => ({ flow: flow.labels, topics: retention.snapshot() })))
    const shared = {
      logger: options.logger,
      drainTimeoutMs: config.drainTimeoutMs,
      observability: this.observability,
      offsetsObserver: options.offsetsObserver === undefined ? offsetsMetrics : fanOut(OffsetsObserverEvents, offsetsMetrics, options.offsetsObserver),
      lossObserver: options.lossObserver === undefined ? lossMetrics : fanOut<LossObserver>({ lost: true, foreign: true }, lossMetrics, options.lossObserver),
      digestMetrics: new DigestMetrics(registry),
      ...(options.lossCheckIntervalMs === undefined ? {} : { lossCheckIntervalMs: options.lossCheckIntervalMs }),
      ...(options.messageHandlers === undefined ? {} : { messageHandlers: options.messageHandlers }),
    }
    this.built = config.flows.map(flow => createFlowRuntime(flow, shared))
    this.#runtime = new FlowRuntime({ name: 'process', logger: options.logger, stopBoundMs: config.drainTimeoutMs }, [
      { name: 'observability', start: () => this.observability.start(), stop: () => this.observability.stop() },
      ...this.built.map(built => built.runtime),
    ])
    // A flow that fails (or a loss that stops it) takes the whole process down: the supervisor restarts it from committed offsets.
    for (const { runtime } of this.built) runtime.onFailure(() => { void this.stop() })
    this.done = Promise.all(this.built.map(built => built.runtime.done)).then(() => undefined)
    // Observed by whoever awaits it; without this an unawaited rejection would end the process.
    this.done.catch(() => { /* seen by whoever awaits done */ })
  }

  /** The pipeline of each flow, in configuration order. */
  get flows (): readonly MirrorFlow[] { return this.built.map(built => built.flow) }

  /** Per flow (same index): its range digests and continuous audit, when `--digests.enabled`. */
  get digests (): ReadonlyArray<FlowDigests | undefined> { return this.built.map(built => built.digests) }

  start (): Promise<void> {
    return this.#runtime.start()
  }

  snapshot (): FlowSnapshot[] {
    return this.built.map(built => built.flow.snapshot())
  }

  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#logger.info('stopping: draining in-flight records and committing')
      this.observability.beginShutdown()
      await this.#runtime.stop()
    })()
    return this.#stopping
  }

  /** Forced stop (second signal): give up on in-flight records; they stay uncommitted. */
  abort (): void {
    for (const built of this.built) built.flow.abort()
  }
}
