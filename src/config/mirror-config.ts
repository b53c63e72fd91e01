import type { ClusterConnection } from './cluster-connection.js'
import type { MessageHandlerConfig } from './message-handler-config.js'
import type { LogLevel } from '../shared/logger.js'
import type { TopicFilter } from './topic-filter.js'
import type { TopicConfigFilter } from './topic-config-filter.js'
import type { PassThroughMode } from './pass-through.js'
import type { CorruptBatchesMode } from './corrupt-batches.js'

/**
 * Producer lanes when none are configured. One lane keeps one produce request in flight for the
 * whole flow; four let requests for different partitions overlap (a partition stays on one lane,
 * so its order holds). Measured with `npm run bench` (500,000 records, 2 streams, two interleaved
 * rounds): 1 lane 72,869 and 86,894 records/s, 4 lanes 99,323 and 96,694; latency p99 at 20,000
 * records/s 174 and 267 ms with 1 lane, 147 and 138 ms with 4. Eight lanes writing at once copied
 * the tuned scenario on loopback at 0.77x four (2,000,000 records, 3 paired runs), so the four
 * more that carry more across a long link write only while the round trip is long
 * (`producerLaneCount`, `docs/performance.md#wide-area`).
 */
/** `use.incremental.alter.configs`'s values, as MirrorMaker 2 names them. */
export const INCREMENTAL_ALTER_CONFIGS_USES = ['requested', 'required', 'never'] as const
export type IncrementalAlterConfigsUse = (typeof INCREMENTAL_ALTER_CONFIGS_USES)[number]

export const DEFAULT_PRODUCER_LANES = 4

/**
 * Producer lanes a flow runs: at least once, `numProducers` lanes that take whatever is ready and
 * as many again that take batches only while the target's round trip is long (the shortest of the
 * last 16 produce requests at least 40 ms: `LinkRoundTrip`), where the requests in flight bound the
 * copy. Near the target they stay idle, so requests stay as full as with `numProducers` lanes.
 * Exactly-once: a lane is a transactional id, `numProducers` of them.
 */
export function producerLaneCount (flow: Pick<FlowConfig, 'numProducers' | 'exactlyOnce'>): number {
  return flow.exactlyOnce === undefined ? flow.numProducers * 2 : flow.numProducers
}

export const CompressionNames = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
export type CompressionName = typeof CompressionNames[number]

/** Consumer side of a flow, from the Java consumer keys MirrorMaker users already have. */
export interface ConsumerSettings {
  /** `group.id`; default `mirror-sidecar`. */
  readonly groupId: string
  /** `auto.offset.reset` for partitions with no committed offset; default `earliest`. */
  readonly autoOffsetReset: 'earliest' | 'latest'
  /** `max.poll.records`: records per batch handed to the queue; default 2000. */
  readonly maxPollRecords: number
  /** `fetch.max.bytes`; default 52428800 (Java's default). */
  readonly fetchMaxBytes: number
  /** `max.partition.fetch.bytes`; default 1048576. */
  readonly maxPartitionFetchBytes: number
  /** `session.timeout.ms`; default 45000. */
  readonly sessionTimeoutMs: number
  /** `heartbeat.interval.ms`; default 3000. */
  readonly heartbeatIntervalMs: number
  /**
   * `fetch.max.wait.ms`: how long the broker holds a fetch that has less than `fetch.min.bytes`;
   * default 500 (Java's). Without fetch sessions every fetch names every partition, so a caught-up
   * mirror's CPU grows with partitions / this value.
   */
  readonly fetchMaxWaitMs: number
  /** `fetch.min.bytes`; default 1 (Java's). */
  readonly fetchMinBytes: number
  /**
   * `fetch.sessions.enable` (this mirror's key; Java's consumer always uses them): fetch in
   * incremental fetch sessions (KIP-227), so a request names only the partitions whose fetch
   * offset changed and a response only those with news. Default true; false: every fetch names
   * every partition, as kafkajs does unpatched.
   */
  readonly fetchSessions: boolean
  /** `group.protocol`: `consumer` (KIP-848) or `classic`; default `classic`. The kafkajs source speaks classic only. */
  readonly groupProtocol: 'classic' | 'consumer'
  /** `group.instance.id`: static membership (KIP-345); the kafkajs source has none. */
  readonly groupInstanceId?: string
  /** `client.rack`: fetch from a replica in this rack (KIP-392); the kafkajs source reads from leaders. */
  readonly clientRack?: string
}

