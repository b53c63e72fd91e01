import type { ExpectedSetting, Printed } from './settings-check.js'
import { PRINT_CONFIG_KIND } from './resolved-config.js'

/**
 * What each contender is given and where it prints what that resolved to: MirrorMaker 1's Java
 * producer and consumers, MirrorMaker 2's Connect worker, connectors and task clients, the
 * sidecar's `--print-config`. Pure: the contenders build their settings, this maps each one.
 */

/** Settings a properties file gave a Java client or the sidecar: `key=value` as written. */
export type WrittenProperties = Readonly<Record<string, string | number>>

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** `acks=all` resolves to `-1` in every tool's printout. */
function printedForm (key: string, value: string): string | undefined {
  return key === 'acks' && value.trim().toLowerCase() === 'all' ? '-1' : undefined
}

function expectation (key: string, passed: string | number, printed: Printed, expected?: string): ExpectedSetting {
  return { key, passed: String(passed), printed, ...(expected === undefined ? {} : { expected }) }
}

function javaClientSettings (file: WrittenProperties, block: string, clientId?: RegExp): ExpectedSetting[] {
  return Object.entries(file).map(([key, value]) =>
    expectation(key, value, { block, key, ...(clientId === undefined ? {} : { clientId }) }, printedForm(key, String(value))))
}

const MM1_COMMAND_LINE = 'MirrorMaker 1 does not print its command-line options'

/** MirrorMaker 1: its consumer and producer files, and the command line (threads counted by their consumers). */
export function mirrorMaker1Expectations (
  consumer: WrittenProperties,
  producer: WrittenProperties,
  commandLine: { include: string, streams: number, commitIntervalMs?: number }
): ExpectedSetting[] {
  // One consumer per --num.streams thread, client.id <group.id>-<thread>.
  const consumers = new RegExp(`^${escapeRegExp(String(consumer['group.id'] ?? ''))}-\\d+$`)
  return [
    ...javaClientSettings(consumer, 'ConsumerConfig', consumers),
    ...javaClientSettings(producer, 'ProducerConfig'),
    expectation('--num.streams', commandLine.streams, { countOf: 'ConsumerConfig', clientId: consumers }),
    expectation('--include', commandLine.include, { unchecked: MM1_COMMAND_LINE }),
    ...(commandLine.commitIntervalMs === undefined
      ? []
      : [expectation('--offset.commit.interval.ms', commandLine.commitIntervalMs, { unchecked: MM1_COMMAND_LINE })]),
  ]
}

/** client.id of MirrorMaker 2's task producers (the data path), `connector-producer-MirrorSourceConnector-<task>`. */
const MM2_TASK_PRODUCER = /^connector-producer-MirrorSourceConnector-\d+$/
/** client.id of MirrorMaker 2's task consumers, `<source>-><target>|MirrorSourceConnector-<task>|replication-consumer`. */
const MM2_TASK_CONSUMER = /\|MirrorSourceConnector-\d+\|replication-consumer$/
const CHECKPOINTS_NOT_STARTED = 'MirrorCheckpointConnector is not configured without groups or checkpoints: its config is never printed'

/** Unescapes a `.properties` value as Java's `Properties.load` does (`\\.` is `\.`). */
export function javaPropertiesValue (written: string): string {
  return written.replace(/\\(.)/g, '$1')
}

/**
 * MirrorMaker 2 in dedicated mode (`--clusters <target>`): every key of its mm2.properties, by
 * where Connect prints it (worker: `DistributedConfig`; source connector: `MirrorSourceConfig`;
 * heartbeat connector: `MirrorHeartbeatConfig`; task clients: `ProducerConfig` / `ConsumerConfig`).
 */
