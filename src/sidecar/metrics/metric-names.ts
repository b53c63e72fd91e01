/**
 * Every metric the sidecar exports: name, type, help text and label names, in one place.
 * `src/sidecar/metrics/` registers exactly these; `grafana/` builds the dashboard and alert rules from them.
 * Names carry their base unit (`_seconds`, `_bytes`, `_records`) and counters end in `_total`.
 * Labels stay low-cardinality: flow and cluster aliases, topic, partition only where per-partition
 * state is the point (lag, status), never offsets, client ids or error messages. With
 * `metrics.partition.labels` false the per-partition gauges are exported per topic instead
 * (without the `partition` label): sums for record counts, the largest for ages; the committed
 * offset is then not exported. Queries that aggregate `by (topic)` give the same in both modes.
 */

/** Label names, as exported. `topic` is always the source topic name. */
export const LabelNames = {
  FLOW: 'flow',
  SOURCE: 'source',
  TARGET: 'target',
  TOPIC: 'topic',
  PARTITION: 'partition',
  OPERATION: 'operation',
  ERROR_CODE: 'error_code',
  RESULT: 'result',
  STATUS: 'status',
  VERSION: 'version',
  NODE_VERSION: 'node_version',
  GROUP: 'group',
  REASON: 'reason',
  PATH: 'path',
} as const
export type LabelName = typeof LabelNames[keyof typeof LabelNames]

const L = LabelNames
/** Labels every flow-scoped metric carries. */
const FLOW_LABELS = [L.FLOW, L.SOURCE, L.TARGET] as const
const TOPIC_LABELS = [...FLOW_LABELS, L.TOPIC] as const
const PARTITION_LABELS = [...TOPIC_LABELS, L.PARTITION] as const

export type MetricType = 'counter' | 'gauge' | 'histogram'

export interface MetricDefinition {
  readonly name: string
  readonly type: MetricType
  readonly help: string
  readonly labelNames: readonly LabelName[]
}

/** Per-partition status in Burrow's terms; `kafka_mirror_partition_status` has one series per value. */
export const PartitionStatuses = ['ok', 'warn', 'stall', 'stop', 'rewind'] as const
export type PartitionStatus = typeof PartitionStatuses[number]

/** Values of the `result` label. */
export const Results = { OK: 'ok', ERROR: 'error' } as const

/** Bucket upper bounds (seconds) for replication latency and record age: 5 ms up to 10 minutes. */
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600] as const
/** Bucket upper bounds (seconds) for one produce request: 1 ms up to 30 s. */
export const REQUEST_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const

function metric (name: string, type: MetricType, help: string, labelNames: readonly LabelName[]): MetricDefinition {
  return { name, type, help, labelNames }
}

