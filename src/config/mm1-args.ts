import { ConfigError, type ConfigProblem } from '../shared/errors.js'
import { LogLevels, type LogLevel } from '../shared/logger.js'
import { connectionFromProperties, consumerSettingsFromProperties, producerSettingsFromProperties } from './client-properties.js'
import type { Properties } from './java-properties.js'
import { readPropertiesFile } from './properties-file.js'
import { checkLegacyClientKeys } from './legacy-client-keys.js'
import { FLAG_DEFAULTS } from './flag-defaults.js'
import { parsePassThrough, parseShallowIterator, resolvePassThrough } from './pass-through.js'
import { parseCorruptBatches } from './corrupt-batches.js'
import { parseThroughputLimit } from './throughput-limit.js'
import { checkExactlyOnceProducer, DEFAULT_TRANSACTION_TIMEOUT_MS, parseExactlyOnceFlag } from './exactly-once.js'
import { checkHandlerPassThrough, parseMessageHandler } from './message-handler-config.js'
import type { ClusterConnection } from './cluster-connection.js'
import { freezeConfig, type ConsumerSettings, type FlowConfig, type MirrorConfig, type ProducerSettings } from './mirror-config.js'
import type { SidecarSettings } from './sidecar-settings.js'
import { compileTopicPattern, createGroupFilter, createTopicFilter, type TopicFilter } from './topic-filter.js'
import { DEFAULT_TOPIC_CONFIG_FILTER } from './topic-config-filter.js'
import { parseBoolean, parseChoice, parseInteger, ProblemList } from './values.js'

const D = FLAG_DEFAULTS

/**
 * The MirrorMaker 1 command line, flag by flag: name, value type and help (defaults from `FLAG_DEFAULTS`). The same names, upper-cased
 * with `MIRROR_` in front and dots as underscores, are read from the environment (flags win).
 */
