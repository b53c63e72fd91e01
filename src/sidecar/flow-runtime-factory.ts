import { FlowDigests } from './integrity/flow-digests.js'
import type { LossObserver } from './integrity/loss-detector.js'
import { LossMonitor } from './integrity/loss-monitor.js'
import { SourceRetention } from './integrity/source-retention.js'
import type { LoadedMessageHandler } from '../config/message-handler-loader.js'
import type { FlowConfig } from '../config/mirror-config.js'
import type { Observability } from './http/observability.js'
import { kafkaFlowPorts } from '../kafka/flow-ports.js'
import { retryWhileStarting } from '../kafka/start-retry.js'
import type { DigestMetrics } from './metrics/digest-metrics.js'
import { GroupOffsetSync } from './offsets/group-offset-sync.js'
import { HeartbeatEmitter } from './offsets/heartbeat-emitter.js'
import { MirrorProducers } from './offsets/mirror-producers.js'
import { Mm2OffsetSyncEmitter } from './offsets/mm2-offset-sync-emitter.js'
import { OffsetSyncPruner } from './offsets/offset-sync-pruner.js'
import { OffsetSyncWriter } from './offsets/offset-sync-writer.js'
import type { OffsetsObserver } from './offsets/offsets-observer.js'
import { withStartPositions } from './offsets/start-positions.js'
import { flowAckListener } from './pipeline/flow-ack-listener.js'
import { FlowRuntime, type Component } from './pipeline/flow-runtime.js'
import { MirrorFlow } from './pipeline/mirror-flow.js'
import type { Logger } from '../shared/logger.js'
import { partitionKey } from '../shared/partition-key.js'

/** What every flow of the process shares. */
export interface FlowRuntimeContext {
  readonly logger: Logger
  readonly drainTimeoutMs: number
  readonly observability: Observability
  readonly offsetsObserver: OffsetsObserver
  readonly lossObserver: LossObserver
  readonly digestMetrics: DigestMetrics
  /** Milliseconds between loss checks; default: scaled with the flow's partitions. */
  readonly lossCheckIntervalMs?: number
  readonly messageHandlers?: ReadonlyMap<string, LoadedMessageHandler>
}

/** One flow as built: its runtime, and the parts the process reads (snapshots, metrics). */
export interface BuiltFlow {
  readonly runtime: FlowRuntime
  readonly flow: MirrorFlow
  /** Its checkpoints and group offset sync, when `groupSync.emitCheckpoints` or `groupSync.enabled`. */
  readonly groupOffsetSync: GroupOffsetSync | undefined
  /** Its range digests and continuous audit, when `digests` is set (`--digests.enabled`). */
  readonly digests: FlowDigests | undefined
  /** The retention.ms of its source topics (`kafka_mirror_source_retention_seconds`). */
  readonly retention: SourceRetention
}

/** A component made of an object with `start()`/`stop()`. */
function component (name: string, part: { start: () => Promise<void>, stop: () => Promise<void>, readonly done?: Promise<void> }): Component {
  return { name, start: () => part.start(), stop: () => part.stop(), ...(part.done === undefined ? {} : { done: part.done }) }
}

/**
 * Builds the runtime of one flow: its components in start order (stopped in reverse):
 * 1. mirror producers (its producer ids on the target; started by the first producer lane that publishes),
 * 2. the takeover from MirrorMaker 2 (mm2.properties flows: a partition the flow's group never
 *    committed starts where MirrorMaker 2 stopped; before the loss monitor reads the commits),
 * 3. offset-sync writer and MirrorMaker 2's own offset syncs (the flow's first commit waits for syncs to be durable),
 * 4. digests, 5. loss monitor (reads the committed offsets before the consumer may reset them),
 * 6. the pipeline (`MirrorFlow`),
 * 7. coordination: the work only the coordinating process does (group offset sync and
 *    checkpoints, MirrorMaker 2 heartbeats, offset-sync pruning, topic config and ACL sync).
 */
