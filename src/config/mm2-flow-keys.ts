import { DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS } from './exactly-once.js'
import { FLAG_DEFAULTS } from './flag-defaults.js'
import type { KeyRow } from './key-table.js'
import { INCREMENTAL_ALTER_CONFIGS_USES, Mm2OffsetSyncLocations } from './mirror-config.js'
import { DEFAULT_GROUPS_EXCLUDE } from './topic-filter.js'

/** MirrorMaker 2's default `topics.exclude` (`topics.blacklist` before 3.0). */
const DEFAULT_TOPICS_EXCLUDE = '.*[\\-\\.]internal, .*\\.replica, __.*'

const REPLICATION_FACTOR = 'a replication factor from 1 to 32767, or -1 for the broker default'

/** A topic's replication factor: -1 (the broker's default) or 1 to 32767; 0 is refused. */
const replicationFactor = (key: string, rest: Pick<KeyRow, 'default' | 'defaultText' | 'doc'>): KeyRow => ({
  key,
  type: 'integer',
  min: -1,
  max: 32767,
  expected: REPLICATION_FACTOR,
  check: value => value === 0 ? `expected ${REPLICATION_FACTOR}` : undefined,
  checkShowsRaw: true,
  ...rest,
})

const seconds = (key: string, fallback: number, doc: string): KeyRow => ({ key, type: 'integer', min: 1, default: fallback, doc })

/**
 * The flow keys of an mm2.properties file: read at top level and overridden per flow by `A->B.<key>`
 * (`buildFlow`). Rows with `readBy` have their own parsers (patterns, policies, handlers); the
 * others are read with `readKeys`.
 */