export const MM1_FLAGS = {
  'consumer.config': {
    type: 'string',
    array: true,
    describe: 'Java consumer .properties of a source cluster (bootstrap.servers, group.id, ...); repeat for several sources',
  },
  'producer.config': { type: 'string', describe: 'Java producer .properties of the target cluster (bootstrap.servers, acks, compression.type, ...)' },
  whitelist: { type: 'string', describe: 'Topics to mirror: Java regex, whole name must match, a comma means "or"' },
  include: { type: 'string', describe: 'Alias of --whitelist (Kafka 3.0 name)' },
  blacklist: { type: 'string', describe: 'Topics not to mirror (same syntax)' },
  exclude: { type: 'string', describe: 'Alias of --blacklist' },
  'num.streams': { type: 'string', describe: `Consumers in this process (default ${D['num.streams']})` },
  'num.producers': {
    type: 'string',
    describe: `Producer lanes: produce requests in flight in parallel, one per lane; a partition is in one request at a time; at least once, as many lanes again while the target's round trip is long (default ${D['num.producers']})`,
  },
  'queue.size': { type: 'string', describe: `Records held between consumers and producers, in flight included (default ${D['queue.size']})` },
  'queue.bytes': { type: 'string', describe: `Bytes held between consumers and producers (default ${D['queue.bytes']})` },
  'offset.commit.interval.ms': {
    type: 'string',
    describe: `How often acknowledged offsets are committed on the source (default ${D['offset.commit.interval.ms']})`,
  },
  'abort.on.send.failure': { type: 'string', describe: `Stop on a record the target refuses for good (default ${D['abort.on.send.failure']}); false skips it` },
  'refresh.topics.interval.ms': {
    type: 'string',
    describe: `How often new source topics and partitions are looked for (default ${D['refresh.topics.interval.ms']})`,
  },
  'metrics.port': { type: 'string', describe: `Port of /metrics, /healthz, /readyz (default ${D['metrics.port']}; 0 picks a free one)` },
  'metrics.host': { type: 'string', describe: `Interface the HTTP server binds (default ${D['metrics.host']}: all interfaces)` },
  'metrics.partition.labels': {
    type: 'string',
    describe: `false: lag and status metrics per topic instead of per partition, for many partitions (default ${D['metrics.partition.labels']})`,
  },
  'idle.gc': {
    type: 'string',
    describe: `true: one full garbage collection once the mirror is idle after a busy spell, giving back the memory the copy left (default ${D['idle.gc']})`,
  },
  'log.level': { type: 'string', describe: `debug, info, warn, error (default ${D['log.level']})` },
  'drain.timeout.ms': { type: 'string', describe: `How long shutdown waits for in-flight records (default ${D['drain.timeout.ms']})` },
  'exactly.once': {
    type: 'string',
    describe: `Copy exactly once: records and positions in transactions on the target, read them with isolation.level=read_committed (default ${D['exactly.once']})`,
  },
  'exactly.once.commit.interval.ms': {
    type: 'string',
    describe: `Longest a producer lane's transaction stays open with exactly-once (default ${D['exactly.once.commit.interval.ms']})`,
  },
  'pass.through': {
    type: 'string',
    describe: `Forward fetched record batches undecoded where safe: auto, on or off (default ${D['pass.through']}; consumer key shallowiterator.enable=true/false also works)`,
  },
  'throughput.limit.bytes': {
    type: 'string',
    describe: `Most bytes of fetched source data copied per second (a token bucket with one second of burst; fetching waits, nothing is dropped), shown in kafka_mirror_throughput_limit_bytes_per_second and kafka_mirror_throttled_seconds_total (default ${D['throughput.limit.bytes']}: no limit)`,
  },
  'corrupt.batches': {
    type: 'string',
    describe: `A source record batch whose CRC-32C does not match its bytes: fail stops the mirror before it, skip leaves it out, counts it in kafka_mirror_corrupt_batches_total and commits past it (default ${D['corrupt.batches']}); never copied either way`,
  },
  'sync.topic.acls.enabled': {
    type: 'string',
    describe: `Copy the ACLs of mirrored topics to the target (ALLOW WRITE left out, ALLOW ALL as READ) (default ${D['sync.topic.acls.enabled']})`,
  },
  'sync.topic.acls.interval.seconds': {
    type: 'string',
    describe: `How often topic ACLs are synced, in seconds (default ${D['sync.topic.acls.interval.seconds']})`,
  },
  'sync.topic.configs.interval.seconds': {
    type: 'string',
    describe: `How often target topic configs are brought in line with the source's, in seconds (default ${D['sync.topic.configs.interval.seconds']})`,
  },
  'message.handler': {
    type: 'string',
    describe:
      'JavaScript module (.js, .mjs, .cjs) whose handle(record, context) maps each record to zero or more records (filter, rewrite, re-key, headers); see docs/message-handler.md',
  },
  'message.handler.args': { type: 'string', describe: "A string handed to every handler call as context.args (MirrorMaker 1's flag)" },
  'new.consumer': { type: 'boolean', describe: 'Accepted and ignored (MirrorMaker 1 compatibility)' },
  'sync.group.offsets.enabled': {
    type: 'string',
    describe: `Copy committed offsets of source consumer groups to the target, translated exactly (default ${D['sync.group.offsets.enabled']})`,
  },
  groups: { type: 'string', describe: `Groups whose offsets are synced: regex, whole id must match, a comma means "or" (default ${D.groups})` },
  'groups.exclude': { type: 'string', describe: `Groups never synced (default "${D['groups.exclude']}")` },
  'sync.group.offsets.interval.seconds': {
    type: 'string',
    describe: `How often group offsets are synced, in seconds (default ${D['sync.group.offsets.interval.seconds']})`,
  },
  'digests.enabled': {
    type: 'string',
    describe: `Write a digest (hash of key, value, headers, timestamp) per range of copied records to mirror-digests.<alias>.internal on the target, for mirror-check verify --digests (default ${D['digests.enabled']}; with pass-through each forwarded batch is decoded once after its ack)`,
  },
  'digests.range.records': { type: 'string', describe: `Most records one digest covers (default ${D['digests.range.records']})` },
  'digests.audit.interval.ms': {
    type: 'string',
    describe: `Continuous audit: every interval re-read sampled digested ranges of the target and compare (default ${D['digests.audit.interval.ms']}: off; needs --digests.enabled true)`,
  },
  'digests.audit.max.records': { type: 'string', describe: `Records the continuous audit re-reads per pass (default ${D['digests.audit.max.records']})` },
} as const