export function mirrorMaker2Expectations (mm2Properties: WrittenProperties, aliases: { source: string, target: string }): ExpectedSetting[] {
  const { source: s, target: t } = aliases
  const source = (key: string): Printed => ({ block: 'MirrorSourceConfig', key })
  const worker = (key: string): Printed => ({ block: 'DistributedConfig', key })
  const fixed: Readonly<Record<string, Printed>> = {
    clusters: { block: 'MirrorMakerConfig', key: 'clusters' },
    [`${s}.bootstrap.servers`]: { block: 'ConsumerConfig', key: 'bootstrap.servers', clientId: MM2_TASK_CONSUMER },
    [`${t}.bootstrap.servers`]: { block: 'ProducerConfig', key: 'bootstrap.servers', clientId: MM2_TASK_PRODUCER },
    [`${s}->${t}.enabled`]: source('enabled'),
    [`${t}->${s}.enabled`]: { unchecked: `a disabled flow starts no connector; --clusters ${t} runs only the flows into ${t}` },
    [`${s}->${t}.topics`]: source('topics'),
    'replication.policy.class': source('replication.policy.class'),
    'tasks.max': source('tasks.max'),
    'replication.factor': source('replication.factor'),
    'offset-syncs.topic.replication.factor': source('offset-syncs.topic.replication.factor'),
    'sync.topic.configs.enabled': source('sync.topic.configs.enabled'),
    'sync.topic.acls.enabled': source('sync.topic.acls.enabled'),
    'heartbeats.topic.replication.factor': { block: 'MirrorHeartbeatConfig', key: 'heartbeats.topic.replication.factor' },
    'emit.heartbeats.enabled': { block: 'MirrorHeartbeatConfig', key: 'emit.heartbeats.enabled' },
    'checkpoints.topic.replication.factor': { unchecked: CHECKPOINTS_NOT_STARTED },
    'emit.checkpoints.enabled': { unchecked: CHECKPOINTS_NOT_STARTED },
    'sync.group.offsets.enabled': { unchecked: CHECKPOINTS_NOT_STARTED },
    'refresh.groups.enabled': { unchecked: CHECKPOINTS_NOT_STARTED },
    'offset.storage.replication.factor': worker('offset.storage.replication.factor'),
    'status.storage.replication.factor': worker('status.storage.replication.factor'),
    'config.storage.replication.factor': worker('config.storage.replication.factor'),
    [`${t}.offset.flush.interval.ms`]: worker('offset.flush.interval.ms'),
    [`${t}.exactly.once.source.support`]: worker('exactly.once.source.support'),
    // Top-level forms dedicated mode does not apply to the worker: checked where they would show, so the trap fails loudly.
    'offset.flush.interval.ms': worker('offset.flush.interval.ms'),
    'exactly.once.source.support': worker('exactly.once.source.support'),
  }
  return Object.entries(mm2Properties).map(([key, written]) => {
    const value = key.endsWith('.topics') ? javaPropertiesValue(String(written)) : String(written)
    const known = fixed[key]
    if (known !== undefined) return expectation(key, value, known, key === 'clusters' ? value.split(',').map(alias => alias.trim()).join(',') : undefined)
    for (const [prefix, block, clientId] of [
      [`${t}.producer.`, 'ProducerConfig', MM2_TASK_PRODUCER],
      [`${s}.consumer.`, 'ConsumerConfig', MM2_TASK_CONSUMER],
    ] as const) {
      if (!key.startsWith(prefix)) continue
      const clientKey = key.slice(prefix.length)
      return expectation(key, value, { block, key: clientKey, clientId }, printedForm(clientKey, value))
    }
    return expectation(key, value, { unchecked: 'the bench does not know where MirrorMaker 2 prints this key' })
  })
}

/** Producer keys of the sidecar's target file and the `--print-config` field each resolves to. */
const SIDECAR_PRODUCER_FIELDS: Readonly<Record<string, string>> = {
  'bootstrap.servers': 'flows.0.target.brokers',
  'client.id': 'flows.0.target.clientId',
  'request.timeout.ms': 'flows.0.target.requestTimeoutMs',
  acks: 'flows.0.producer.acks',
  'compression.type': 'flows.0.producer.compression',
  'batch.size': 'flows.0.producer.batchSizeBytes',
  'linger.ms': 'flows.0.producer.lingerMs',
  'enable.idempotence': 'flows.0.producer.idempotent',
  'max.request.size': 'flows.0.producer.maxRequestSizeBytes',
}

/** Consumer keys of the sidecar's source file and their `--print-config` fields. */
const SIDECAR_CONSUMER_FIELDS: Readonly<Record<string, string>> = {
  'bootstrap.servers': 'flows.0.source.brokers',
  'client.id': 'flows.0.source.clientId',
  'group.id': 'flows.0.consumer.groupId',
  'auto.offset.reset': 'flows.0.consumer.autoOffsetReset',
  'max.poll.records': 'flows.0.consumer.maxPollRecords',
  'fetch.max.bytes': 'flows.0.consumer.fetchMaxBytes',
  'max.partition.fetch.bytes': 'flows.0.consumer.maxPartitionFetchBytes',
  'fetch.max.wait.ms': 'flows.0.consumer.fetchMaxWaitMs',
  'fetch.min.bytes': 'flows.0.consumer.fetchMinBytes',
}

