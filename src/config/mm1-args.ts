import { ConfigError } from '../shared/errors.js'
import { LogLevels, type LogLevel } from '../shared/logger.js'
import { connectionFromProperties, consumerSettingsFromProperties, producerSettingsFromProperties } from './client-properties.js'
import { readPropertiesFile, type Properties } from './java-properties.js'
import { DEFAULT_PRODUCER_LANES, freezeConfig, type FlowConfig, type MirrorConfig } from './mirror-config.js'
import { compileTopicPattern, createGroupFilter, createTopicFilter, DEFAULT_GROUPS_EXCLUDE } from './topic-filter.js'
import { parseBoolean, parseChoice, parseInteger, ProblemList } from './values.js'

/**
 * The MirrorMaker 1 command line, flag by flag: name, value type and help. The same names, upper-cased
 * with `MIRROR_` in front and dots as underscores, are read from the environment (flags win).
 */
export const MM1_FLAGS = {
  'consumer.config': { type: 'string', array: true, describe: 'Java consumer .properties of a source cluster (bootstrap.servers, group.id, ...); repeat for several sources' },
  'producer.config': { type: 'string', describe: 'Java producer .properties of the target cluster (bootstrap.servers, acks, compression.type, ...)' },
  whitelist: { type: 'string', describe: 'Topics to mirror: Java regex, whole name must match, a comma means "or"' },
  include: { type: 'string', describe: 'Alias of --whitelist (Kafka 3.0 name)' },
  blacklist: { type: 'string', describe: 'Topics not to mirror (same syntax)' },
  exclude: { type: 'string', describe: 'Alias of --blacklist' },
  'num.streams': { type: 'string', describe: 'Consumers in this process (default 1)' },
  'num.producers': { type: 'string', describe: 'Producers writing in parallel (default 1)' },
  'queue.size': { type: 'string', describe: 'Records held between consumers and producers, in flight included (default 10000)' },
  'queue.bytes': { type: 'string', describe: 'Bytes held between consumers and producers (default 67108864)' },
  'offset.commit.interval.ms': { type: 'string', describe: 'How often acknowledged offsets are committed on the source (default 60000)' },
  'abort.on.send.failure': { type: 'string', describe: 'Stop on a record the target refuses for good (default true); false skips it' },
  'refresh.topics.interval.ms': { type: 'string', describe: 'How often new source topics and partitions are looked for (default 30000)' },
  'metrics.port': { type: 'string', describe: 'Port of /metrics, /healthz, /readyz (default 9464; 0 picks a free one)' },
  'metrics.host': { type: 'string', describe: 'Interface the HTTP server binds (default all interfaces)' },
  'metrics.partition.labels': { type: 'string', describe: 'false: lag and status metrics per topic instead of per partition, for many partitions (default true)' },
  'log.level': { type: 'string', describe: 'debug, info, warn, error (default info)' },
  'drain.timeout.ms': { type: 'string', describe: 'How long shutdown waits for in-flight records (default 30000)' },
  'message.handler': { type: 'string', describe: 'MirrorMaker 1 message handlers are not supported (refused)' },
  'new.consumer': { type: 'boolean', describe: 'Accepted and ignored (MirrorMaker 1 compatibility)' },
  'sync.group.offsets.enabled': { type: 'string', describe: 'Copy committed offsets of source consumer groups to the target, translated exactly (default false)' },
  groups: { type: 'string', describe: 'Groups whose offsets are synced: regex, whole id must match, a comma means "or" (default .*)' },
  'groups.exclude': { type: 'string', describe: 'Groups never synced (default "console-consumer-.*, connect-.*, __.*")' },
  'sync.group.offsets.interval.seconds': { type: 'string', describe: 'How often group offsets are synced (default 10)' },
} as const

export type Mm1FlagName = keyof typeof MM1_FLAGS

/** Raw values as given: flags already merged over `MIRROR_*` environment variables. */
export type Mm1Values = Partial<Record<Mm1FlagName, string | string[] | boolean>>

