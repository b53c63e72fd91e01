import type { FlowConfig } from '../config/mirror-config.js'
import type { BatchPath, DeepPathReason } from './forwarded-batch.js'
import type { TranscoderLoad } from './transcoder-load.js'
/**
 * What the data plane reports. Metrics, tracing and health implement this; the pipeline calls it
 * on its hot path, so implementations must be cheap and must not throw.
 */

/** Identifies a copy between two clusters in labels: `source` and `target` are the cluster aliases. */
export interface FlowLabels {
  readonly flow: string
  readonly source: string
  readonly target: string
}

/** The labels of a configured flow. */
export function flowLabels (flow: Pick<FlowConfig, 'name' | 'source' | 'target'>): FlowLabels {
  return { flow: flow.name, source: flow.source.alias, target: flow.target.alias }
}

export interface ConsumedBatch {
  readonly topic: string
  readonly partition: number
  readonly records: number
  readonly bytes: number
  /** Timestamps (ms since epoch) of the records, for record-age-at-poll observations. */
  readonly timestampsMs: readonly number[]
  readonly pollTimeMs: number
}

export interface ProducedBatch {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly records: number
  readonly bytes: number
  /** Source record timestamps, for replication latency (ack time - timestamp). */
  readonly timestampsMs: readonly number[]
  readonly ackTimeMs: number
  /** First source offset and the target offset it got (the rest follow in order). */
  readonly firstSourceOffset: bigint
  readonly lastSourceOffset: bigint
  readonly targetBaseOffset: bigint
}

export interface CommittedOffset {
  readonly topic: string
  readonly partition: number
  /** The committed offset: the next source offset to mirror. */
  readonly offset: bigint
  /** Source high watermark minus `offset` when committed, as far as the consumer knows. */
  readonly lagRecords: bigint
}

export type LifecycleState = 'starting' | 'running' | 'stopping' | 'stopped' | 'failed'

/** Point-in-time view of one source partition, read at scrape time. */
export interface PartitionSnapshot {
  readonly topic: string
  readonly partition: number
  /** Last high watermark the consumer saw in a fetch; -1n before the first fetch. */
  readonly highWatermark: bigint
  /** Next source offset not yet acknowledged by the target (what a commit now would write). */
  readonly nextOffsetToMirror: bigint
  /** Last offset committed on the source for the mirror's group; -1n before the first commit. */
  readonly committedOffset: bigint
  /** Timestamp of the oldest record consumed but not yet acknowledged; undefined when none. */
  readonly oldestUnackedTimestampMs: number | undefined
  /** When the mirror last acknowledged a record of this partition (ms since epoch); 0 before. */
  readonly lastProgressMs: number
}

export interface FlowSnapshot {
  readonly labels: FlowLabels
  readonly state: LifecycleState
  readonly queueRecords: number
  readonly queueBytes: number
  readonly queueCapacityRecords: number
  readonly queueCapacityBytes: number
  readonly sourceConnected: boolean
  readonly targetConnected: boolean
  readonly assignedPartitions: number
  readonly topicsMirrored: number
  /** True while this process coordinates the flow (see `coordinatorPartition`). */
  readonly coordinator?: boolean
  /** The source's batch transcoder, when the flow recompresses batches into the target's codec. */
  readonly transcoder?: TranscoderLoad
  /**
   * The flow's producer lanes, and those that take batches now (at least once, the lanes past
   * `num.producers` take them only while the target's round trip is long).
   */
  readonly producerLanes?: { readonly total: number, readonly writing: number }
  readonly partitions: readonly PartitionSnapshot[]
}

export interface PipelineObserver {
  /** The source answered one fetch request of the flow (any stream, any broker). */
  fetched?: (flow: FlowLabels) => void
  consumed?: (flow: FlowLabels, batch: ConsumedBatch) => void
  produced?: (flow: FlowLabels, batch: ProducedBatch) => void
  /** One produce request to the target: how long it took and whether it succeeded. */
  produceRequest?: (flow: FlowLabels, durationSeconds: number, ok: boolean) => void
  retry?: (flow: FlowLabels, operation: string, errorCode: string) => void
  /** A topic config sync ran in the coordinating process; `changed` target topics got new configs. */
  topicConfigsSynced?: (flow: FlowLabels, changed: number) => void
  /** A topic ACL sync ran in the coordinating process; `created` ACLs were added on the target. */
  topicAclsSynced?: (flow: FlowLabels, created: number) => void
  /** A source record batch went the pass-through way, or the deep way although the flow forwards batches (`reason` says why). */
  batchRouted?: (flow: FlowLabels, path: BatchPath, reason: DeepPathReason | undefined, bytes: number) => void
  /** Fetched batches waited `seconds` (new wall-clock time, overlapping waits counted once) for the flow's throughput limit. */
  throttled?: (flow: FlowLabels, seconds: number) => void
  /** A fetched source batch was corrupt (CRC-32C mismatch): the flow stops, or leaves it out (`corrupt.batches`). */
  corruptBatch?: (flow: FlowLabels, topic: string, partition: number) => void
  sendFailed?: (flow: FlowLabels, topic: string, partition: number, reason: string) => void
  committed?: (flow: FlowLabels, offsets: readonly CommittedOffset[], atMs: number) => void
  commitFailed?: (flow: FlowLabels, reason: string) => void
  rebalanced?: (flow: FlowLabels) => void
  /** Exactly-once: a producer lane's transaction ended; `durationSeconds` is how long its commit took. */
  transactionEnded?: (flow: FlowLabels, result: 'committed' | 'aborted', durationSeconds: number) => void
  fatal?: (flow: FlowLabels, error: Error) => void
}

/** Every event of `PipelineObserver`, for fanning one event out to several observers (`fanOut`). */
export const PipelineObserverEvents = {
  fetched: true,
  consumed: true,
  produced: true,
  produceRequest: true,
  retry: true,
  batchRouted: true,
  throttled: true,
  corruptBatch: true,
  topicConfigsSynced: true,
  topicAclsSynced: true,
  sendFailed: true,
  committed: true,
  commitFailed: true,
  rebalanced: true,
  transactionEnded: true,
  fatal: true,
} as const satisfies Record<keyof PipelineObserver, true>
