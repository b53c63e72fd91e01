import { ConfigError } from '../shared/errors.js'
import { parsePassThrough, parseShallowIterator, resolvePassThrough } from './pass-through.js'
import { parseCorruptBatches } from './corrupt-batches.js'
import { parseThroughputLimit } from './throughput-limit.js'
import { checkExactlyOnceProducer, DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS, DEFAULT_TRANSACTION_TIMEOUT_MS, parseExactlyOnceSupport } from './exactly-once.js'

/** MirrorMaker 2's per-target-cluster key for exactly-once (`<target alias>.exactly.once.source.support`). */
const EXACTLY_ONCE_SUPPORT = 'exactly.once.source.support'
import {
  CONNECTION_KEYS,
  CONSUMER_KEYS,
  PRODUCER_KEYS,
  connectionFromProperties,
  consumerSettingsFromProperties,
  producerSettingsFromProperties,
} from './client-properties.js'
import { isSecurityKey } from './client-security.js'
import { isProviderKey } from './config-providers.js'
import type { Properties, PropertyEntry } from './java-properties.js'
import { suggestedMm2Key } from './mm2-key-suggestion.js'
import { readPropertiesFile } from './properties-file.js'
import { FLAG_DEFAULTS } from './flag-defaults.js'
import { configFromOneFile, isOneFileForm } from './one-file-config.js'
import { checkHandlerPassThrough, parseMessageHandler } from './message-handler-config.js'
import {
  freezeConfig,
  HEARTBEATS_TOPIC,
  INCREMENTAL_ALTER_CONFIGS_USES,
  Mm2OffsetSyncLocations,
  type FlowConfig,
  type MirrorConfig,
  type Mm2PositionsConfig,
  type ReplicationPolicy,
} from './mirror-config.js'
import type { SidecarSettings } from './sidecar-settings.js'
import { parseTopicConfigFilter } from './topic-config-filter.js'
import { compileTopicPattern, createGroupFilter, createTopicFilter, DEFAULT_GROUPS_EXCLUDE, withHeartbeatsTopic } from './topic-filter.js'
import { parseBoolean, parseChoice, parseInteger, ProblemList } from './values.js'

/** MirrorMaker 2's default `topics.exclude` (`topics.blacklist` before 3.0). */
const DEFAULT_TOPICS_EXCLUDE = '.*[\\-\\.]internal, .*\\.replica, __.*'

/** The consumer group a flow uses on its source cluster unless `A->B.consumer.group.id` or `A.consumer.group.id` says otherwise. */
function defaultGroupId (source: string, target: string): string {
  return `mirror-sidecar.${source}-to-${target}`
}

/** Flow keys: read at top level and overridden per flow by `A->B.<key>`. */
const FLOW_KEYS = new Set([
  'enabled',
  'topics',
  'topics.exclude',
  'topics.blacklist',
  'groups',
  'groups.exclude',
  'groups.blacklist',
  'replication.policy.class',
  'replication.policy.separator',
  'tasks.max',
  'refresh.topics.enabled',
  'refresh.topics.interval.seconds',
  'sync.topic.configs.enabled',
  'sync.topic.configs.interval.seconds',
  'config.properties.exclude',
  'config.properties.blacklist',
  'config.property.filter.class',
  'use.defaults.from',
  'use.incremental.alter.configs',
  'sync.topic.acls.enabled',
  'sync.topic.acls.interval.seconds',
  'replication.factor',
  'emit.offset-syncs.enabled',
  'sync.group.offsets.enabled',
  'sync.group.offsets.interval.seconds',
  'emit.checkpoints.enabled',
  'emit.checkpoints.interval.seconds',
  'offset.flush.interval.ms',
  'offset-syncs.topic.replication.factor',
  'checkpoints.topic.replication.factor',
  'emit.heartbeats.enabled',
  'emit.heartbeats.interval.seconds',
  'heartbeats.topic.replication.factor',
  'offset-syncs.topic.location',
  'offset.lag.max',
  'pass.through',
  'corrupt.batches',
  'throughput.limit.bytes',
  'exactly.once.commit.interval.ms',
  'message.handler',
  'message.handler.args',
  'digests.enabled',
  'digests.range.records',
  'digests.audit.interval.ms',
  'digests.audit.max.records',
])