export type Mm1FlagName = keyof typeof MM1_FLAGS

/** Raw values as given: flags already merged over `MIRROR_*` environment variables. */
export type Mm1Values = Partial<Record<Mm1FlagName, string | string[] | boolean>>

function envName (flag: string): string {
  return 'MIRROR_' + flag.toUpperCase().replace(/[.-]/g, '_')
}

/** Fills flags not given on the command line from `MIRROR_*` variables. */
export function mergeEnv (flags: Mm1Values, env: NodeJS.ProcessEnv): Mm1Values {
  const merged: Mm1Values = { ...flags }
  for (const flag of Object.keys(MM1_FLAGS) as Mm1FlagName[]) {
    const raw = env[envName(flag)]
    if (merged[flag] !== undefined || raw === undefined || raw === '') continue
    merged[flag] = flag === 'consumer.config' ? raw.split(',').map(s => s.trim()) : raw
  }
  return merged
}

function single (values: Mm1Values, flag: Mm1FlagName, problems: ProblemList): string | undefined {
  const value = values[flag]
  if (value === undefined || typeof value === 'boolean') return undefined
  if (Array.isArray(value)) {
    if (value.length > 1) problems.add(`--${flag}`, value.join(' '), 'given more than once; give it once')
    return value[value.length - 1]
  }
  return value
}

/** Reads a properties file, turning an unreadable file into a problem instead of an exception. */
function readFile (path: string, flag: string, problems: ProblemList): Properties | undefined {
  try {
    return readPropertiesFile(path, flag)
  } catch (error) {
    if (error instanceof ConfigError) { problems.problems.push(...error.problems); return undefined }
    throw error
  }
}

/** The client properties of one cluster, already read, and how its keys are named in messages. */
export interface ClientFile {
  readonly properties: Properties
  /** Prefix of key names in messages, e.g. `source.properties: `. */
  readonly where: string
  /** Where to set `bootstrap.servers`, for the message when it is missing. */
  readonly bootstrapHint: string
  /** List keys the settings do not read in the ignored-keys warning (default true; false when the caller does). */
  readonly reportUnused?: boolean
}

/** Where the MirrorMaker 1 settings come from: the command line, or a one-file configuration. */
export interface Mm1Source {
  /** How a flag is named in messages: `--whitelist` on the command line. */
  readonly flagKey: (flag: Mm1FlagName) => string
  /** Reads the client files, recording problems; called after the flags are checked, so messages keep that order. */
  readonly clients: (problems: ProblemList) => { producer: ClientFile | undefined, consumers: Array<ClientFile | undefined> }
  /** Replaces `--metrics.*`, `--log.level` and `--drain.timeout.ms` of the values (a one-file configuration takes them from flags). */
  readonly settings?: SidecarSettings
}

/**
 * Builds the sidecar configuration from MirrorMaker 1 flags (and their `MIRROR_*` variables).
 * Every problem is collected and thrown together as one `ConfigError`, before anything connects.
 */
export function configFromMm1 (values: Mm1Values): MirrorConfig {
  return buildMm1Config(values, new ProblemList(), {
    flagKey: flag => `--${flag}`,
    clients: problems => {
      const consumerFiles = ([] as string[]).concat((values['consumer.config'] as string[] | string | undefined) ?? [])
      const producerFile = single(values, 'producer.config', problems)
      if (consumerFiles.length === 0) {
        problems.add('--consumer.config', undefined, "missing; give the source cluster's consumer .properties file (with bootstrap.servers)")
      }
      if (producerFile === undefined) {
        problems.add('--producer.config', undefined, "missing; give the target cluster's producer .properties file (with bootstrap.servers)")
      }
      const producerMissing = problems.problems.at(-1)
      const producerProps = producerFile === undefined ? undefined : readFile(producerFile, '--producer.config', problems)
      const consumers = consumerFiles.map(file => {
        const properties = readFile(file, '--consumer.config', problems)
        return properties === undefined ? undefined : { properties, where: `${file}: `, bootstrapHint: 'in the --consumer.config file' }
      })
      const oneFile = consumerFiles.find((_file, index) => consumers[index]?.properties.has('target.bootstrap.servers') === true)
      if (oneFile !== undefined) {
        // Source and target in one file: that line says how to run it; "--producer.config: missing" would mislead.
        if (producerFile === undefined) problems.problems.splice(problems.problems.indexOf(producerMissing as ConfigProblem), 1)
        problems.add(
          '--consumer.config',
          oneFile,
          `holds target.bootstrap.servers, the one-file form (source and target in one file); run it as mirror-sidecar ${oneFile}, without --consumer.config and --producer.config`
        )
      }
      return {
        producer:
          producerProps === undefined ? undefined : { properties: producerProps, where: `${producerFile}: `, bootstrapHint: 'in the --producer.config file' },
        consumers,
      }
    },
  })
}