/**
 * Producer side of a flow. acks is always `all` (-1): `acks=0` and `acks=1` are refused at the
 * config check, as is `max.in.flight.requests.per.connection` above 5 with idempotence (accepted
 * up to that without effect: each producer sends one request at a time).
 */
export interface ProducerSettings {
  readonly acks: -1
  /** `compression.type` of what the mirror writes; default `none`. */
  readonly compression: CompressionName
  /** True when `compression.type` was set: forwarded batches must then be in that codec (others are decoded and written in it). */
  readonly compressionSet: boolean
  /** `batch.size`: bytes of records per partition per produce request; default 524288. */
  readonly batchSizeBytes: number
  /** `linger.ms`, validated and kept for `--print-config`; no effect: each fetched batch is sent at once. */
  readonly lingerMs: number
  /** `enable.idempotence`; default true (kafkajs' idempotent producer, one request in flight). */
  readonly idempotent: boolean
  /** `max.request.size`: upper bound of one produce request; default 1048576. */
  readonly maxRequestSizeBytes: number
}

/** MirrorMaker 2's replication policies: `identity` keeps the topic's name, `default` prefixes the source alias. */
export const ReplicationPolicyKinds = ['identity', 'default'] as const
export type ReplicationPolicyKind = typeof ReplicationPolicyKinds[number]

/** How a source topic is named on the target (MirrorMaker 2's replication policies); the one type for the sidecar and `mirror-check`. */
export type ReplicationPolicy =
  | { readonly kind: 'identity' }
  | { readonly kind: 'default', readonly separator: string }

/** Exact offset syncs the flow writes to a compacted topic on the target. */
export interface OffsetSyncConfig {
  /** Default true. */
  readonly enabled: boolean
  /** Default `mirror-offset-syncs.<source alias>.internal`. */
  readonly topic: string
  /**
   * `offset-syncs.topic.replication.factor`: replication factor when the mirror creates the topic;
   * default the flow's `replicationFactor` (-1: the target broker's `default.replication.factor`).
   */
  readonly replicationFactor: number
  /** MirrorMaker 2's own offset syncs, beside the exact ones: mm2.properties flows only; absent otherwise. */
  readonly mm2?: Mm2OffsetSyncConfig
}

/** Where MirrorMaker 2's offset-syncs topic lives (`offset-syncs.topic.location`). */
export const Mm2OffsetSyncLocations = ['source', 'target'] as const
export type Mm2OffsetSyncLocation = typeof Mm2OffsetSyncLocations[number]

/**
 * MirrorMaker 2's `OffsetSync` records, written by MirrorMaker 2's rules (`offset.lag.max`, gaps,
 * the periodic flush) to its offset-syncs topic, so its checkpoint task and Kafka's tools find them.
 */
export interface Mm2OffsetSyncConfig {
  /** `offset-syncs.topic.location`: the cluster holding the topic; default `source`, as in MirrorMaker 2. */
  readonly location: Mm2OffsetSyncLocation
  /** `mm2-offset-syncs.<target alias>.internal` on the source, `mm2-offset-syncs.<source alias>.internal` on the target (MirrorMaker 2's names). */
  readonly topic: string
  /** `offset.lag.max` in records: a sync is written once the last one lags this far behind; default 100. */
  readonly maxOffsetLagRecords: number
  /** `offset-syncs.topic.replication.factor` when the mirror creates the topic; default the flow's `replicationFactor`. */
  readonly replicationFactor: number
}

/**
 * Range digests (`--digests.enabled`): per run of copied records, a hash of key, value, headers and
 * timestamp in order, written to a compacted topic on the target before each source commit, so
 * `mirror-check verify --digests` can check the copy without the source. Off by default: with
 * pass-through, each forwarded batch is decoded once after the target acknowledged it.
 */
