import { DEFAULT_PRODUCER_LANES } from './mirror-config.js'
import { DEFAULT_GROUPS_EXCLUDE } from './topic-filter.js'
import { DEFAULT_PASS_THROUGH } from './pass-through.js'
import { DEFAULT_CORRUPT_BATCHES } from './corrupt-batches.js'
import { DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS } from './exactly-once.js'

/**
 * The default of every sidecar flag, in one place: the parsers (`configFromMm1`,
 * `sidecarSettingsFromFlags`, the mm2.properties flows) and `mirror-sidecar --help` read them from
 * here, so the help text cannot drift from what the code does.
 */
export const FLAG_DEFAULTS = {
  /** `--num.streams`: consumers in this process. */
  'num.streams': 1,
  /** `--num.producers`: producer lanes. */
  'num.producers': DEFAULT_PRODUCER_LANES,
  /** `--queue.size`: records held between consumer and target ack. */
  'queue.size': 10_000,
  /** `--queue.bytes`: bytes held between consumer and target ack (64 MiB). */
  'queue.bytes': 67_108_864,
  /** `--offset.commit.interval.ms`, in ms (MirrorMaker 1's default). */
  'offset.commit.interval.ms': 60_000,
  /** `--exactly.once`: transactions on the target (at-least-once when false). */
  'exactly.once': false,
  /** `--exactly.once.commit.interval.ms`: longest a lane's transaction stays open. */
  'exactly.once.commit.interval.ms': DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS,
  /** `--abort.on.send.failure`. */
  'abort.on.send.failure': true,
  /** `--refresh.topics.interval.ms`, in ms. */
  'refresh.topics.interval.ms': 30_000,
  /** `--metrics.port`. */
  'metrics.port': 9464,
  /** `--metrics.host`: every interface. */
  'metrics.host': '0.0.0.0',
  /** `--metrics.partition.labels`: false turns per-partition series into per-topic ones. */
  'metrics.partition.labels': true,
  /** `--idle.gc`: a full garbage collection once the process is idle after a busy spell (src/bin/idle-gc.ts). */
  'idle.gc': true,
  /** `--sync.topic.configs.interval.seconds`, in seconds (MirrorMaker 2's default). */
  'sync.topic.configs.interval.seconds': 600,
  /** `--sync.topic.acls.enabled` (MirrorMaker 2's default). */
  'sync.topic.acls.enabled': true,
  /** `--sync.topic.acls.interval.seconds`, in seconds (MirrorMaker 2's default). */
  'sync.topic.acls.interval.seconds': 600,
  /** `--pass.through`: forward record batches undecoded where safe. */
  'pass.through': DEFAULT_PASS_THROUGH,
  /** `--corrupt.batches`: a source batch whose CRC-32C does not match stops the flow. */
  'corrupt.batches': DEFAULT_CORRUPT_BATCHES,
  /** `--throughput.limit.bytes`, bytes per second of fetched source data: 0 is no limit. */
  'throughput.limit.bytes': 0,
  /** `--log.level`. */
  'log.level': 'info',
  /** `--drain.timeout.ms`, in ms. */
  'drain.timeout.ms': 30_000,
  /** `--sync.group.offsets.enabled`. */
  'sync.group.offsets.enabled': false,
  /** `--groups`: every group. */
  groups: '.*',
  /** `--groups.exclude`: MirrorMaker 2's default. */
  'groups.exclude': DEFAULT_GROUPS_EXCLUDE,
  /** `--sync.group.offsets.interval.seconds`, in seconds. */
  'sync.group.offsets.interval.seconds': 10,
  /** `--digests.enabled`: range digests of what was copied, for verification without the source. */
  'digests.enabled': false,
  /** `--digests.range.records`: most records one digest covers. */
  'digests.range.records': 1000,
  /** `--digests.audit.interval.ms`, in ms: 0 turns the continuous audit off. */
  'digests.audit.interval.ms': 0,
  /** `--digests.audit.max.records`: records re-read from the target per audit pass. */
  'digests.audit.max.records': 10_000,
} as const