type FlagKey = (flag: Mm1FlagName) => string
type Mm1Clients = ReturnType<Mm1Source['clients']>

/** `--whitelist`/`--include` and `--blacklist`/`--exclude` (aliases), compiled. */
function mm1Topics (values: Mm1Values, key: FlagKey, problems: ProblemList) {
  const whitelist = single(values, 'whitelist', problems)
  const include = single(values, 'include', problems)
  if (whitelist !== undefined && include !== undefined && whitelist !== include) {
    problems.add(key('include'), include, `conflicts with ${key('whitelist')} "${whitelist}" (they are aliases); give one of them`)
  }
  const blacklist = single(values, 'blacklist', problems)
  const excludeFlag = single(values, 'exclude', problems)
  if (blacklist !== undefined && excludeFlag !== undefined && blacklist !== excludeFlag) {
    problems.add(key('exclude'), excludeFlag, `conflicts with ${key('blacklist')} "${blacklist}" (they are aliases); give one of them`)
  }
  const includeSource = include ?? whitelist
  const excludeSource = excludeFlag ?? blacklist
  if (includeSource === undefined) {
    problems.add(key('whitelist'), undefined, key('whitelist').startsWith('--')
      ? 'missing; name the topics to mirror, e.g. --whitelist "orders.*,payments" (or --include)'
      : 'missing; name the topics to mirror, e.g. whitelist=orders.*,payments')
  }
  const includePattern =
    includeSource === undefined ? undefined : compileTopicPattern(key(include === undefined ? 'whitelist' : 'include'), includeSource, problems)
  const excludePattern =
    excludeSource === undefined ? undefined : compileTopicPattern(key(excludeFlag === undefined ? 'blacklist' : 'exclude'), excludeSource, problems)
  return { includeSource, excludeSource, includePattern, excludePattern }
}

/** The integer flag `flag`, its default when not given or not valid. */
function intFlag (values: Mm1Values, key: FlagKey, problems: ProblemList, flag: Mm1FlagName, fallback: number, min: number): number {
  return parseInteger(key(flag), single(values, flag, problems), { min }, problems) ?? fallback
}