export interface DigestConfig {
  /** `--digests.enabled`; default false. */
  readonly enabled: boolean
  /** Default `mirror-digests.<source alias>.internal`. */
  readonly topic: string
  /** `--digests.range.records`: most records one digest covers; default 1000. */
  readonly rangeRecords: number
  /** Replication factor when the mirror creates the topic; the offset syncs' (`offset-syncs.topic.replication.factor`). */
  readonly replicationFactor: number
  /**
   * The continuous audit (`--digests.audit.interval.ms`, default 0 = off): every interval, re-read
   * sampled digested ranges of the target and compare them with their digests, at most
   * `auditMaxRecords` (`--digests.audit.max.records`, default 10000) records per pass.
   */
  readonly auditIntervalMs: number
  readonly auditMaxRecords: number
}

/** Matches consumer group ids: MirrorMaker's `groups` / `groups.exclude` (regex, comma means or, whole id). */
export interface GroupFilter {
  readonly include: string
  readonly exclude: string | undefined
  matches: (groupId: string) => boolean
}

/**
 * Checkpoints and consumer-group offset sync for failover (`emit.checkpoints.*`, `sync.group.offsets.*`),
 * as MirrorMaker 2 documents them: checkpoints of the selected groups are written every
 * `checkpointIntervalMs`; with `enabled`, the translated offsets are also committed into the idle
 * groups on the target every `intervalMs`. Group offsets are synced from checkpoints, so `enabled`
 * implies `emitCheckpoints`.
 */
export interface GroupSyncConfig {
  /** `sync.group.offsets.enabled` (and checkpoints emitted); default false. */
  readonly enabled: boolean
  /** `emit.checkpoints.enabled`; default true in mm2.properties, the value of `--sync.group.offsets.enabled` with MirrorMaker 1 flags. */
  readonly emitCheckpoints: boolean
  /** `groups` (default `.*`) and `groups.exclude` (default `console-consumer-.*, connect-.*, __.*`). */
  readonly groups: GroupFilter
  /** `sync.group.offsets.interval.seconds` in ms; default 60000 in mm2.properties, 10000 with MirrorMaker 1 flags. */
  readonly intervalMs: number
  /** `emit.checkpoints.interval.seconds` in ms; default 60000 in mm2.properties, the sync interval with MirrorMaker 1 flags. */
  readonly checkpointIntervalMs: number
  /** MirrorMaker 2's checkpoints topic on the target, `<source alias>.checkpoints.internal` (records `Checkpoint`, see mirror-topics/mm2-records.ts). */
  readonly checkpointsTopic: string
  /** `checkpoints.topic.replication.factor` when the mirror creates the checkpoints topic; default the flow's `replicationFactor`. */
  readonly checkpointsReplicationFactor: number
}

/**
 * MirrorMaker 2's heartbeats (`emit.heartbeats.*`): every `intervalMs` a `Heartbeat` record
 * {source alias, target alias, now} goes to `heartbeats` on the target, and one {target alias,
 * source alias, now} to `heartbeats` on the source (what MirrorMaker 2's herder of the reverse pair
 * emits), which the flow copies back as `<source alias>.heartbeats`: Kafka's `MirrorClient`
 * finds the upstream clusters and replication hops from those topics.
 */
export interface HeartbeatsConfig {
  /** `emit.heartbeats.enabled`; default true in mm2.properties, false with MirrorMaker 1 flags (which never had heartbeats). */
  readonly enabled: boolean
  /** `emit.heartbeats.interval.seconds` in ms; default 1000. */
  readonly intervalMs: number
  /** `heartbeats`, the topic name every replication policy of MirrorMaker 2 gives. */
  readonly topic: string
  /** `heartbeats.topic.replication.factor` when the mirror creates the topic; default the flow's `replicationFactor`. */
  readonly replicationFactor: number
}

/**
 * Exactly-once mirroring (`docs/exactly-once.md`): each producer lane writes in
 * transactions on the target holding the copied records and the flow's positions (the next
 * source offset of each partition) in `positionsTopic`; a restart resumes from those positions.
 */