/** Keys that would run Java code or change what is copied, and cannot be honoured: refused. */
const REFUSED_KEYS: Record<string, string> = {
  'topic.filter.class': 'custom topic filters (Java classes) cannot run here; use topics / topics.exclude',
  'group.filter.class': 'custom group filters (Java classes) cannot run here; use groups / groups.exclude',
  'forwarding.admin.class': 'custom admin classes cannot run here; remove the key',
}

const POLICIES: Record<string, ReplicationPolicy['kind']> = {
  'org.apache.kafka.connect.mirror.defaultreplicationpolicy': 'default',
  defaultreplicationpolicy: 'default',
  default: 'default',
  'org.apache.kafka.connect.mirror.identityreplicationpolicy': 'identity',
  identityreplicationpolicy: 'identity',
  identity: 'identity',
}

const ROLES = ['consumer', 'producer', 'admin'] as const
type Role = typeof ROLES[number]

/** A client key MM2 passes from `A.<key>` and top-level `<key>` to every client of a cluster. */
function isCommonClientKey (key: string): boolean {
  return (
    (CONNECTION_KEYS as readonly string[]).includes(key) ||
    isSecurityKey(key) ||
    [
      'retry.backoff.ms',
      'reconnect.backoff.ms',
      'reconnect.backoff.max.ms',
      'metadata.max.age.ms',
      'send.buffer.bytes',
      'receive.buffer.bytes',
      'connections.max.idle.ms',
      'client.dns.lookup',
      'metric.reporters',
      'metrics.num.samples',
      'metrics.recording.level',
      'metrics.sample.window.ms',
    ].includes(key)
  )
}

/** A client view with the full key each value came from, for messages and the ignored-keys warning. */
interface ClientView {
  readonly properties: Map<string, PropertyEntry>
  readonly origin: Map<string, string>
}

export interface Mm2Options {
  /** `--clusters`: run only the flows into these aliases; default every enabled flow. */
  readonly clusters?: readonly string[]
  readonly settings: SidecarSettings
  /** Where MirrorMaker 2 kept each flow's source positions, when not where its dedicated mode keeps them (a Strimzi resource: Connect in distributed mode). */
  readonly mm2Positions?: (source: string, target: string) => Mm2PositionsConfig
}

/** Connect's name of a flow's source connector in MirrorMaker 2's dedicated mode (connectors are named after their class). */
export const MM2_SOURCE_CONNECTOR = 'MirrorSourceConnector'

/** Connect's offsets topic of a MirrorMaker 2 flow from `source` in dedicated mode, on the target cluster (`MirrorMakerConfig.workerConfig`'s default). */
export function mm2OffsetsTopicDefault (source: string): string {
  return `mm2-offsets.${source}.internal`
}

/** A legal Kafka topic name: up to 249 of letters, digits, `.`, `_`, `-`, and not `.` or `..`. */
function isTopicName (name: string): boolean {
  return /^[A-Za-z0-9._-]{1,249}$/.test(name) && name !== '.' && name !== '..'
}

/**
 * Where MirrorMaker 2 in dedicated mode keeps the source positions of the flow `source->target`:
 * its Connect worker for that flow reads `<target>.offset.storage.topic`, and a top-level
 * `offset.storage.topic` is applied over it (`MirrorMakerConfig.workerConfig`), else
 * `mm2-offsets.<source>.internal`, on the target cluster.
 */
function dedicatedModePositions (source: string, target: string, get: (key: string) => PropertyEntry | undefined, problems: ProblemList): Mm2PositionsConfig {
  for (const key of ['offset.storage.topic', `${target}.offset.storage.topic`]) {
    const entry = get(key)
    if (entry === undefined) continue
    const topic = entry.value.trim()
    if (!isTopicName(topic)) {
      problems.add(
        key,
        entry.value,
        'expected a topic name (letters, digits, ".", "_", "-"); it names Connect\'s offsets topic, where MirrorMaker 2 keeps its source positions'
      )
    }
    return { offsetsTopic: topic, key, connector: MM2_SOURCE_CONNECTOR }
  }
  return { offsetsTopic: mm2OffsetsTopicDefault(source), key: 'offset.storage.topic', connector: MM2_SOURCE_CONNECTOR }
}