/** The flags of the copy, the process and group offset sync, each with its default. */
function mm1Settings (values: Mm1Values, key: FlagKey, problems: ProblemList) {
  const int = (flag: Mm1FlagName, fallback: number, min: number): number => intFlag(values, key, problems, flag, fallback, min)
  const numStreams = int('num.streams', D['num.streams'], 1)
  const numProducers = int('num.producers', D['num.producers'], 1)
  const queueMaxRecords = int('queue.size', D['queue.size'], 1)
  const queueMaxBytes = int('queue.bytes', D['queue.bytes'], 1024)
  const offsetCommitIntervalMs = int('offset.commit.interval.ms', D['offset.commit.interval.ms'], 1)
  const refreshTopicsIntervalMs = int('refresh.topics.interval.ms', D['refresh.topics.interval.ms'], 100)
  const metricsPort =
    parseInteger(key('metrics.port'), single(values, 'metrics.port', problems), { min: 0, max: 65535, expected: 'a port number from 0 to 65535' }, problems) ??
    D['metrics.port']
  const drainTimeoutMs = int('drain.timeout.ms', D['drain.timeout.ms'], 0)
  const metricsPartitionLabels =
    parseBoolean(key('metrics.partition.labels'), single(values, 'metrics.partition.labels', problems), problems) ?? D['metrics.partition.labels']
  const idleGc = parseBoolean(key('idle.gc'), single(values, 'idle.gc', problems), problems) ?? D['idle.gc']
  const syncTopicAcls =
    parseBoolean(key('sync.topic.acls.enabled'), single(values, 'sync.topic.acls.enabled', problems), problems) ?? D['sync.topic.acls.enabled']
  const syncTopicAclsIntervalMs = int('sync.topic.acls.interval.seconds', D['sync.topic.acls.interval.seconds'], 1) * 1000
  const syncTopicConfigsIntervalMs = int('sync.topic.configs.interval.seconds', D['sync.topic.configs.interval.seconds'], 1) * 1000
  const exactlyOnceFlag = parseExactlyOnceFlag(key('exactly.once'), single(values, 'exactly.once', problems), problems) ?? D['exactly.once']
  const exactlyOnceIntervalMs = int('exactly.once.commit.interval.ms', D['exactly.once.commit.interval.ms'], 1)
  const passThroughFlag = parsePassThrough(key('pass.through'), single(values, 'pass.through', problems), problems)
  const corruptBatches = parseCorruptBatches(key('corrupt.batches'), single(values, 'corrupt.batches', problems), problems) ?? D['corrupt.batches']
  const throughputLimitBytes = parseThroughputLimit(key('throughput.limit.bytes'), single(values, 'throughput.limit.bytes', problems), problems)
  const abortOnSendFailure =
    parseBoolean(key('abort.on.send.failure'), single(values, 'abort.on.send.failure', problems), problems) ?? D['abort.on.send.failure']
  const logLevel: LogLevel = parseChoice(key('log.level'), single(values, 'log.level', problems), LogLevels, problems) ?? D['log.level']
  const groupSyncEnabled =
    parseBoolean(key('sync.group.offsets.enabled'), single(values, 'sync.group.offsets.enabled', problems), problems) ?? D['sync.group.offsets.enabled']
  const groupSyncIntervalMs = int('sync.group.offsets.interval.seconds', D['sync.group.offsets.interval.seconds'], 1) * 1000
  const groupsSource = single(values, 'groups', problems) ?? D.groups
  const groupsExcludeSource = single(values, 'groups.exclude', problems) ?? D['groups.exclude']
  const groupsPattern = compileTopicPattern(key('groups'), groupsSource, problems)
  const groupsExcludePattern = groupsExcludeSource.trim() === '' ? undefined : compileTopicPattern(key('groups.exclude'), groupsExcludeSource, problems)
  return {
    numStreams,
    numProducers,
    queueMaxRecords,
    queueMaxBytes,
    offsetCommitIntervalMs,
    refreshTopicsIntervalMs,
    metricsPort,
    drainTimeoutMs,
    metricsPartitionLabels,
    idleGc,
    syncTopicAcls,
    syncTopicAclsIntervalMs,
    syncTopicConfigsIntervalMs,
    exactlyOnceFlag,
    exactlyOnceIntervalMs,
    passThroughFlag,
    corruptBatches,
    throughputLimitBytes,
    abortOnSendFailure,
    logLevel,
    groupSyncEnabled,
    groupSyncIntervalMs,
    groupsSource,
    groupsExcludeSource,
    groupsPattern,
    groupsExcludePattern,
  }
}

/** `--digests.*`, with the two checks across flags. */
function mm1Digests (values: Mm1Values, key: FlagKey, problems: ProblemList) {
  const int = (flag: Mm1FlagName, fallback: number, min: number): number => intFlag(values, key, problems, flag, fallback, min)
  const digestsEnabled = parseBoolean(key('digests.enabled'), single(values, 'digests.enabled', problems), problems) ?? D['digests.enabled']
  const digestRangeRecords = int('digests.range.records', D['digests.range.records'], 1)
  const digestAuditIntervalMs = int('digests.audit.interval.ms', D['digests.audit.interval.ms'], 0)
  const digestAuditMaxRecords = int('digests.audit.max.records', D['digests.audit.max.records'], 1)
  if (digestsEnabled && digestAuditMaxRecords < digestRangeRecords) {
    problems.add(
      key('digests.audit.max.records'),
      String(digestAuditMaxRecords),
      `below ${key('digests.range.records')} ${digestRangeRecords}: a pass could not re-read one digest; give at least ${digestRangeRecords}`
    )
  }
  if (digestAuditIntervalMs > 0 && !digestsEnabled) {
    problems.add(
      key('digests.audit.interval.ms'),
      String(digestAuditIntervalMs),
      `the audit compares the target with the digests the mirror writes; add ${key('digests.enabled')} true, or leave the interval at 0`
    )
  }
  return { digestsEnabled, digestRangeRecords, digestAuditIntervalMs, digestAuditMaxRecords }
}