export function envName (flag: string): string {
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

/**
 * Builds the sidecar configuration from MirrorMaker 1 flags (and their `MIRROR_*` variables).
 * Every problem is collected and thrown together as one `ConfigError`, before anything connects.
 */
export function configFromMm1 (values: Mm1Values): MirrorConfig {
  const problems = new ProblemList()
  const consumerFiles = ([] as string[]).concat((values['consumer.config'] as string[] | string | undefined) ?? [])
  const producerFile = single(values, 'producer.config', problems)

  if (values['message.handler'] !== undefined) {
    problems.add('--message.handler', String(values['message.handler']), 'MirrorMaker 1 message handlers (Java classes) cannot run here; remove the flag and transform records downstream')
  }
  const whitelist = single(values, 'whitelist', problems)
  const include = single(values, 'include', problems)
  if (whitelist !== undefined && include !== undefined && whitelist !== include) {
    problems.add('--include', include, `conflicts with --whitelist "${whitelist}" (they are aliases); give one of them`)
  }
  const blacklist = single(values, 'blacklist', problems)
  const excludeFlag = single(values, 'exclude', problems)
  if (blacklist !== undefined && excludeFlag !== undefined && blacklist !== excludeFlag) {
    problems.add('--exclude', excludeFlag, `conflicts with --blacklist "${blacklist}" (they are aliases); give one of them`)
  }
  const includeSource = include ?? whitelist
  const excludeSource = excludeFlag ?? blacklist
  if (includeSource === undefined) problems.add('--whitelist', undefined, 'missing; name the topics to mirror, e.g. --whitelist "orders.*,payments" (or --include)')
  const includePattern = includeSource === undefined ? undefined : compileTopicPattern(include === undefined ? '--whitelist' : '--include', includeSource, problems)
  const excludePattern = excludeSource === undefined ? undefined : compileTopicPattern(excludeFlag === undefined ? '--blacklist' : '--exclude', excludeSource, problems)

  const int = (flag: Mm1FlagName, fallback: number, min: number): number =>
    parseInteger(`--${flag}`, single(values, flag, problems), { min }, problems) ?? fallback
  const numStreams = int('num.streams', 1, 1)
  const numProducers = int('num.producers', DEFAULT_PRODUCER_LANES, 1)
  const queueMaxRecords = int('queue.size', 10_000, 1)
  const queueMaxBytes = int('queue.bytes', 67_108_864, 1024)
  const offsetCommitIntervalMs = int('offset.commit.interval.ms', 60_000, 1)
  const refreshTopicsIntervalMs = int('refresh.topics.interval.ms', 30_000, 100)
  const metricsPort = parseInteger('--metrics.port', single(values, 'metrics.port', problems), { min: 0, max: 65535, expected: 'a port number from 0 to 65535' }, problems) ?? 9464
  const drainTimeoutMs = int('drain.timeout.ms', 30_000, 0)
  const metricsPartitionLabels = parseBoolean('--metrics.partition.labels', single(values, 'metrics.partition.labels', problems), problems) ?? true
  const abortOnSendFailure = parseBoolean('--abort.on.send.failure', single(values, 'abort.on.send.failure', problems), problems) ?? true
  const logLevel: LogLevel = parseChoice('--log.level', single(values, 'log.level', problems), LogLevels, problems) ?? 'info'
  const groupSyncEnabled = parseBoolean('--sync.group.offsets.enabled', single(values, 'sync.group.offsets.enabled', problems), problems) ?? false
  const groupSyncIntervalMs = int('sync.group.offsets.interval.seconds', 10, 1) * 1000
  const groupsSource = single(values, 'groups', problems) ?? '.*'
  const groupsExcludeSource = single(values, 'groups.exclude', problems) ?? DEFAULT_GROUPS_EXCLUDE
  const groupsPattern = compileTopicPattern('--groups', groupsSource, problems)
  const groupsExcludePattern = groupsExcludeSource.trim() === '' ? undefined : compileTopicPattern('--groups.exclude', groupsExcludeSource, problems)

  if (consumerFiles.length === 0) problems.add('--consumer.config', undefined, 'missing; give the source cluster\'s consumer .properties file (with bootstrap.servers)')
  if (producerFile === undefined) problems.add('--producer.config', undefined, 'missing; give the target cluster\'s producer .properties file (with bootstrap.servers)')

  const producerProps = producerFile === undefined ? undefined : readFile(producerFile, '--producer.config', problems)
  const target = producerProps === undefined
    ? undefined
    : connectionFromProperties(producerProps, { alias: 'target', where: `${producerFile}: `, bootstrapHint: 'in the --producer.config file', defaultClientId: 'mirror-sidecar-producer' }, problems)
  const producer = producerProps === undefined ? undefined : producerSettingsFromProperties(producerProps, `${producerFile}: `, problems)

  const flows: FlowConfig[] = []
  consumerFiles.forEach((file, index) => {
    const props = readFile(file, '--consumer.config', problems)
    if (props === undefined) return
    const alias = consumerFiles.length === 1 ? 'source' : `source${index + 1}`
    const source = connectionFromProperties(props, { alias, where: `${file}: `, bootstrapHint: 'in the --consumer.config file', defaultClientId: 'mirror-sidecar' }, problems)
    const consumer = consumerSettingsFromProperties(props, `${file}: `, problems)
    if (source === undefined || target === undefined || producer === undefined || includePattern === undefined || !problems.empty) return
    flows.push({
      name: `${alias}->target`,
      source,
      target,
      consumer,
      producer,
      topics: createTopicFilter(includePattern, excludePattern, includeSource as string, excludeSource),
      replicationPolicy: { kind: 'identity' },
      numStreams,
      numProducers,
      queueMaxRecords,
      queueMaxBytes,
      offsetCommitIntervalMs,
      abortOnSendFailure,
      refreshTopicsIntervalMs,
      syncTopicConfigs: true,
      replicationFactor: -1,
      offsetSyncs: { enabled: true, topic: `mirror-offset-syncs.${alias}.internal`, replicationFactor: -1 },
      groupSync: {
        enabled: groupSyncEnabled,
        groups: createGroupFilter(groupsPattern ?? /^(?:.*)$/u, groupsExcludePattern, groupsSource, groupsExcludeSource),
        intervalMs: groupSyncIntervalMs,
        checkpointsTopic: `mirror-checkpoints.${alias}.internal`,
        checkpointsReplicationFactor: -1,
      },
    })
  })
  if (!problems.empty) throw new ConfigError(problems.problems)
  const ignoredKeys = problems.ignored
  return freezeConfig({ flows, metricsPort, metricsHost: single(values, 'metrics.host', problems) ?? '0.0.0.0', metricsPartitionLabels, logLevel, drainTimeoutMs, ignoredKeys })
}