/**
 * Builds the sidecar configuration from a MirrorMaker 2 `mm2.properties` file: one flow per
 * enabled `A->B` pair (limited to targets in `--clusters`), with MM2's keys, defaults and
 * precedence (`A->B.<key>` over `<key>`; `A->B.consumer.*` over `A.consumer.*` over `A.<client key>`
 * over `consumer.*` over `<client key>`). Connect worker internals are reported as ignored; every
 * problem is thrown together as one `ConfigError`, before anything connects.
 */
export function configFromMm2 (path: string, options: Mm2Options, problems = new ProblemList()): MirrorConfig {
  let top: Properties
  try {
    top = readPropertiesFile(path, 'mm2.properties')
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError([...problems.problems, ...error.problems])
    throw error
  }
  if (isOneFileForm(top)) return configFromOneFile(path, top, options.settings, options.clusters, problems)
  return configFromMm2Properties(top, path, options, problems)
}

/**
 * `configFromMm2` over keys already read: those of an mm2.properties file, or what a Strimzi
 * KafkaMirrorMaker2 resource translates to. `path` names where they came from in messages.
 */
export function configFromMm2Properties (top: Properties, path: string, options: Mm2Options, problems = new ProblemList()): MirrorConfig {
  const used = new Set<string>()
  const get = (key: string): PropertyEntry | undefined => { if (top.has(key)) used.add(key); return top.get(key) }

  const clustersRaw = get('clusters')?.value
  const clusters = (clustersRaw ?? '').split(',').map(s => s.trim()).filter(s => s !== '')
  if (clustersRaw === undefined && top.has('bootstrap.servers')) {
    problems.add(
      'clusters',
      clustersRaw,
      `missing in ${path}, which has bootstrap.servers but no target: for one source and one target add target.bootstrap.servers=<target brokers>; for the MirrorMaker 2 form write clusters = A, B with A.bootstrap.servers and B.bootstrap.servers`
    )
  } else if (clustersRaw === undefined || clusters.length === 0) {
    problems.add('clusters', clustersRaw, `missing in ${path}; list the cluster aliases, e.g. clusters = A, B`)
  }
  for (const alias of clusters) {
    if (!/^[A-Za-z0-9_-]+$/.test(alias)) problems.add('clusters', clustersRaw, `alias "${alias}" may only hold letters, digits, _ and -; rename it`)
  }
  if (new Set(clusters).size !== clusters.length) problems.add('clusters', clustersRaw, 'names an alias twice; list each cluster once')
  for (const wanted of options.clusters ?? []) {
    if (!clusters.includes(wanted)) problems.add('--clusters', wanted, `is not in clusters (${clusters.join(', ')}); name a target cluster alias from ${path}`)
  }
  for (const [key, reason] of Object.entries(REFUSED_KEYS)) {
    const entry = get(key)
    if (entry !== undefined) problems.add(key, entry.value, reason)
  }

  // Flow pairs: every A->B.<key>, checked against the aliases.
  const pairs = new Map<string, { source: string, target: string, keys: Map<string, string> }>()
  const badPairs = new Set<string>()
  for (const key of top.keys()) {
    const match = /^([^.]+?)->([^.]+?)\.(.+)$/.exec(key)
    if (match === null) continue
    used.add(key)
    const [, source = '', target = '', rest = ''] = match
    const pairName = `${source}->${target}`
    if (!clusters.includes(source) || !clusters.includes(target) || source === target) {
      if (!badPairs.has(pairName) && clusters.length > 0) {
        const unknown = [source, target].filter(a => !clusters.includes(a))
        problems.add(key, top.get(key)?.value, source === target
          ? 'a cluster cannot mirror into itself; remove the key'
          : `names ${unknown.map(a => `"${a}"`).join(' and ')}, not in clusters (${clusters.join(', ')}); add the alias to clusters or fix the key`)
      }
      badPairs.add(pairName)
      continue
    }
    const pair = pairs.get(pairName) ?? { source, target, keys: new Map<string, string>() }
    pair.keys.set(rest, key)
    pairs.set(pairName, pair)
  }

  const sidecarSettings = options.settings
  const flows: FlowConfig[] = []
  const groupsBySource = new Map<string, string>()
  for (const pair of pairs.values()) {
    const flowEntry = (name: string): { key: string, value: string } | undefined => {
      const overrideKey = pair.keys.get(name)
      if (overrideKey !== undefined) return { key: overrideKey, value: top.get(overrideKey)?.value ?? '' }
      const entry = get(name)
      return entry === undefined ? undefined : { key: name, value: entry.value }
    }
    for (const [rest, key] of pair.keys) {
      if (!FLOW_KEYS.has(rest) && !/^(consumer|producer)\./.test(rest)) problems.ignore(key)
    }
    const enabledEntry = flowEntry('enabled')
    const enabled = enabledEntry === undefined ? false : parseBoolean(enabledEntry.key, enabledEntry.value, problems)
    if (enabled !== true) continue
    if (options.clusters !== undefined && !options.clusters.includes(pair.target)) continue
    const flow = buildFlow(pair.source, pair.target, pair.keys, path, top, flowEntry, problems)
    if (flow === undefined) continue
    const groupKey = `${pair.source}|${flow.consumer.groupId}`
    const clash = groupsBySource.get(groupKey)
    if (clash !== undefined) {
      problems.add(
        `${pair.source}->${pair.target}.consumer.group.id`,
        flow.consumer.groupId,
        `is also the group of flow ${clash} on cluster ${pair.source}; two flows in one group would take each other's partitions: give each flow its own group.id`
      )
    }
    groupsBySource.set(groupKey, flow.name)
    const mm2Positions = options.mm2Positions?.(pair.source, pair.target) ?? dedicatedModePositions(pair.source, pair.target, get, problems)
    flows.push({ ...flow, mm2Positions })
  }
  if (problems.empty && flows.length === 0) {
    problems.add(
      'clusters',
      clustersRaw,
      `no flow is enabled${options.clusters === undefined ? '' : ` into ${options.clusters.join(', ')}`}; set e.g. ${clusters[0] ?? 'A'}->${clusters[1] ?? 'B'}.enabled = true`
    )
  }

  // The flag (or MIRROR_METRICS_PARTITION_LABELS) wins over the file.
  const partitionLabelsEntry = get('metrics.partition.labels')
  const metricsPartitionLabels = sidecarSettings.metricsPartitionLabels ??
    (partitionLabelsEntry === undefined ? true : parseBoolean('metrics.partition.labels', partitionLabelsEntry.value, problems) ?? true)

  // Everything not read is one warning: Connect worker internals, heartbeats, unknown keys.
  for (const key of top.keys()) {
    if (used.has(key) || isProviderKey(key) || FLOW_KEYS.has(key)) continue
    const dot = key.indexOf('.')
    const alias = dot > 0 ? key.slice(0, dot) : ''
    if (clusters.includes(alias)) {
      const rest = key.slice(dot + 1)
      if (isCommonClientKey(rest) || rest === EXACTLY_ONCE_SUPPORT || ROLES.some(role => rest.startsWith(`${role}.`))) continue
    } else if (isCommonClientKey(key) || ROLES.some(role => key.startsWith(`${role}.`))) continue
    problems.ignore(key)
  }
  // A key a slip away from one read here is a mistake, not a Connect internal: left alone it would do nothing.
  for (const key of clusters.length === 0 ? [] : problems.ignored) {
    const meant = suggestedMm2Key(key, clusters, FLOW_KEYS)
    if (meant !== undefined) problems.add(key, top.get(key)?.value, `is not a key that is read (it would be ignored); did you mean ${meant}?`)
  }
  if (!problems.empty) throw new ConfigError(problems.problems)
  return freezeConfig({ flows, ...sidecarSettings, metricsPartitionLabels, ignoredKeys: problems.ignored })
}