/** The target cluster's connection and producer settings from `--producer.config`. */
function mm1Target (clients: Mm1Clients, key: FlagKey, exactlyOnceFlag: boolean, problems: ProblemList) {
  const producerFile = clients.producer
  if (producerFile !== undefined) checkLegacyClientKeys(producerFile.properties, producerFile.where, 'target', problems)
  const target =
    producerFile === undefined
      ? undefined
      : connectionFromProperties(
        producerFile.properties,
        { alias: 'target', where: producerFile.where, bootstrapHint: producerFile.bootstrapHint, defaultClientId: 'mirror-sidecar-producer' },
        problems
      )
  const producer =
    producerFile === undefined
      ? undefined
      : producerSettingsFromProperties(producerFile.properties, producerFile.where, problems, producerFile.reportUnused ?? true)
  if (exactlyOnceFlag && producer !== undefined && producerFile !== undefined) {
    checkExactlyOnceProducer(key('exactly.once'), producer, producerFile.where, problems)
  }
  return { target, producer }
}

/** What every flow of a MirrorMaker 1 command line shares: the flags, the target, the topics and the handler. */
interface Mm1Shared {
  readonly s: Omit<ReturnType<typeof mm1Settings>, 'metricsPort' | 'drainTimeoutMs' | 'metricsPartitionLabels' | 'idleGc' | 'logLevel'>
  readonly d: ReturnType<typeof mm1Digests>
  readonly key: FlagKey
  readonly target: ClusterConnection
  readonly producer: ProducerSettings
  readonly topics: TopicFilter
  readonly exactlyOnceFlag: boolean
  readonly messageHandler: FlowConfig['messageHandler']
}

/** One flow of a MirrorMaker 1 command line: a source cluster (`alias`) into the target. */
function mm1FlowConfig (
  alias: string, source: ClusterConnection, consumer: ConsumerSettings, passThrough: FlowConfig['passThrough'], shared: Mm1Shared
): FlowConfig {
  return {
    name: `${alias}->target`,
    source,
    target: shared.target,
    consumer,
    producer: shared.producer,
    topics: shared.topics,
    replicationPolicy: { kind: 'identity' },
    numStreams: shared.s.numStreams,
    numProducers: shared.s.numProducers,
    queueMaxRecords: shared.s.queueMaxRecords,
    queueMaxBytes: shared.s.queueMaxBytes,
    offsetCommitIntervalMs: shared.s.offsetCommitIntervalMs,
    abortOnSendFailure: shared.s.abortOnSendFailure,
    passThrough,
    corruptBatches: shared.s.corruptBatches,
    ...(shared.s.throughputLimitBytes === undefined ? {} : { throughputLimitBytes: shared.s.throughputLimitBytes }),
    ...(shared.exactlyOnceFlag
      ? {
          exactlyOnce: {
            key: shared.key('exactly.once'),
            commitIntervalMs: shared.s.exactlyOnceIntervalMs,
            transactionTimeoutMs: DEFAULT_TRANSACTION_TIMEOUT_MS,
            positionsTopic: `mirror-positions.${alias}.internal`,
            positionsReplicationFactor: -1,
          },
        }
      : {}),
    refreshTopicsIntervalMs: shared.s.refreshTopicsIntervalMs,
    syncTopicConfigs: true,
    topicConfigFilter: DEFAULT_TOPIC_CONFIG_FILTER,
    syncTopicConfigsIntervalMs: shared.s.syncTopicConfigsIntervalMs,
    syncTopicAcls: shared.s.syncTopicAcls,
    syncTopicAclsIntervalMs: shared.s.syncTopicAclsIntervalMs,
    replicationFactor: -1,
    offsetSyncs: { enabled: true, topic: `mirror-offset-syncs.${alias}.internal`, replicationFactor: -1 },
    groupSync: {
      enabled: shared.s.groupSyncEnabled,
      emitCheckpoints: shared.s.groupSyncEnabled,
      groups: createGroupFilter(shared.s.groupsPattern ?? /^(?:.*)$/u, shared.s.groupsExcludePattern, shared.s.groupsSource, shared.s.groupsExcludeSource),
      intervalMs: shared.s.groupSyncIntervalMs,
      checkpointIntervalMs: shared.s.groupSyncIntervalMs,
      checkpointsTopic: `${alias}.checkpoints.internal`,
      checkpointsReplicationFactor: -1,
    },
    heartbeats: { enabled: false, intervalMs: 1000, topic: 'heartbeats', replicationFactor: -1 },
    ...(shared.messageHandler === undefined ? {} : { messageHandler: shared.messageHandler }),
    digests: {
      enabled: shared.d.digestsEnabled,
      topic: `mirror-digests.${alias}.internal`,
      rangeRecords: shared.d.digestRangeRecords,
      replicationFactor: -1,
      auditIntervalMs: shared.d.digestAuditIntervalMs,
      auditMaxRecords: shared.d.digestAuditMaxRecords,
    },
  }
}