export interface ExactlyOnceConfig {
  /** Where the key came from, for error messages: `--exactly.once` or `<target>.exactly.once.source.support`. */
  readonly key: string
  /** `--exactly.once.commit.interval.ms` / `exactly.once.commit.interval.ms`: how long a lane's transaction stays open at most. */
  readonly commitIntervalMs: number
  /** `transaction.timeout.ms` of the transactional producers. */
  readonly transactionTimeoutMs: number
  /** Compacted topic on the target holding the positions: `mirror-positions.<source alias>.internal`. */
  readonly positionsTopic: string
  /** Replication factor when the mirror creates the positions topic (-1: the broker's default). */
  readonly positionsReplicationFactor: number
}

/**
 * Where MirrorMaker 2 keeps the source positions of a flow: Connect's offsets topic on the target
 * cluster, records keyed `["<connector>", {"cluster": <source alias>, "topic", "partition"}]` with
 * value `{"offset": <last copied offset>}`. A flow taking over from MirrorMaker 2 starts each
 * partition its own group has no committed offset for at that offset + 1.
 */
export interface Mm2PositionsConfig {
  /**
   * Connect's offsets topic: `offset.storage.topic`, else `<target>.offset.storage.topic`, else
   * `mm2-offsets.<source>.internal` (dedicated mode); Strimzi: `spec.target.offsetStorageTopic`,
   * default `mirrormaker2-cluster-offsets`.
   */
  readonly offsetsTopic: string
  /** The key or resource field the topic name came from, for messages. */
  readonly key: string
  /** Connect's name of the flow's source connector: `MirrorSourceConnector` (dedicated mode), `<source>-><target>.MirrorSourceConnector` (Strimzi). */
  readonly connector: string
}

/** One copy from a source cluster to a target cluster. */
export interface FlowConfig {
  /** `source->target`, the aliases as in mm2.properties. */
  readonly name: string
  readonly source: ClusterConnection
  readonly target: ClusterConnection
  readonly consumer: ConsumerSettings
  readonly producer: ProducerSettings
  readonly topics: TopicFilter
  readonly replicationPolicy: ReplicationPolicy
  /** `--num.streams` / `tasks.max`: consumers in this process for this flow; default 1. */
  readonly numStreams: number
  /**
   * `--num.producers`: producer lanes writing in parallel, one request in flight each; default
   * `DEFAULT_PRODUCER_LANES`. At least once, as many again while the target's round trip is long (`producerLaneCount`).
   */
  readonly numProducers: number
  /** `--queue.size`: records held between consumer and producer, in flight included; default 10000. */
  readonly queueMaxRecords: number
  /** Bytes held between consumer and producer; default 67108864 (64 MiB). */
  readonly queueMaxBytes: number
  /** `--offset.commit.interval.ms`; default 60000 as in MirrorMaker 1. */
  readonly offsetCommitIntervalMs: number
  /** `--abort.on.send.failure`; default true. */
  readonly abortOnSendFailure: boolean
  /** `--pass.through` / `shallowiterator.enable`: forward record batches undecoded; default `auto`. */
  readonly passThrough: PassThroughMode
  /**
   * `--throughput.limit.bytes` / mm2.properties `throughput.limit.bytes`: most bytes of fetched
   * source data handed to the producers per second (a token bucket with one second of burst;
   * fetching waits, nothing is dropped); absent (no limit) by default.
   */
  readonly throughputLimitBytes?: number
  /**
   * `--corrupt.batches` / mm2.properties `corrupt.batches`: a source batch whose CRC-32C does not
   * match stops the flow (`fail`) or is left out (`skip`); default `fail`.
   */
  readonly corruptBatches?: CorruptBatchesMode
  /** `--exactly.once` / `<target>.exactly.once.source.support=enabled`: transactions on the target; absent (at-least-once) by default. */
  readonly exactlyOnce?: ExactlyOnceConfig
  /** How often new source topics and partitions are looked for; default 30000. */
  readonly refreshTopicsIntervalMs: number
  /** `sync.topic.configs.enabled`: copy the source topic's configs when creating its target topic, and keep them in sync after; default true. */
  readonly syncTopicConfigs: boolean
  /** Which topic configs are copied (`config.properties.exclude`); default MirrorMaker 2's `DEFAULT_TOPIC_CONFIG_FILTER`. */
  readonly topicConfigFilter: TopicConfigFilter
  /**
   * `use.incremental.alter.configs` (MirrorMaker 2's key): how the config sync writes target topic
   * configs. `requested` (when absent): IncrementalAlterConfigs, or read and written back whole
   * (AlterConfigs) on a cluster before Kafka 2.3; `required`: IncrementalAlterConfigs or an error;
   * `never`: always read and written back whole.
   */
  readonly incrementalAlterConfigs?: IncrementalAlterConfigsUse
  /** `sync.topic.configs.interval.seconds`: how often the coordinating process brings target topic configs in line; default 600 s. */
  readonly syncTopicConfigsIntervalMs: number
  /** `sync.topic.acls.enabled`: copy the mirrored topics' ACLs (MirrorMaker 2's rule, `targetAcl`); default true. */
  readonly syncTopicAcls: boolean
  /** `sync.topic.acls.interval.seconds`; default 600 s. */
  readonly syncTopicAclsIntervalMs: number
  /** Replication factor of topics the mirror creates; default -1 (the target broker's default). */
  readonly replicationFactor: number
  readonly offsetSyncs: OffsetSyncConfig
  readonly groupSync: GroupSyncConfig
  readonly heartbeats: HeartbeatsConfig
  /** Range digests of what was copied; off when absent or not `enabled` (the default). */
  readonly digests?: DigestConfig
  /**
   * `--message.handler` (mm2.properties `message.handler`): a JavaScript module mapping each
   * source record to zero or more target records; absent by default (records are copied as they are).
   */
  readonly messageHandler?: MessageHandlerConfig
  /** Set for a flow of an mm2.properties file or a Strimzi resource: where MirrorMaker 2's positions of this flow are, to take over from them. */
  readonly mm2Positions?: Mm2PositionsConfig
}

