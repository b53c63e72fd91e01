import { LossMonitor } from './audit/loss-monitor.js'
import { FlowDigests } from './audit/flow-digests.js'
import { withDigests } from './audit/digest-writer.js'
import { DigestMetrics } from './metrics/digest-metrics.js'
import type { LoadedMessageHandler } from './config/message-handler-loader.js'
import type { MirrorConfig } from './config/mirror-config.js'
import { GroupOffsetSync } from './offsets/group-offset-sync.js'
import { HeartbeatEmitter } from './offsets/heartbeat-emitter.js'
import { OffsetSyncPruner } from './offsets/offset-sync-pruner.js'
import { OffsetSyncWriter } from './offsets/offset-sync-writer.js'
import { Mm2OffsetSyncEmitter, withMm2OffsetSyncs } from './offsets/mm2-offset-sync-emitter.js'
import { withStartPositions } from './offsets/start-positions.js'
import { MirrorProducers } from './offsets/mirror-producers.js'
import { OffsetsObserverEvents, type OffsetsObserver } from './offsets/offsets-observer.js'
import { Observability } from './http/observability.js'
import { LossMetrics } from './metrics/loss-metrics.js'
import type { LossObserver } from './audit/loss-detector.js'
import { OffsetsMetrics } from './metrics/offsets-metrics.js'
import { kafkaFlowPorts } from './kafka/flow-ports.js'
import { MirrorFlow } from './pipeline/mirror-flow.js'
import type { FlowSnapshot } from './pipeline/pipeline-observer.js'
import { fanOut } from './shared/fan-out.js'
import type { Logger } from './shared/logger.js'

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
 * The composition root: one `MirrorFlow` per configured flow. `start()` connects and starts every
 * flow; `stop()` (once-only) drains and stops them in reverse order. `done` settles when the sidecar
 * has stopped, rejecting with the first flow failure.
 */
export class MirrorSidecar {
  readonly config: MirrorConfig
  readonly flows: readonly MirrorFlow[]
  /** Per flow (same index): its offset-sync writer, when `offsetSyncs.enabled`. */
  readonly offsetSyncWriters: ReadonlyArray<OffsetSyncWriter | undefined>
  /** Per flow (same index): MirrorMaker 2's own offset syncs, when `offsetSyncs.mm2` (mm2.properties flows). */
  readonly mm2OffsetSyncEmitters: ReadonlyArray<Mm2OffsetSyncEmitter | undefined>
  /** Per flow (same index): what tombstones offset-sync ranges whose target records are gone, when `offsetSyncs.enabled`. */
  readonly offsetSyncPruners: ReadonlyArray<OffsetSyncPruner | undefined>
  /** Per flow (same index): its checkpoints and group offset sync, when `groupSync.emitCheckpoints` or `groupSync.enabled`. */
  readonly groupOffsetSyncs: ReadonlyArray<GroupOffsetSync | undefined>
  /** Per flow (same index): its MirrorMaker 2 heartbeats, when `heartbeats.enabled`. */
  readonly heartbeatEmitters: ReadonlyArray<HeartbeatEmitter | undefined>
  /** Per flow (same index): its producer ids published on the target, and the opposite mirror's recognised on the source. */
  readonly mirrorProducers: ReadonlyArray<MirrorProducers | undefined>
  /** Per flow (same index): its range digests and continuous audit, when `digests` is set (`--digests.enabled`). */
  readonly digests: ReadonlyArray<FlowDigests | undefined>
  /** Per flow (same index): what watches it for silent loss (records that will never reach the target). */
  readonly lossMonitors: readonly LossMonitor[]
  /** Metrics, health endpoints and tracing for every flow of this process. */
  readonly observability: Observability
  readonly #logger: Logger
  #stopping: Promise<void> | undefined
  readonly done: Promise<void>

