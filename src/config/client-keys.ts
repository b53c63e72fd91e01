import type { KeyRow, KeyValue, KeyValues } from './key-table.js'
import { CompressionNames } from './mirror-config.js'

/**
 * Most requests an idempotent producer may have in flight per connection: the broker keeps the
 * sequences of the last 5 batches of a producer to drop a resent one (KAFKA-5494); Java's producer
 * refuses more with enable.idempotence=true.
 */
const MAX_IN_FLIGHT_IDEMPOTENT = 5

/** The connection keys of a Java client file, besides the security keys (`connectionFromProperties`). */
export const CONNECTION_TABLE: readonly KeyRow[] = [
  {
    key: 'bootstrap.servers',
    type: 'text',
    readBy: 'connectionFromProperties (a host:port list)',
    defaultText: 'required',
    doc: "the cluster's brokers, host:port,...",
  },
  { key: 'client.id', type: 'text', defaultText: '`mirror-sidecar` (per flow in mm2.properties)', doc: 'the client id the brokers see' },
  { key: 'request.timeout.ms', type: 'integer', min: 1, defaultText: "the client library's (30000)", doc: 'longest wait for a broker answer' },
  { key: 'socket.connection.setup.timeout.ms', type: 'integer', min: 1, defaultText: "the client library's (10000)", doc: 'longest wait for a connection' },
]

const fetchWaitCheck = (value: KeyValue, earlier: KeyValues): string | undefined => {
  const session = earlier.number('session.timeout.ms')
  // kafkajs heartbeats between fetches, so a fetch held longer than the session would lose the group.
  return (value as number) < session
    ? undefined
    : `must be below session.timeout.ms (${session}): the consumer heartbeats between fetches; lower it or raise session.timeout.ms`
}

/** The consumer keys of a source cluster's client file (`consumerSettingsFromProperties`), in the order they are read. */
export const CONSUMER_TABLE: readonly KeyRow[] = [
  {
    key: 'group.id',
    type: 'text',
    default: 'mirror-sidecar',
    defaultText: '`mirror-sidecar` (`mirror-sidecar.<source>-to-<target>` in mm2.properties)',
    doc: "the mirror's consumer group on the source",
  },
  {
    key: 'auto.offset.reset',
    type: 'choice',
    choices: ['earliest', 'latest', 'none'],
    default: 'earliest',
    check: value => value === 'none' ? 'a mirror must start somewhere on partitions without a committed offset; use earliest or latest' : undefined,
    doc: 'where a partition without a committed offset starts: earliest or latest (none is refused)',
  },
  {
    key: 'enable.auto.commit',
    type: 'boolean',
    check: value => value === true ? 'the mirror commits only what the target acknowledged; remove the key or set it to false' : undefined,
    doc: 'only false: the mirror commits what the target acknowledged itself',
  },
  { key: 'session.timeout.ms', type: 'integer', min: 1, default: 45_000, doc: "the consumer group's session timeout" },
  { key: 'fetch.max.wait.ms', type: 'integer', min: 0, default: 500, check: fetchWaitCheck, doc: 'longest a fetch waits for data; below session.timeout.ms' },
  { key: 'max.poll.records', type: 'integer', min: 1, default: 2000, doc: 'records taken from one fetch at a time' },
  { key: 'fetch.max.bytes', type: 'integer', min: 1, default: 52_428_800, doc: 'bytes one fetch answer holds at most' },
  { key: 'max.partition.fetch.bytes', type: 'integer', min: 1, default: 1_048_576, doc: 'bytes of one partition one fetch answer holds at most' },
  { key: 'heartbeat.interval.ms', type: 'integer', min: 1, default: 3_000, doc: 'how often the consumer tells its group it is alive' },
  { key: 'fetch.min.bytes', type: 'integer', min: 1, default: 1, doc: 'bytes a fetch waits for (up to fetch.max.wait.ms)' },
  {
    key: 'fetch.sessions.enable',
    type: 'boolean',
    default: true,
    doc: "this mirror's own key: incremental fetch sessions (KIP-227), as Java's consumer always uses; a caught-up mirror's fetches name no " +
      "partition, so their cost does not grow with the partition count; false: every fetch names every partition, kafkajs' own behaviour",
  },
  {
    key: 'group.protocol',
    type: 'choice',
    choices: ['classic', 'consumer'],
    default: 'classic',
    doc: "Java's key: classic (JoinGroup and SyncGroup) or consumer (KIP-848, brokers 4.0 and later, MIRROR_SOURCE_CONSUMER=wire only). " +
      'The wire source rebalances classic groups cooperatively (KIP-429); kafkajs eagerly',
  },
  {
    key: 'group.instance.id',
    type: 'text',
    doc: "Java's key, MIRROR_SOURCE_CONSUMER=wire only: static membership (KIP-345), one id per instance; an instance started again " +
      'within session.timeout.ms takes its partitions back without a rebalance',
  },
  {
    key: 'client.rack',
    type: 'text',
    doc: "Java's key, MIRROR_SOURCE_CONSUMER=wire only: the rack the mirror runs in; partitions are fetched from a replica in it where the " +
      "brokers set replica.selector.class (KIP-392), saving cross-zone traffic. kafkajs' source ignores it with a warning and reads from leaders",
  },
  { key: 'shallowiterator.enable', type: 'boolean', readBy: 'pass-through', defaultText: 'false', doc: "MirrorMaker 1's key: true asks for pass-through" },
]