/** The client properties of `alias` for `role`, with MM2's precedence; flow overrides (`A->B.consumer.*`) win. */
function clientView (top: Properties, alias: string, role: Role, flowOverrides: ReadonlyMap<string, string>): ClientView {
  const properties = new Map<string, PropertyEntry>()
  const origin = new Map<string, string>()
  const put = (name: string, key: string): void => {
    const entry = top.get(key)
    if (entry === undefined || properties.has(name)) return
    properties.set(name, entry)
    origin.set(name, key)
  }
  for (const [rest, key] of flowOverrides) if (rest.startsWith(`${role}.`)) put(rest.slice(role.length + 1), key)
  const layers: Array<[string, (name: string) => boolean]> = [
    [`${alias}.${role}.`, () => true], [`${alias}.`, isCommonClientKey], [`${role}.`, () => true], ['', isCommonClientKey],
  ]
  for (const [prefix, accepts] of layers) {
    for (const key of top.keys()) {
      if (!key.startsWith(prefix)) continue
      const name = key.slice(prefix.length)
      if (prefix === '' && (name.includes('->') || name.startsWith(`${alias}.`))) continue
      if (accepts(name)) put(name, key)
    }
  }
  return { properties, origin }
}

function buildFlow (
  source: string, target: string, flowOverrides: ReadonlyMap<string, string>, path: string, top: Properties,
  flowEntry: (name: string) => { key: string, value: string } | undefined,
  problems: ProblemList
): FlowConfig | undefined {
  const name = `${source}->${target}`
  const consumerView = clientView(top, source, 'consumer', flowOverrides)
  const producerView = clientView(top, target, 'producer', flowOverrides)
  for (const [alias, role, view] of [[source, 'consumer', consumerView], [target, 'producer', producerView]] as const) {
    const admin = clientView(top, alias, 'admin', new Map())
    for (const [key, entry] of admin.properties) {
      const isConnection = isCommonClientKey(key) && key !== 'client.id'
      if (isConnection && view.properties.get(key)?.value !== entry.value) {
        problems.add(
          admin.origin.get(key) ?? key,
          entry.value,
          `differs from the ${role} setting; the sidecar uses one connection per cluster for admin and ${role} requests: set it once as ${alias}.${key}`
        )
      }
    }
  }
  const before = problems.problems.length
  const bootstrapHint = (alias: string): string => `(set ${alias}.bootstrap.servers in ${path})`
  const sourceConnection = connectionFromProperties(
    consumerView.properties,
    { alias: source, where: `${source}.`, bootstrapHint: bootstrapHint(source), defaultClientId: `mirror-sidecar.${source}-to-${target}` },
    problems
  )
  const targetConnection = connectionFromProperties(
    producerView.properties,
    { alias: target, where: `${target}.`, bootstrapHint: bootstrapHint(target), defaultClientId: `mirror-sidecar.${source}-to-${target}` },
    problems
  )
  const consumerSettings = consumerSettingsFromProperties(consumerView.properties, `${source}.consumer.`, problems, false)
  const producer = producerSettingsFromProperties(producerView.properties, `${target}.producer.`, problems, false)
  for (const [view, roleKeys] of [[consumerView, CONSUMER_KEYS], [producerView, PRODUCER_KEYS]] as const) {
    for (const [key, originKey] of view.origin) {
      if (!isCommonClientKey(key) && !(roleKeys as readonly string[]).includes(key)) problems.ignore(originKey)
    }
  }
  const consumer = consumerView.properties.has('group.id') ? consumerSettings : { ...consumerSettings, groupId: defaultGroupId(source, target) }

  const text = (key: string, fallback: string): { key: string, value: string } => flowEntry(key) ?? { key, value: fallback }
  const includeEntry = text('topics', '.*')
  const excludeEntry = flowEntry('topics.exclude') ?? flowEntry('topics.blacklist') ?? { key: 'topics.exclude', value: DEFAULT_TOPICS_EXCLUDE }
  const include = compileTopicPattern(includeEntry.key, includeEntry.value, problems)
  const exclude = excludeEntry.value.trim() === '' ? undefined : compileTopicPattern(excludeEntry.key, excludeEntry.value, problems)
  const groupsEntry = text('groups', '.*')
  const groupsExcludeEntry = flowEntry('groups.exclude') ?? flowEntry('groups.blacklist') ?? { key: 'groups.exclude', value: DEFAULT_GROUPS_EXCLUDE }
  const groupsInclude = compileTopicPattern(groupsEntry.key, groupsEntry.value, problems)
  const groupsExclude = groupsExcludeEntry.value.trim() === '' ? undefined : compileTopicPattern(groupsExcludeEntry.key, groupsExcludeEntry.value, problems)

  const policyEntry = flowEntry('replication.policy.class')
  const policyKind = policyEntry === undefined ? 'default' : POLICIES[policyEntry.value.trim().toLowerCase()]
  if (policyEntry !== undefined && policyKind === undefined) {
    problems.add(
      policyEntry.key,
      policyEntry.value,
      'custom replication policies (Java classes) cannot run here; use org.apache.kafka.connect.mirror.DefaultReplicationPolicy or IdentityReplicationPolicy'
    )
  }
  const separatorEntry = flowEntry('replication.policy.separator')
  const separator = separatorEntry?.value ?? '.'
  if (separator === '') problems.add(separatorEntry?.key ?? 'replication.policy.separator', '', 'must not be empty; the default is "."')
  const replicationPolicy: ReplicationPolicy = policyKind === 'identity' ? { kind: 'identity' } : { kind: 'default', separator }

  const int = (key: string, fallback: number, min: number): number => {
    const entry = flowEntry(key)
    return entry === undefined ? fallback : parseInteger(entry.key, entry.value, { min }, problems) ?? fallback
  }
  const bool = (key: string, fallback: boolean): boolean => {
    const entry = flowEntry(key)
    return entry === undefined ? fallback : parseBoolean(entry.key, entry.value, problems) ?? fallback
  }
  const numStreams = int('tasks.max', 1, 1)
  const passThroughEntry = flowEntry('pass.through')
  const shallowEntry = consumerView.properties.get('shallowiterator.enable')
  const passThrough = resolvePassThrough(
    { key: passThroughEntry?.key ?? 'pass.through', value: parsePassThrough(passThroughEntry?.key ?? 'pass.through', passThroughEntry?.value, problems) },
    {
      key: `${source}.consumer.shallowiterator.enable`,
      value: parseShallowIterator(`${source}.consumer.shallowiterator.enable`, shallowEntry?.value, problems),
    },
    problems
  )
  const corruptBatchesEntry = flowEntry('corrupt.batches')
  const corruptBatches =
    (corruptBatchesEntry === undefined ? undefined : parseCorruptBatches(corruptBatchesEntry.key, corruptBatchesEntry.value, problems)) ??
    FLAG_DEFAULTS['corrupt.batches']
  const throughputLimitEntry = flowEntry('throughput.limit.bytes')
  const throughputLimitBytes =
    throughputLimitEntry === undefined ? undefined : parseThroughputLimit(throughputLimitEntry.key, throughputLimitEntry.value, problems)
  const refreshEnabled = bool('refresh.topics.enabled', true)
  // setInterval takes at most 2^31-1 ms; "disabled" becomes that (about 24.8 days).
  const refreshTopicsIntervalMs = refreshEnabled ? Math.min(int('refresh.topics.interval.seconds', 600, 1) * 1000, 2_147_483_647) : 2_147_483_647
  const syncTopicConfigs = bool('sync.topic.configs.enabled', true)
  const topicConfigFilter = parseTopicConfigFilter(flowEntry('config.properties.exclude') ?? flowEntry('config.properties.blacklist'),
    flowEntry('config.property.filter.class'), flowEntry('use.defaults.from'), problems)
  const incrementalEntry = flowEntry('use.incremental.alter.configs')
  const incrementalAlterConfigs =
    incrementalEntry === undefined ? undefined : parseChoice(incrementalEntry.key, incrementalEntry.value, INCREMENTAL_ALTER_CONFIGS_USES, problems)
  const replicationFactorOf = (key: string, fallback: number): number => {
    const entry = flowEntry(key)
    if (entry === undefined) return fallback
    const expected = 'a replication factor from 1 to 32767, or -1 for the broker default'
    const value = parseInteger(entry.key, entry.value, { min: -1, max: 32767, expected }, problems)
    if (value === 0) problems.add(entry.key, entry.value, `expected ${expected}`)
    return value ?? fallback
  }
  const replicationFactor = replicationFactorOf('replication.factor', -1)
  // The internal topics: MM2's own keys, else what replication.factor says for the mirrored topics.
  const offsetSyncsReplicationFactor = replicationFactorOf('offset-syncs.topic.replication.factor', replicationFactor)
  const checkpointsReplicationFactor = replicationFactorOf('checkpoints.topic.replication.factor', replicationFactor)
  const heartbeatsReplicationFactor = replicationFactorOf('heartbeats.topic.replication.factor', replicationFactor)
  const locationEntry = flowEntry('offset-syncs.topic.location')
  const location = (locationEntry === undefined ? undefined : parseChoice(locationEntry.key, locationEntry.value, Mm2OffsetSyncLocations, problems)) ?? 'source'
  const offsetSyncsEnabled = bool('emit.offset-syncs.enabled', true)
  // MirrorMaker 2 names the topic after the other cluster than the one holding it (MirrorSourceConfig.offsetSyncsTopic).
  const mm2OffsetSyncs = {
    location,
    topic: `mm2-offset-syncs.${location === 'source' ? target : source}.internal`,
    maxOffsetLagRecords: int('offset.lag.max', 100, 0),
    replicationFactor: offsetSyncsReplicationFactor,
  }
  const syncGroupOffsets = bool('sync.group.offsets.enabled', false)
  const emitCheckpoints = bool('emit.checkpoints.enabled', true)
  // MirrorMaker 2's defaults: each every 60 s, independently.
  const checkpointIntervalMs = int('emit.checkpoints.interval.seconds', 60, 1) * 1000
  const groupSyncIntervalMs = int('sync.group.offsets.interval.seconds', 60, 1) * 1000
  const emitHeartbeats = bool('emit.heartbeats.enabled', true)
  const heartbeatIntervalMs = int('emit.heartbeats.interval.seconds', 1, 1) * 1000
  const offsetCommitIntervalMs = int('offset.flush.interval.ms', 60_000, 1)
  // MirrorMaker 2 reads it per target cluster (KIP-618); the top-level key is not applied there, nor here.
  const supportKey = `${target}.${EXACTLY_ONCE_SUPPORT}`
  const exactlyOnce = parseExactlyOnceSupport(supportKey, top.get(supportKey)?.value, problems) ?? false
  if (exactlyOnce) checkExactlyOnceProducer(supportKey, producer, `${target}.producer.`, problems)
  const exactlyOnceIntervalMs = int('exactly.once.commit.interval.ms', DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS, 1)
  const handlerEntry = flowEntry('message.handler')
  const handlerArgsEntry = flowEntry('message.handler.args')
  const messageHandler = parseMessageHandler({ module: handlerEntry?.key ?? 'message.handler', args: handlerArgsEntry?.key ?? 'message.handler.args' },
    handlerEntry?.value, handlerArgsEntry?.value, problems)
  checkHandlerPassThrough(
    passThrough,
    passThroughEntry?.value.trim().toLowerCase() === 'on' || passThroughEntry?.value.trim().toLowerCase() === 'true'
      ? passThroughEntry.key
      : `${source}.consumer.shallowiterator.enable`,
    messageHandler,
    problems
  )

  const digestsEnabled = bool('digests.enabled', FLAG_DEFAULTS['digests.enabled'])
  const digestAuditIntervalMs = int('digests.audit.interval.ms', FLAG_DEFAULTS['digests.audit.interval.ms'], 0)
  const digests = {
    enabled: digestsEnabled,
    topic: `mirror-digests.${source}.internal`,
    rangeRecords: int('digests.range.records', FLAG_DEFAULTS['digests.range.records'], 1),
    replicationFactor: offsetSyncsReplicationFactor,
    auditIntervalMs: digestAuditIntervalMs,
    auditMaxRecords: int('digests.audit.max.records', FLAG_DEFAULTS['digests.audit.max.records'], 1),
  }
  if (digestsEnabled && digests.auditMaxRecords < digests.rangeRecords) {
    const entry = flowEntry('digests.audit.max.records')
    problems.add(
      entry?.key ?? 'digests.audit.max.records',
      String(digests.auditMaxRecords),
      `below digests.range.records ${digests.rangeRecords}: a pass could not re-read one digest; give at least ${digests.rangeRecords}`
    )
  }
  if (digestAuditIntervalMs > 0 && !digestsEnabled) {
    const entry = flowEntry('digests.audit.interval.ms')
    problems.add(
      entry?.key ?? 'digests.audit.interval.ms',
      entry?.value,
      'the audit compares the target with the digests the mirror writes; add digests.enabled = true, or leave the interval at 0'
    )
  }

  const topicFilter =
    include === undefined
      ? undefined
      : createTopicFilter(include, exclude, includeEntry.value, excludeEntry.value.trim() === '' ? undefined : excludeEntry.value)
  if (
    problems.problems.length !== before ||
    sourceConnection === undefined ||
    targetConnection === undefined ||
    topicFilter === undefined ||
    groupsInclude === undefined
  ) { return undefined }
  return {
    name,
    source: sourceConnection,
    target: targetConnection,
    consumer,
    producer,
    topics: withHeartbeatsTopic(topicFilter, HEARTBEATS_TOPIC),
    replicationPolicy,
    numStreams,
    numProducers: FLAG_DEFAULTS['num.producers'],
    queueMaxRecords: FLAG_DEFAULTS['queue.size'],
    queueMaxBytes: FLAG_DEFAULTS['queue.bytes'],
    offsetCommitIntervalMs,
    abortOnSendFailure: true,
    passThrough,
    corruptBatches,
    ...(throughputLimitBytes === undefined ? {} : { throughputLimitBytes }),
    ...(exactlyOnce
      ? {
          exactlyOnce: {
            key: supportKey,
            commitIntervalMs: exactlyOnceIntervalMs,
            transactionTimeoutMs: DEFAULT_TRANSACTION_TIMEOUT_MS,
            positionsTopic: `mirror-positions.${source}.internal`,
            positionsReplicationFactor: offsetSyncsReplicationFactor,
          },
        }
      : {}),
    refreshTopicsIntervalMs,
    syncTopicConfigs,
    topicConfigFilter,
    ...(incrementalAlterConfigs === undefined ? {} : { incrementalAlterConfigs }),
    syncTopicConfigsIntervalMs: int('sync.topic.configs.interval.seconds', FLAG_DEFAULTS['sync.topic.configs.interval.seconds'], 1) * 1000,
    syncTopicAcls: bool('sync.topic.acls.enabled', FLAG_DEFAULTS['sync.topic.acls.enabled']),
    syncTopicAclsIntervalMs: int('sync.topic.acls.interval.seconds', FLAG_DEFAULTS['sync.topic.acls.interval.seconds'], 1) * 1000,
    replicationFactor,
    offsetSyncs: {
      enabled: offsetSyncsEnabled,
      topic: `mirror-offset-syncs.${source}.internal`,
      replicationFactor: offsetSyncsReplicationFactor,
      ...(offsetSyncsEnabled ? { mm2: mm2OffsetSyncs } : {}),
    },
    groupSync: {
      // MM2 syncs group offsets from checkpoints: without checkpoints there is nothing to sync.
      enabled: syncGroupOffsets && emitCheckpoints,
      // A checkpoint carries a translation from the offset syncs: without syncs there is none to write.
      emitCheckpoints: emitCheckpoints && offsetSyncsEnabled,
      groups: createGroupFilter(groupsInclude, groupsExclude, groupsEntry.value, groupsExcludeEntry.value.trim() === '' ? undefined : groupsExcludeEntry.value),
      intervalMs: groupSyncIntervalMs,
      checkpointIntervalMs,
      checkpointsTopic: `${source}.checkpoints.internal`,
      checkpointsReplicationFactor,
    },
    heartbeats: { enabled: emitHeartbeats, intervalMs: heartbeatIntervalMs, topic: HEARTBEATS_TOPIC, replicationFactor: heartbeatsReplicationFactor },
    ...(messageHandler === undefined ? {} : { messageHandler }),
    digests,
  }
}