  constructor (config: MirrorConfig, options: MirrorSidecarOptions) {
    this.config = config
    this.#logger = options.logger
    this.observability = new Observability({ snapshots: () => this.snapshot(), host: config.metricsHost, port: config.metricsPort, logger: options.logger, metrics: { flows: config.flows, partitionLabels: config.metricsPartitionLabels ?? true } })
    const offsetsMetrics = new OffsetsMetrics(this.observability.metrics.registry, () => this.groupOffsetSyncs.flatMap((sync, i) => {
      const flow = this.flows[i]
      return sync === undefined || flow === undefined ? [] : [{ flow: flow.labels, groups: sync.snapshot() }]
    }))
    const observer = options.offsetsObserver === undefined ? offsetsMetrics : fanOut(OffsetsObserverEvents, offsetsMetrics, options.offsetsObserver)
    const offsets = { logger: options.logger, observer }
    // Flow-wide jobs run in the process that coordinates the flow (see pipeline/flow-coordinator.ts).
    const coordinated = (i: number) => ({ ...offsets, isCoordinator: () => this.flows[i]?.coordinates() ?? false })
    this.offsetSyncWriters = config.flows.map(flow => flow.offsetSyncs.enabled ? new OffsetSyncWriter(flow, offsets) : undefined)
    this.mm2OffsetSyncEmitters = config.flows.map(flow => Mm2OffsetSyncEmitter.of(flow, offsets))
    this.offsetSyncPruners = config.flows.map((flow, i) => flow.offsetSyncs.enabled ? new OffsetSyncPruner(flow, coordinated(i)) : undefined)
    this.groupOffsetSyncs = config.flows.map((flow, i) => flow.groupSync.emitCheckpoints || flow.groupSync.enabled ? new GroupOffsetSync(flow, coordinated(i)) : undefined)
    this.heartbeatEmitters = config.flows.map((flow, i) => flow.heartbeats.enabled ? new HeartbeatEmitter(flow, coordinated(i)) : undefined)
    // Idempotent producers have ids the opposite direction's mirror can recognise (active-active without loops).
    this.mirrorProducers = config.flows.map(flow => flow.producer.idempotent ? new MirrorProducers(flow, options.logger, observer) : undefined)
    const lossMetrics = new LossMetrics(this.observability.metrics.registry)
    const lossObserver = options.lossObserver === undefined ? lossMetrics : fanOut<LossObserver>({ lost: true }, lossMetrics, options.lossObserver)
    this.lossMonitors = config.flows.map((flow, i) => new LossMonitor(flow, {
      logger: options.logger,
      observer: lossObserver,
      snapshot: () => this.flows[i]!.snapshot(),
      ...(options.lossCheckIntervalMs === undefined ? {} : { intervalMs: options.lossCheckIntervalMs }),
    }))
    const digestMetrics = new DigestMetrics(this.observability.metrics.registry)
    this.digests = config.flows.map((flow, i) => FlowDigests.of(flow, { logger: options.logger, observer: digestMetrics, isCoordinator: coordinated(i).isCoordinator }))
    this.flows = config.flows.map((flow, i) => {
      const ackListener = this.lossMonitors[i]!.ackListener(withDigests(withMm2OffsetSyncs(this.offsetSyncWriters[i], this.mm2OffsetSyncEmitters[i]), this.digests[i]?.writer))
      const messageHandler = options.messageHandlers?.get(flow.name)?.handle
      return new MirrorFlow(flow, kafkaFlowPorts(flow, options.logger, this.mirrorProducers[i]), {
        ...(messageHandler === undefined ? {} : { messageHandler }),
        logger: options.logger,
        drainTimeoutMs: config.drainTimeoutMs,
        observer: this.observability.observer,
        tracer: this.observability.tracer,
        ackListener,
      })
    })
    this.done = Promise.all([...this.lossMonitors.map(monitor => monitor.done), ...this.flows.map(flow => flow.done)]).then(() => undefined)
    this.done.catch(() => {})
  }

  async start (): Promise<void> {
    await this.observability.start()
    for (const [i, flow] of this.flows.entries()) {
      if (this.#stopping !== undefined) return
      const flowConfig = this.config.flows[i]
      // Before the flow's consumers join: a partition its group never committed starts where MirrorMaker 2 stopped.
      if (flowConfig?.mm2Positions !== undefined) await withStartPositions(flowConfig, this.#logger, positions => positions.takeOverFromMm2())
      // Syncs topic first: the flow's first commit waits for syncs to be durable.
      await this.offsetSyncWriters[i]?.start()
      await this.mm2OffsetSyncEmitters[i]?.start()
      await this.digests[i]?.start()
      await this.lossMonitors[i]?.start()
      // A loss that stops the flow (a recreated topic) takes the process down as a flow failure does.
      this.lossMonitors[i]?.done.catch(() => { void this.stop() })
      await flow.start()
      await this.groupOffsetSyncs[i]?.start()
      await this.heartbeatEmitters[i]?.start()
      await this.offsetSyncPruners[i]?.start()
      // A flow that fails takes the whole process down: the supervisor restarts it from committed offsets.
      flow.done.catch(() => { void this.stop() })
    }
  }

  snapshot (): FlowSnapshot[] {
    return this.flows.map(flow => flow.snapshot())
  }

  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#logger.info('stopping: draining in-flight records and committing')
      this.observability.beginShutdown()
      for (const [i, flow] of [...this.flows.entries()].reverse()) {
        await this.offsetSyncPruners[i]?.stop().catch(() => {})
        await this.heartbeatEmitters[i]?.stop().catch(() => {})
        await this.groupOffsetSyncs[i]?.stop().catch(() => {})
        await flow.stop().catch(() => {})
        await this.lossMonitors[i]?.stop().catch(() => {})
        await this.digests[i]?.stop().catch(() => {})
        await this.mm2OffsetSyncEmitters[i]?.stop().catch(error => this.#logger.warn('MirrorMaker 2 offset syncs did not stop cleanly', { flow: flow.config.name, error }))
        await this.offsetSyncWriters[i]?.stop().catch(() => {})
        await this.mirrorProducers[i]?.stop().catch(() => {})
      }
      await this.observability.stop()
    })()
    return this.#stopping
  }

  /** Forced stop (second signal): give up on in-flight records; they stay uncommitted. */
  abort (): void {
    for (const flow of this.flows) flow.abort()
  }
}