/** The MirrorMaker 1 settings with one flow per source cluster into the target; problems are thrown together. */
export function buildMm1Config (values: Mm1Values, problems: ProblemList, from: Mm1Source): MirrorConfig {
  const key = from.flagKey
  const { includeSource, excludeSource, includePattern, excludePattern } = mm1Topics(values, key, problems)
  const { metricsPort, drainTimeoutMs, metricsPartitionLabels, idleGc, logLevel, ...s } = mm1Settings(values, key, problems)
  const { exactlyOnceFlag, passThroughFlag } = s
  const d = mm1Digests(values, key, problems)
  const messageHandler = parseMessageHandler({ module: key('message.handler'), args: key('message.handler.args') },
    single(values, 'message.handler', problems), single(values, 'message.handler.args', problems), problems)

  const clients = from.clients(problems)
  const { target, producer } = mm1Target(clients, key, exactlyOnceFlag, problems)
  const flows: FlowConfig[] = []
  clients.consumers.forEach((file, index) => {
    if (file === undefined) return
    const alias = clients.consumers.length === 1 ? 'source' : `source${index + 1}`
    checkLegacyClientKeys(file.properties, file.where, alias, problems)
    const source = connectionFromProperties(
      file.properties,
      { alias, where: file.where, bootstrapHint: file.bootstrapHint, defaultClientId: 'mirror-sidecar' },
      problems
    )
    const consumer = consumerSettingsFromProperties(file.properties, file.where, problems, file.reportUnused ?? true)
    const passThrough = resolvePassThrough(
      { key: key('pass.through'), value: passThroughFlag },
      {
        key: `${file.where}shallowiterator.enable`,
        value: parseShallowIterator(`${file.where}shallowiterator.enable`, file.properties.get('shallowiterator.enable')?.value, problems),
      },
      problems
    )
    checkHandlerPassThrough(passThrough, passThroughFlag === 'on' ? key('pass.through') : `${file.where}shallowiterator.enable`, messageHandler, problems)
    if (source === undefined || target === undefined || producer === undefined || includePattern === undefined || !problems.empty) return
    flows.push(mm1FlowConfig(alias, source, consumer, passThrough, {
      s,
      d,
      key,
      target,
      producer,
      messageHandler,
      exactlyOnceFlag,
      topics: createTopicFilter(includePattern, excludePattern, includeSource as string, excludeSource)
    }))
  })
  if (!problems.empty) throw new ConfigError(problems.problems)
  const ignoredKeys = problems.ignored
  const settings = from.settings ?? {
    metricsPort,
    metricsHost: single(values, 'metrics.host', problems) ?? D['metrics.host'],
    metricsPartitionLabels,
    idleGc,
    logLevel,
    drainTimeoutMs,
  }
  return freezeConfig({ flows, ...settings, ignoredKeys })
}