/** The whole validated, frozen configuration of one sidecar process. */
export interface MirrorConfig {
  readonly flows: readonly FlowConfig[]
  /** HTTP port for /metrics, /healthz, /readyz; default 9464; 0 picks a free port. */
  readonly metricsPort: number
  /** Interface the HTTP server binds; default all interfaces. */
  readonly metricsHost: string
  /**
   * `--metrics.partition.labels` (mm2.properties `metrics.partition.labels`): false exports lag and
   * status per topic instead of per partition; default true.
   */
  readonly metricsPartitionLabels?: boolean
  /** `--idle.gc`: a full garbage collection once the process is idle after a busy spell (src/bin/idle-gc.ts); default true. */
  readonly idleGc?: boolean
  readonly logLevel: LogLevel
  /** How long shutdown waits for in-flight records to be acknowledged; default 30000. */
  readonly drainTimeoutMs: number
  /** Keys read from the configuration that have no effect here (logged once as one warning line). */
  readonly ignoredKeys?: readonly string[]
}

/**
 * The target topic `topic` of the cluster `sourceAlias` is copied to: `topic`, or
 * `<sourceAlias><separator><topic>` (DefaultReplicationPolicy). The identity policy keeps names
 * except the heartbeats topic, which it names as the default policy does (`<sourceAlias>.heartbeats`,
 * MirrorMaker 2's `IdentityReplicationPolicy.formatRemoteTopic`), so the target's own heartbeats stay apart.
 */
export function targetTopicName (policy: ReplicationPolicy, sourceAlias: string, topic: string): string {
  if (policy.kind === 'default') return `${sourceAlias}${policy.separator}${topic}`
  return topic === HEARTBEATS_TOPIC ? `${sourceAlias}.${topic}` : topic
}

/** MirrorMaker 2's heartbeats topic, the same name under every replication policy. */
export const HEARTBEATS_TOPIC = 'heartbeats'

/** Deep-freezes a config so nothing can change it after validation. */
export function freezeConfig<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value as object)) freezeConfig(child)
  }
  return value
}