const acksCheck = (value: KeyValue): string | undefined => {
  if (value === undefined) return undefined
  const normalised = (value as string).trim().toLowerCase()
  // The mirror commits a source offset once the target acknowledged its copy: that holds only when
  // the acknowledgement means every in-sync replica has it (acks=all), and the idempotent producer refuses anything else.
  if (normalised === '0') {
    return 'acks=0 gives no acknowledgement, so the mirror could neither avoid loss nor record offsets; set acks=all or remove the key'
  }
  if (normalised === '1') {
    return 'acks=1 is acknowledged by the leader alone, so a leader change loses records whose source offsets the mirror committed; set acks=all or remove the key'
  }
  return normalised === 'all' || normalised === '-1' ? undefined : 'expected all (or -1); set acks=all or remove the key'
}

const inFlightCheck = (value: KeyValue, earlier: KeyValues): string | undefined =>
  earlier.boolean('enable.idempotence') && value !== undefined && (value as number) > MAX_IN_FLIGHT_IDEMPOTENT
    ? `the idempotent producer allows at most ${MAX_IN_FLIGHT_IDEMPOTENT} (the broker drops a resent batch by the last 5 sequences); set ${MAX_IN_FLIGHT_IDEMPOTENT} or less, or remove the key`
    : undefined

/** The producer keys of a target cluster's client file (`producerSettingsFromProperties`), in the order they are read. */
export const PRODUCER_TABLE: readonly KeyRow[] = [
  {
    key: 'acks',
    type: 'text',
    defaultText: 'all',
    check: acksCheck,
    doc: 'all or -1 only: 0 and 1 are refused, as a source offset is committed only for what every in-sync replica of the target holds',
  },
  { key: 'enable.idempotence', type: 'boolean', default: true, doc: 'the idempotent producer: a resent batch is written once' },
  {
    key: 'max.in.flight.requests.per.connection',
    type: 'integer',
    min: 1,
    defaultText: '5',
    check: inFlightCheck,
    doc: "checked as Java's producer does, at most 5 with idempotence, but without effect: each producer sends one request at a time",
  },
  {
    key: 'compression.type',
    type: 'choice',
    choices: CompressionNames,
    default: 'none',
    doc: "codec of the target's batches; another than a batch's own is a codec change",
  },
  { key: 'batch.size', type: 'integer', min: 1, default: 524_288, doc: 'bytes per partition per request' },
  {
    key: 'linger.ms',
    type: 'integer',
    min: 0,
    default: 0,
    doc: 'checked, but without effect: each fetched batch is sent at once, already as large as linger would make it',
  },
  { key: 'max.request.size', type: 'integer', min: 1, default: 1_048_576, doc: 'bytes of one produce request at most' },
]