export const FLOW_TABLE: readonly KeyRow[] = [
  { key: 'enabled', type: 'boolean', default: false, doc: 'copy this flow (`A->B.enabled`), as in MM2' },
  { key: 'topics', type: 'text', readBy: 'topic-filter', default: '.*', doc: 'topics to mirror: comma-separated regexes' },
  { key: 'topics.exclude', type: 'text', readBy: 'topic-filter', default: DEFAULT_TOPICS_EXCLUDE, doc: 'topics not to mirror' },
  { key: 'topics.blacklist', type: 'text', readBy: 'topic-filter', defaultText: '`topics.exclude`', doc: 'the name of `topics.exclude` before MM2 3.0' },
  { key: 'groups', type: 'text', readBy: 'topic-filter', default: '.*', doc: 'consumer groups whose offsets are checkpointed and synced' },
  { key: 'groups.exclude', type: 'text', readBy: 'topic-filter', default: DEFAULT_GROUPS_EXCLUDE, doc: 'groups not checkpointed or synced' },
  { key: 'groups.blacklist', type: 'text', readBy: 'topic-filter', defaultText: '`groups.exclude`', doc: 'the name of `groups.exclude` before MM2 3.0' },
  {
    key: 'replication.policy.class',
    type: 'text',
    readBy: 'buildFlow',
    defaultText: '`DefaultReplicationPolicy`',
    doc: '`DefaultReplicationPolicy` (target topic `A.topic`) or `IdentityReplicationPolicy`, full class name or short name; ' +
      'the Default policy never copies `B.x` back into B; custom classes are refused',
  },
  { key: 'replication.policy.separator', type: 'text', readBy: 'buildFlow', default: '.', doc: "the Default policy's separator; not empty" },
  { key: 'tasks.max', type: 'integer', min: 1, default: 1, doc: 'consumers for the flow' },
  { key: 'refresh.topics.enabled', type: 'boolean', default: true, doc: 'look for new topics and partitions' },
  seconds('refresh.topics.interval.seconds', 600, 'how often (read when refresh.topics.enabled)'),
  {
    key: 'sync.topic.configs.enabled',
    type: 'boolean',
    default: true,
    doc: "copy the source topic's configs when a target topic is created, and keep them in line after",
  },
  seconds('sync.topic.configs.interval.seconds', FLAG_DEFAULTS['sync.topic.configs.interval.seconds'], 'how often target topic configs are brought in line'),
  {
    key: 'config.properties.exclude',
    type: 'text',
    readBy: 'topic-config-filter',
    defaultText: "MirrorMaker 2's (4.x `DefaultConfigPropertyFilter`)",
    doc: 'topic configs not copied: a comma-separated list of regexes over the whole key; MM2\'s default: `follower\\.replication\\.throttled\\.replicas, ' +
      'leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, ' +
      'unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas`; empty copies everything else. Tiered-storage keys (`remote.storage.enable`, ' +
      '`local.retention.ms`, `local.retention.bytes`, `remote.log.*`) are never copied',
  },
  {
    key: 'config.properties.blacklist',
    type: 'text',
    readBy: 'topic-config-filter',
    defaultText: '`config.properties.exclude`',
    doc: 'the name of `config.properties.exclude` before MM2 3.0',
  },
  {
    key: 'config.property.filter.class',
    type: 'text',
    readBy: 'topic-config-filter',
    defaultText: '`DefaultConfigPropertyFilter`',
    doc: 'only `org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter` is accepted; another class is refused',
  },
  {
    key: 'use.defaults.from',
    type: 'text',
    readBy: 'topic-config-filter',
    default: 'target',
    doc: "`target`: a key at its default on the source is not copied, and the config sync takes it off the target topic, so the target cluster's " +
      "default applies (MirrorMaker 2's DELETE); `source`: the source topic's default values are copied too (set on the target topic), except " +
      'the excluded and tiered-storage keys',
  },
  {
    key: 'use.incremental.alter.configs',
    type: 'choice',
    choices: INCREMENTAL_ALTER_CONFIGS_USES,
    defaultText: 'requested',
    doc: "how the config sync writes a target topic's configs: `requested` one IncrementalAlterConfigs request that sets and deletes only the " +
      "keys it changes, or, on a cluster before Kafka 2.3, the topic's configs read and written back whole (AlterConfigs); `required`: " +
      'IncrementalAlterConfigs or the sync fails naming the key; `never`: always read and written back whole',
  },
  {
    key: 'sync.topic.acls.enabled',
    type: 'boolean',
    default: FLAG_DEFAULTS['sync.topic.acls.enabled'],
    doc: "copy the mirrored topics' ACLs with MirrorMaker 2's rule",
  },
  seconds('sync.topic.acls.interval.seconds', FLAG_DEFAULTS['sync.topic.acls.interval.seconds'], 'how often ACLs are copied'),
  replicationFactor('replication.factor', {
    default: -1,
    doc: "of created topics: -1 is the target broker's default (MM2: 2); a factor the cluster cannot give stops the sidecar at start naming the key",
  }),
  {
    key: 'emit.offset-syncs.enabled',
    type: 'boolean',
    default: true,
    doc: "offset syncs: the sidecar's exact ones in `mirror-offset-syncs.<source>.internal` on the target, and MirrorMaker 2's own " +
      '`OffsetSync` records (false writes neither topic, and no checkpoints)',
  },
  {
    key: 'sync.group.offsets.enabled',
    type: 'boolean',
    default: false,
    doc: 'commit the translated offsets into idle groups on the target; needs checkpoints enabled, as in MM2',
  },
  seconds('sync.group.offsets.interval.seconds', 60, 'how often group offsets are synced'),
  {
    key: 'emit.checkpoints.enabled',
    type: 'boolean',
    default: true,
    doc: "MirrorMaker 2 checkpoints of the groups `groups` selects in `<source>.checkpoints.internal` on the target, read by Kafka's `RemoteClusterUtils` " +
      '([offset-mapping.md](offset-mapping.md#checkpoints))',
  },
  seconds('emit.checkpoints.interval.seconds', 60, 'how often checkpoints are written'),
  { key: 'offset.flush.interval.ms', type: 'integer', min: 1, default: 60_000, doc: 'how often acknowledged offsets are committed' },
  replicationFactor('offset-syncs.topic.replication.factor', { defaultText: '`replication.factor`', doc: 'of the offset-syncs topics (MM2: 3)' }),
  replicationFactor('checkpoints.topic.replication.factor', { defaultText: '`replication.factor`', doc: 'of the checkpoints topic (MM2: 3)' }),
  {
    key: 'emit.heartbeats.enabled',
    type: 'boolean',
    default: true,
    doc: 'MirrorMaker 2 heartbeats to `heartbeats` on the target and, for the reverse pair, on the source; the source\'s `heartbeats` is ' +
      'mirrored as `<source>.heartbeats` (default policy)',
  },
  seconds('emit.heartbeats.interval.seconds', 1, 'how often heartbeats are written'),
  replicationFactor('heartbeats.topic.replication.factor', { defaultText: '`replication.factor`', doc: 'of the heartbeats topic (MM2: 3)' }),
  {
    key: 'offset-syncs.topic.location',
    type: 'choice',
    choices: Mm2OffsetSyncLocations,
    default: 'source',
    doc: "where MirrorMaker 2's `OffsetSync` records go: `source` (`mm2-offset-syncs.<target>.internal` on the source cluster) or `target` " +
      "(`mm2-offset-syncs.<source>.internal` on the target); the sidecar's exact syncs stay on the target ([offset-syncs.md](offset-syncs.md#mirrormaker-2s-offset-syncs))",
  },
  {
    key: 'offset.lag.max',
    type: 'integer',
    min: 0,
    default: 100,
    doc: "MirrorMaker 2's offset syncs: a sync is written once the last one is this many records behind, besides the first record of a " +
      "partition, gaps and each commit's last record (0: every record)",
  },
  { key: 'pass.through', type: 'text', readBy: 'pass-through', default: FLAG_DEFAULTS['pass.through'], doc: 'as `--pass.through`, per flow' },
  { key: 'corrupt.batches', type: 'text', readBy: 'corrupt-batches', default: FLAG_DEFAULTS['corrupt.batches'], doc: 'as `--corrupt.batches`, per flow' },
  {
    key: 'throughput.limit.bytes',
    type: 'text',
    readBy: 'throughput-limit',
    defaultText: '0 (no limit)',
    doc: 'as `--throughput.limit.bytes`: the top-level key for every flow, `A->B.` for one flow (wins; `0` there lifts a top-level limit for that flow)',
  },
  {
    key: 'exactly.once.commit.interval.ms',
    type: 'integer',
    min: 1,
    default: DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS,
    doc: "longest a lane's transaction stays open (with `<target>.exactly.once.source.support = enabled`)",
  },
  { key: 'message.handler', type: 'text', readBy: 'message-handler-config', defaultText: 'none', doc: 'as `--message.handler`, per flow' },
  { key: 'message.handler.args', type: 'text', readBy: 'message-handler-config', defaultText: 'none', doc: 'as `--message.handler.args`, per flow' },
  { key: 'digests.enabled', type: 'boolean', default: FLAG_DEFAULTS['digests.enabled'], doc: 'as `--digests.enabled`, per flow' },
  { key: 'digests.range.records', type: 'integer', min: 1, default: FLAG_DEFAULTS['digests.range.records'], doc: 'as `--digests.range.records`' },
  { key: 'digests.audit.interval.ms', type: 'integer', min: 0, default: FLAG_DEFAULTS['digests.audit.interval.ms'], doc: 'as `--digests.audit.interval.ms`' },
  { key: 'digests.audit.max.records', type: 'integer', min: 1, default: FLAG_DEFAULTS['digests.audit.max.records'], doc: 'as `--digests.audit.max.records`' },
]