export function createFlowRuntime (config: FlowConfig, context: FlowRuntimeContext): BuiltFlow {
  const { logger, observability, offsetsObserver: observer } = context
  const offsets = { logger, observer }
  // Set below: the coordinator-only jobs ask the flow whether this process coordinates it (see sidecar/pipeline/flow-coordinator.ts).
  // eslint-disable-next-line prefer-const -- read by isCoordinator before the assignment below
  let flow: MirrorFlow | undefined
  const coordinated = { ...offsets, isCoordinator: () => flow?.coordinates() ?? false }
  const offsetSyncWriter = config.offsetSyncs.enabled ? new OffsetSyncWriter(config, offsets) : undefined
  const mm2OffsetSyncs = Mm2OffsetSyncEmitter.of(config, offsets)
  // Idempotent producers have ids the opposite direction's mirror can recognise (active-active without loops).
  const mirrorProducers = config.producer.idempotent ? new MirrorProducers(config, logger, observer) : undefined
  const lossMonitor = new LossMonitor(config, {
    logger,
    observer: context.lossObserver,
    snapshot: () => (flow as MirrorFlow).snapshot(),
    ...(context.lossCheckIntervalMs === undefined ? {} : { intervalMs: context.lossCheckIntervalMs }),
  })
  const retention = new SourceRetention(config, logger.child({ flow: config.name }))
  const digests = FlowDigests.of(config, { logger, observer: context.digestMetrics, isCoordinator: coordinated.isCoordinator })
  const messageHandler = context.messageHandlers?.get(config.name)?.handle
  // Partitions that start from MirrorMaker 2's position (filled by the takeover, before the flow starts), by partition key.
  const mm2Starts = new Map<string, bigint>()
  const startOffset = (topic: string, partition: number): bigint | undefined => {
    const offset = mm2Starts.get(partitionKey(topic, partition))
    if (offset !== undefined) {
      logger.info("partition starts from MirrorMaker 2's position (the group has no offset for it)", { flow: config.name, topic, partition, offset })
    }
    return offset
  }
  const ports = kafkaFlowPorts(config, logger, mirrorProducers, config.mm2Positions === undefined ? undefined : startOffset)
  flow = new MirrorFlow(config, ports, {
    ...(messageHandler === undefined ? {} : { messageHandler }),
    logger,
    drainTimeoutMs: context.drainTimeoutMs,
    observer: observability.observer,
    tracer: observability.tracer,
    ackListener: flowAckListener({ guard: lossMonitor, offsetSyncs: offsetSyncWriter, mm2OffsetSyncs, digests: digests?.writer }),
  })
  const groupOffsetSync = config.groupSync.emitCheckpoints || config.groupSync.enabled ? new GroupOffsetSync(config, coordinated) : undefined
  const heartbeats = config.heartbeats.enabled ? new HeartbeatEmitter(config, coordinated) : undefined
  const pruner = config.offsetSyncs.enabled ? new OffsetSyncPruner(config, coordinated) : undefined
  const runtimeOptions = { logger: logger.child({ flow: config.name }), stopBoundMs: context.drainTimeoutMs }
  const coordination = new FlowRuntime({ ...runtimeOptions, name: `${config.name} coordination` }, [
    ...(groupOffsetSync === undefined ? [] : [component('group offset sync', groupOffsetSync)]),
    ...(heartbeats === undefined ? [] : [component('heartbeats', heartbeats)]),
    ...(pruner === undefined ? [] : [component('offset-sync pruner', pruner)]),
    flow.topicSettings,
  ])
  const runtime = new FlowRuntime({ ...runtimeOptions, name: config.name }, [
    // Started on demand by the producer lanes that publish their ids (they share one start).
    ...(mirrorProducers === undefined
      ? []
      : [
          {
            name: 'mirror producers',
            start: async () => {
              /* the lanes start it */
            },
            stop: () => mirrorProducers.stop(),
          },
        ]),
    ...(config.mm2Positions === undefined
      ? []
      : [
          {
            name: 'MirrorMaker 2 takeover',
            start: async () => {
              // Read at start, when a group coordinator may still be loading or moving (NOT_COORDINATOR,
              // COORDINATOR_LOAD_IN_PROGRESS): tried again for as long as that lasts, as the producer's start is.
              const taken = await retryWhileStarting(
                'reading where MirrorMaker 2 stopped',
                () => withStartPositions(config, logger, positions => positions.takeOverFromMm2()),
                logger
              )
              for (const start of taken) mm2Starts.set(partitionKey(start.topic, start.partition), start.offset)
            },
            stop: async () => {
              /* nothing kept running: the start reads, commits and disconnects */
            },
          },
        ]),
    ...(offsetSyncWriter === undefined ? [] : [component('offset-sync writer', offsetSyncWriter)]),
    ...(mm2OffsetSyncs === undefined ? [] : [component('MirrorMaker 2 offset syncs', mm2OffsetSyncs)]),
    ...(digests === undefined ? [] : [component('digests', digests)]),
    component('loss monitor', lossMonitor),
    component('source retention', retention),
    flow,
    { name: 'coordination', start: () => coordination.start(), stop: () => coordination.stop(), stopBoundMs: Number.POSITIVE_INFINITY },
  ])
  return { runtime, flow, groupOffsetSync, digests, retention }
}