/** Command-line flags of the sidecar and their `--print-config` fields (one flow: the MirrorMaker 1 command line). */
const SIDECAR_FLAG_FIELDS: Readonly<Record<string, string>> = {
  whitelist: 'flows.0.topics.include',
  include: 'flows.0.topics.include',
  'num.streams': 'flows.0.numStreams',
  'num.producers': 'flows.0.numProducers',
  'queue.size': 'flows.0.queueMaxRecords',
  'queue.bytes': 'flows.0.queueMaxBytes',
  'offset.commit.interval.ms': 'flows.0.offsetCommitIntervalMs',
  'refresh.topics.interval.ms': 'flows.0.refreshTopicsIntervalMs',
  'pass.through': 'flows.0.passThrough',
  'throughput.limit.bytes': 'flows.0.throughputLimitBytes',
  'corrupt.batches': 'flows.0.corruptBatches',
  'message.handler': 'flows.0.messageHandler.module',
  'exactly.once.commit.interval.ms': 'flows.0.exactlyOnce.commitIntervalMs',
  'digests.enabled': 'flows.0.digests.enabled',
  'metrics.port': 'metricsPort',
  'metrics.host': 'metricsHost',
  'metrics.partition.labels': 'metricsPartitionLabels',
  'idle.gc': 'idleGc',
  'log.level': 'logLevel',
  'drain.timeout.ms': 'drainTimeoutMs',
}

/** `--name value` and `--name=value` pairs of a command line, in order (a flag without a value is `true`). */
export function commandLineFlags (argv: readonly string[]): Array<{ name: string, value: string }> {
  const flags: Array<{ name: string, value: string }> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (!arg.startsWith('--')) continue
    const equals = arg.indexOf('=')
    if (equals > 0) {
      flags.push({ name: arg.slice(2, equals), value: arg.slice(equals + 1) })
      continue
    }
    const next = argv[i + 1]
    if (next !== undefined && !next.startsWith('--')) {
      flags.push({ name: arg.slice(2), value: next })
      i++
    } else {
      flags.push({ name: arg.slice(2), value: 'true' })
    }
  }
  return flags
}

const fromPrintConfig = (key: string): Printed => ({ block: PRINT_CONFIG_KIND, key })

/**
 * The sidecar, started with the MirrorMaker 1 command line: its source and target files and every
 * flag (the bench's own and `--sidecar-arg`s), against `--print-config` run with the same
 * arguments. A producer or consumer key the sidecar does not read is absent there (it lists it
 * as ignored): that is a mismatch.
 */
export function sidecarExpectations (consumer: WrittenProperties, producer: WrittenProperties, argv: readonly string[]): ExpectedSetting[] {
  const file = (properties: WrittenProperties, fields: Readonly<Record<string, string>>, section: string): ExpectedSetting[] =>
    Object.entries(properties).map(([key, value]) =>
      expectation(key, value, fromPrintConfig(fields[key] ?? `flows.0.${section}.${key}`), key === 'acks' ? printedForm(key, String(value)) : undefined)
    )
  const flags = commandLineFlags(argv).filter(flag => flag.name !== 'consumer.config' && flag.name !== 'producer.config')
  return [
    ...file(consumer, SIDECAR_CONSUMER_FIELDS, 'consumer'),
    ...file(producer, SIDECAR_PRODUCER_FIELDS, 'producer'),
    ...flags.map(({ name, value }) => {
      // --exactly.once true shows as the exactly-once section naming the flag it came from.
      if (name === 'exactly.once') {
        return expectation(`--${name}`, value, fromPrintConfig('flows.0.exactlyOnce.key'), value === 'true' ? '--exactly.once' : '(absent)')
      }
      const field = SIDECAR_FLAG_FIELDS[name]
      return expectation(
        `--${name}`,
        value,
        field === undefined ? { unchecked: 'the bench does not map this flag to a --print-config field' } : fromPrintConfig(field)
      )
    }),
  ]
}