/** The sidecar's metrics. Keys are how code refers to them; `name` is what Prometheus sees. */
export const Metrics = {
  consumedRecords: metric('kafka_mirror_consumed_records_total', 'counter', 'Records fetched from the source cluster.', TOPIC_LABELS),
  consumedBytes: metric('kafka_mirror_consumed_bytes_total', 'counter', 'Bytes (keys, values and headers) fetched from the source cluster.', TOPIC_LABELS),
  producedRecords: metric('kafka_mirror_produced_records_total', 'counter', 'Records acknowledged by the target cluster.', TOPIC_LABELS),
  producedBytes: metric('kafka_mirror_produced_bytes_total', 'counter', 'Bytes (keys, values and headers) acknowledged by the target cluster.', TOPIC_LABELS),
  queueRecords: metric('kafka_mirror_queue_records', 'gauge', 'Records waiting in the bounded queue between consumer and producers.', FLOW_LABELS),
  queueBytes: metric(
    'kafka_mirror_queue_bytes',
    'gauge',
    'Bytes the bounded queue holds between fetch and acknowledgement (and digest): every fetch response a queued, in-flight or digesting batch keeps alive, whole, counted once.',
    FLOW_LABELS
  ),
  queueCapacityRecords: metric(
    'kafka_mirror_queue_capacity_records',
    'gauge',
    'Capacity of the bounded queue in records; intake blocks when full.',
    FLOW_LABELS
  ),
  queueCapacityBytes: metric('kafka_mirror_queue_capacity_bytes', 'gauge', 'Capacity of the bounded queue in bytes; intake blocks when full.', FLOW_LABELS),
  lagRecords: metric(
    'kafka_mirror_lag_records',
    'gauge',
    'Source high watermark minus the next source offset not yet acknowledged by the target (per topic: the sum over its partitions).',
    PARTITION_LABELS
  ),
  lagSeconds: metric(
    'kafka_mirror_lag_seconds',
    'gauge',
    'Age of the oldest source record not yet acknowledged by the target; 0 when caught up (per topic: the largest of its partitions).',
    PARTITION_LABELS
  ),
  sourceRetention: metric(
    'kafka_mirror_source_retention_seconds',
    'gauge',
    "The source topic's retention.ms in seconds, read at start and on every topic refresh; absent for a topic that keeps its records forever (-1) or whose config the mirror may not read. Lag in seconds near it is records about to be deleted before they are copied.",
    TOPIC_LABELS
  ),
  replicationLatency: metric(
    'kafka_mirror_replication_latency_seconds',
    'histogram',
    'Target acknowledgement time minus source record timestamp.',
    FLOW_LABELS
  ),
  recordAgeAtPoll: metric('kafka_mirror_record_age_at_poll_seconds', 'histogram', 'Poll time minus source record timestamp.', FLOW_LABELS),
  produceRequestDuration: metric('kafka_mirror_produce_request_duration_seconds', 'histogram', 'Duration of one produce request to the target cluster.', [
    ...FLOW_LABELS,
    L.RESULT,
  ]),
  retries: metric('kafka_mirror_retries_total', 'counter', 'Retried operations, by operation and error code.', [...FLOW_LABELS, L.OPERATION, L.ERROR_CODE]),
  batches: metric(
    'kafka_mirror_batches_total',
    'counter',
    "Source record batches by the way they went: path pass_through (forwarded undecoded), transcoded (recompressed into the target's codec without decoding, reason codec) or deep (decoded), with the reason a batch was decoded although the flow forwards batches (pass-through on or auto).",
    [...FLOW_LABELS, L.PATH, L.REASON]
  ),
  transcoderBusySlots: metric(
    'kafka_mirror_transcoder_busy_slots',
    'gauge',
    "Source batches being recompressed into the target's codec now (path transcoded): slots of libuv's thread pool in use, at most UV_THREADPOOL_SIZE (4 unless set); flows that transcode only.",
    FLOW_LABELS
  ),
  transcoderWaitingBatches: metric(
    'kafka_mirror_transcoder_waiting_batches',
    'gauge',
    'Fetched source batches waiting for a free transcoder slot; above 0 for long, the codecs are the bottleneck; flows that transcode only.',
    FLOW_LABELS
  ),
  producerLanes: metric(
    'kafka_mirror_producer_lanes',
    'gauge',
    'Producer lanes of the flow (one produce request in flight each): num.producers, at least once as many again, which write only while the target is far.',
    FLOW_LABELS
  ),
  producerLanesWriting: metric(
    'kafka_mirror_producer_lanes_writing',
    'gauge',
    "Producer lanes taking batches now: num.producers, and at least once all lanes while the target's round trip is long (the shortest of the last 16 produce requests 40 ms or more); the extra lanes' producers connect at their first write.",
    FLOW_LABELS
  ),
  batchBytes: metric(
    'kafka_mirror_batch_bytes_total',
    'counter',
    'Bytes of source record batches (as fetched, compressed) by path, counted with kafka_mirror_batches_total.',
    [...FLOW_LABELS, L.PATH]
  ),
  corruptBatches: metric(
    'kafka_mirror_corrupt_batches_total',
    'counter',
    'Source record batches whose CRC-32C did not match their bytes (corrupt on the source cluster), by partition; never copied. With corrupt.batches=fail the flow stopped at the first one; with skip each was left out and committed past. Absent until one.',
    PARTITION_LABELS
  ),
  sendFailures: metric('kafka_mirror_send_failures_total', 'counter', 'Batches the target did not accept after retries.', TOPIC_LABELS),
  commits: metric('kafka_mirror_commits_total', 'counter', 'Offset commits on the source cluster, by result.', [...FLOW_LABELS, L.RESULT]),
  lastCommitTimestamp: metric(
    'kafka_mirror_last_commit_timestamp_seconds',
    'gauge',
    'When the last successful offset commit happened (seconds since the epoch).',
    FLOW_LABELS
  ),
  commitAge: metric(
    'kafka_mirror_commit_age_seconds',
    'gauge',
    'Seconds acknowledged records have waited for a source offset commit: since the last successful commit, or the first acknowledgement after it, or the start; 0 when every acknowledged offset is committed.',
    FLOW_LABELS
  ),
  commitInterval: metric(
    'kafka_mirror_commit_interval_seconds',
    'gauge',
    'The configured offset commit interval (offset.commit.interval.ms, offset.flush.interval.ms).',
    FLOW_LABELS
  ),
  throughputLimit: metric(
    'kafka_mirror_throughput_limit_bytes_per_second',
    'gauge',
    'The configured throughput limit of a flow (throughput.limit.bytes): most bytes of fetched source data copied per second; absent without a limit.',
    FLOW_LABELS
  ),
  fetchRequests: metric(
    'kafka_mirror_fetch_requests_total',
    'counter',
    'Fetch requests the source cluster answered for the flow (every consumer, every broker). Its rate beside the rate of kafka_mirror_batches_total is how many batches a fetch brings; fetch.min.bytes and fetch.max.wait.ms trade fewer fetches for latency.',
    FLOW_LABELS
  ),
  throttled: metric(
    'kafka_mirror_throttled_seconds_total',
    'counter',
    "Time fetching waited for the flow's throughput limit (throughput.limit.bytes); its rate is the share of time the limit held the copy back. Present, at 0, with a limit.",
    FLOW_LABELS
  ),
  committedOffset: metric(
    'kafka_mirror_committed_offset',
    'gauge',
    'Last offset committed on the source cluster (the next offset to mirror); absent before the first commit, and per topic.',
    PARTITION_LABELS
  ),
  lostRecords: metric(
    'kafka_mirror_lost_records_total',
    'counter',
    'Source offsets the mirror will never copy (source retention passed them, the source topic was recreated) or target offsets it wrote that are gone (target topic deleted or recreated), by reason; absent until a loss.',
    [...TOPIC_LABELS, L.REASON]
  ),
  foreignRecords: metric(
    'kafka_mirror_foreign_records_total',
    'counter',
    'Records on a mirrored target partition that the mirror did not write (another producer wrote to the target), counted at the loss check while the partition is idle; absent until one (not counted for exactly-once flows).',
    TOPIC_LABELS
  ),
  digestsWritten: metric(
    'kafka_mirror_digests_written_total',
    'counter',
    'Range digests (hash of key, value, headers, timestamp of a run of copied records) made durable on the target before a source commit (--digests.enabled).',
    FLOW_LABELS
  ),
  digestAuditRecords: metric(
    'kafka_mirror_digest_audit_records_total',
    'counter',
    'Target records the continuous audit re-read and compared with their digests (--digests.audit.interval.ms).',
    TOPIC_LABELS
  ),
  digestMismatches: metric(
    'kafka_mirror_digest_mismatches_total',
    'counter',
    "Digested ranges whose target records no longer hash to their digest when the continuous audit re-read them (changed, missing or added behind the mirror's back); absent until one. The error log line `digest mismatch: ...` names partition and offsets.",
    TOPIC_LABELS
  ),
  transactions: metric(
    'kafka_mirror_transactions_total',
    'counter',
    'Exactly-once: producer-lane transactions on the target holding copied records and their positions, by result (committed, aborted: fenced by another instance, timed out, or given up in a rebalance).',
    [...FLOW_LABELS, L.RESULT]
  ),
  transactionCommitDuration: metric(
    'kafka_mirror_transaction_commit_duration_seconds',
    'histogram',
    'Exactly-once: how long committing one producer-lane transaction took (positions written, EndTxn answered).',
    FLOW_LABELS
  ),
  rebalances: metric('kafka_mirror_rebalances_total', 'counter', 'Consumer group rebalances seen on the source cluster.', FLOW_LABELS),
  assignedPartitions: metric('kafka_mirror_assigned_partitions', 'gauge', 'Source partitions currently assigned to this instance.', FLOW_LABELS),
  topicConfigsSynced: metric(
    'kafka_mirror_topic_configs_synced_total',
    'counter',
    'Target topics whose synced configs (retention, cleanup, sizes) were changed to follow the source, by the coordinating instance.',
    FLOW_LABELS
  ),
  oppositeMirrorSkipped: metric(
    'kafka_mirror_opposite_mirror_skipped_records_total',
    'counter',
    'Source records not copied because the mirror of the opposite direction wrote them into the source (active-active over same-named topics: recognised by producer id).',
    FLOW_LABELS
  ),
  topicAclsSynced: metric(
    'kafka_mirror_topic_acls_synced_total',
    'counter',
    "ACLs of mirrored topics created on the target (MirrorMaker 2's sync.topic.acls rule) by the coordinating instance.",
    FLOW_LABELS
  ),
  coordinator: metric(
    'kafka_mirror_coordinator',
    'gauge',
    '1 while this instance coordinates the flow (owns partition 0 of the first mirrored topic in the source group): group offset sync, checkpoints and offset-sync pruning run only there; 0 elsewhere.',
    FLOW_LABELS
  ),
  mirroredTopics: metric('kafka_mirror_mirrored_topics', 'gauge', 'Source topics currently mirrored by this instance.', FLOW_LABELS),
  flowRunning: metric('kafka_mirror_flow_running', 'gauge', '1 while the flow is running with both clusters connected, else 0.', FLOW_LABELS),
  partitionStatus: metric(
    'kafka_mirror_partition_status',
    'gauge',
    'Burrow-style partition status over recent commits: partitions in each status (per partition: 1 for its current status, 0 for the others).',
    [...PARTITION_LABELS, L.STATUS]
  ),
  offsetSyncsWritten: metric(
    'kafka_mirror_offset_syncs_written_total',
    'counter',
    'Offset-sync records (ranges and positions) made durable on the target before a source commit.',
    FLOW_LABELS
  ),
  offsetSyncsPruned: metric(
    'kafka_mirror_offset_syncs_pruned_total',
    'counter',
    'Offset-sync ranges tombstoned because every target record they map to is gone (below the log start offset).',
    FLOW_LABELS
  ),
  offsetSyncFailures: metric(
    'kafka_mirror_offset_sync_failures_total',
    'counter',
    'Offset-sync writes that failed; the source commit waiting for them was skipped.',
    FLOW_LABELS
  ),
  checkpointsWritten: metric('kafka_mirror_checkpoints_written_total', 'counter', 'Checkpoint records written to the target, by consumer group.', [
    ...FLOW_LABELS,
    L.GROUP,
  ]),
  groupOffsetsSynced: metric(
    'kafka_mirror_group_offsets_synced_total',
    'counter',
    'Partitions whose translated offsets were written into a consumer group on the target.',
    [...FLOW_LABELS, L.GROUP]
  ),
  groupSyncSkipped: metric('kafka_mirror_group_sync_skipped_total', 'counter', 'Group offset syncs left out: the target group is active, or an error.', [
    ...FLOW_LABELS,
    L.GROUP,
    L.REASON,
  ]),
  translationFailures: metric(
    'kafka_mirror_offset_translation_failures_total',
    'counter',
    "Group partitions that could not be translated, by reason: not-yet-mirrored, no-syncs, or before-first-sync (below the first record this flow copied, where the target holds copies it did not write: another mirror's, MirrorMaker 2's before a takeover).",
    [...FLOW_LABELS, L.GROUP, L.REASON]
  ),
  checkpointAge: metric('kafka_mirror_checkpoint_age_seconds', 'gauge', 'Seconds since the last checkpoint of a consumer group was written.', [
    ...FLOW_LABELS,
    L.GROUP,
  ]),
  buildInfo: metric('kafka_mirror_build_info', 'gauge', 'Always 1; labels carry the sidecar and Node.js versions.', [L.VERSION, L.NODE_VERSION]),
} as const satisfies Record<string, MetricDefinition>

/** Name of every series a metric exports (histograms add `_bucket`, `_sum` and `_count`). */
function seriesNames (definition: MetricDefinition): string[] {
  return definition.type === 'histogram'
    ? [`${definition.name}_bucket`, `${definition.name}_sum`, `${definition.name}_count`]
    : [definition.name]
}

/** Every series name the sidecar's own metrics export (without prom-client's process and Node.js metrics). */
export function allSeriesNames (): string[] {
  return Object.values(Metrics).flatMap(seriesNames)
}
