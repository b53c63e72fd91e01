import { ConfigError } from '../shared/errors.js'
import { parsePassThrough, parseShallowIterator, resolvePassThrough } from './pass-through.js'
import { parseCorruptBatches } from './corrupt-batches.js'
import { parseThroughputLimit } from './throughput-limit.js'
import { checkExactlyOnceProducer, DEFAULT_TRANSACTION_TIMEOUT_MS, parseExactlyOnceSupport } from './exactly-once.js'

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
  type FlowConfig,
  type Mm2OffsetSyncLocation,
  type ProducerSettings,
  type MirrorConfig,
  type Mm2PositionsConfig,
  type ReplicationPolicy,
} from './mirror-config.js'
import type { SidecarSettings } from './sidecar-settings.js'
import { parseTopicConfigFilter } from './topic-config-filter.js'
import { compileTopicPattern, createGroupFilter, createTopicFilter, withHeartbeatsTopic } from './topic-filter.js'
import { parseBoolean, ProblemList } from './values.js'
import { keyNames, readKeys, rowsOf, type KeyValues } from './key-table.js'
import { FLOW_TABLE } from './mm2-flow-keys.js'

/** The consumer group a flow uses on its source cluster unless `A->B.consumer.group.id` or `A.consumer.group.id` says otherwise. */
function defaultGroupId (source: string, target: string): string {
  return `mirror-sidecar.${source}-to-${target}`
}

/** Flow keys: read at top level and overridden per flow by `A->B.<key>` (the flow key table). */
const FLOW_KEYS: ReadonlySet<string> = new Set(keyNames(FLOW_TABLE))

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
    CONNECTION_KEYS.includes(key) ||
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

/** The aliases of `clusters`, checked, and `--clusters` checked against them; the keys refused at top level. */
function clusterAliases (top: Properties, get: (key: string) => PropertyEntry | undefined, path: string, options: Mm2Options, problems: ProblemList) {
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
  return { clusters, clustersRaw }
}

/** A flow pair's aliases and its `A->B.<key>` overrides (key without the prefix -> full key). */
interface FlowPair { readonly source: string, readonly target: string, readonly keys: Map<string, string> }

/** Flow pairs: every A->B.<key>, checked against the aliases. */
function flowPairs (top: Properties, clusters: readonly string[], used: Set<string>, problems: ProblemList): Map<string, FlowPair> {
  const pairs = new Map<string, FlowPair>()
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
  return pairs
}

/** The enabled flows of `pairs` (into `--clusters` when given), each with its own consumer group and MirrorMaker 2's positions. */
function enabledFlows (
  top: Properties, get: (key: string) => PropertyEntry | undefined, pairs: Map<string, FlowPair>, path: string, options: Mm2Options, problems: ProblemList
): FlowConfig[] {
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
    if (readFlowKeys(['enabled'], flowEntry, problems).boolean('enabled') !== true) continue
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
  return flows
}

/**
 * Reports every key not read as one warning (Connect worker internals, heartbeats, unknown keys),
 * and as a problem a key a slip away from one read here: a mistake, which left alone would do nothing.
 */
function noteUnreadKeys (top: Properties, used: ReadonlySet<string>, clusters: readonly string[], problems: ProblemList): void {
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
  for (const key of clusters.length === 0 ? [] : problems.ignored) {
    const meant = suggestedMm2Key(key, clusters, FLOW_KEYS)
    if (meant !== undefined) problems.add(key, top.get(key)?.value, `is not a key that is read (it would be ignored); did you mean ${meant}?`)
  }
}

/**
 * `configFromMm2` over keys already read: those of an mm2.properties file, or what a Strimzi
 * KafkaMirrorMaker2 resource translates to. `path` names where they came from in messages.
 */
export function configFromMm2Properties (top: Properties, path: string, options: Mm2Options, problems = new ProblemList()): MirrorConfig {
  const used = new Set<string>()
  const get = (key: string): PropertyEntry | undefined => { if (top.has(key)) used.add(key); return top.get(key) }
  const { clusters, clustersRaw } = clusterAliases(top, get, path, options, problems)
  const flows = enabledFlows(top, get, flowPairs(top, clusters, used, problems), path, options, problems)
  if (problems.empty && flows.length === 0) {
    problems.add(
      'clusters',
      clustersRaw,
      `no flow is enabled${options.clusters === undefined ? '' : ` into ${options.clusters.join(', ')}`}; set e.g. ${clusters[0] ?? 'A'}->${clusters[1] ?? 'B'}.enabled = true`
    )
  }
  // The flag (or MIRROR_METRICS_PARTITION_LABELS) wins over the file.
  const partitionLabelsEntry = get('metrics.partition.labels')
  const metricsPartitionLabels = options.settings.metricsPartitionLabels ??
    (partitionLabelsEntry === undefined ? true : parseBoolean('metrics.partition.labels', partitionLabelsEntry.value, problems) ?? true)
  noteUnreadKeys(top, used, clusters, problems)
  if (!problems.empty) throw new ConfigError(problems.problems)
  return freezeConfig({ flows, ...options.settings, metricsPartitionLabels, ignoredKeys: problems.ignored })
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

/** A flow key's entry: the `A->B.<key>` override, else the top-level key. */
type FlowEntry = (name: string) => { key: string, value: string } | undefined

/** The flow keys named, in that order, read with the flow key table's types, defaults and checks. */
function readFlowKeys (keys: readonly string[], flowEntry: FlowEntry, problems: ProblemList): KeyValues {
  return readKeys(rowsOf(FLOW_TABLE, keys), { get: flowEntry, name: key => key }, problems)
}

/** Refuses `X.admin.*` connection keys that differ from the consumer's or producer's: one connection per cluster serves both. */
function checkAdminKeys (top: Properties, views: ReadonlyArray<readonly [string, Role, ClientView]>, problems: ProblemList): void {
  for (const [alias, role, view] of views) {
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
}

/** A flow's connections to both clusters and its consumer and producer settings, with MM2's precedence of client keys. */
function flowClients (source: string, target: string, path: string, views: { consumer: ClientView, producer: ClientView }, problems: ProblemList) {
  const bootstrapHint = (alias: string): string => `(set ${alias}.bootstrap.servers in ${path})`
  const defaultClientId = `mirror-sidecar.${source}-to-${target}`
  const sourceConnection = connectionFromProperties(
    views.consumer.properties, { alias: source, where: `${source}.`, bootstrapHint: bootstrapHint(source), defaultClientId }, problems)
  const targetConnection = connectionFromProperties(
    views.producer.properties, { alias: target, where: `${target}.`, bootstrapHint: bootstrapHint(target), defaultClientId }, problems)
  const consumerSettings = consumerSettingsFromProperties(views.consumer.properties, `${source}.consumer.`, problems, false)
  const producer = producerSettingsFromProperties(views.producer.properties, `${target}.producer.`, problems, false)
  for (const [view, roleKeys] of [[views.consumer, CONSUMER_KEYS], [views.producer, PRODUCER_KEYS]] as const) {
    for (const [key, originKey] of view.origin) {
      if (!isCommonClientKey(key) && !roleKeys.includes(key)) problems.ignore(originKey)
    }
  }
  const consumer = views.consumer.properties.has('group.id') ? consumerSettings : { ...consumerSettings, groupId: defaultGroupId(source, target) }
  return { sourceConnection, targetConnection, consumer, producer }
}

/** A pattern key's entry, the pattern compiled, and its text (undefined when empty: nothing excluded). */
function patternOf (entry: { key: string, value: string }, problems: ProblemList, emptyIsNone: boolean) {
  const none = emptyIsNone && entry.value.trim() === ''
  return { pattern: none ? undefined : compileTopicPattern(entry.key, entry.value, problems), text: none ? undefined : entry.value }
}

/** The flow's topic filter and group filter from `topics`, `topics.exclude`, `groups`, `groups.exclude` (or their `*.blacklist` names). */
function flowFilters (flowEntry: FlowEntry, problems: ProblemList) {
  const entry = (key: string, old: string): { key: string, value: string } =>
    flowEntry(key) ?? flowEntry(old) ?? { key, value: String(rowsOf(FLOW_TABLE, [key])[0]?.default) }
  const include = patternOf(flowEntry('topics') ?? { key: 'topics', value: '.*' }, problems, false)
  const exclude = patternOf(entry('topics.exclude', 'topics.blacklist'), problems, true)
  const groupsInclude = patternOf(flowEntry('groups') ?? { key: 'groups', value: '.*' }, problems, false)
  const groupsExclude = patternOf(entry('groups.exclude', 'groups.blacklist'), problems, true)
  return {
    topics: include.pattern === undefined ? undefined : createTopicFilter(include.pattern, exclude.pattern, include.text as string, exclude.text),
    groups: groupsInclude.pattern === undefined
      ? undefined
      : createGroupFilter(groupsInclude.pattern, groupsExclude.pattern, groupsInclude.text as string, groupsExclude.text),
  }
}

/** `replication.policy.class` and `replication.policy.separator`: MM2's Default or Identity policy; Java classes are refused. */
function replicationPolicyOf (flowEntry: FlowEntry, problems: ProblemList): ReplicationPolicy {
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
  return policyKind === 'identity' ? { kind: 'identity' } : { kind: 'default', separator }
}

/** How the flow copies: `tasks.max`, pass-through (with `shallowiterator.enable`), `corrupt.batches`, `throughput.limit.bytes`. */
function copySettings (source: string, flowEntry: FlowEntry, consumerView: ClientView, problems: ProblemList) {
  const numStreams = readFlowKeys(['tasks.max'], flowEntry, problems).number('tasks.max')
  const passThroughEntry = flowEntry('pass.through')
  const shallowKey = `${source}.consumer.shallowiterator.enable`
  const passThrough = resolvePassThrough(
    { key: passThroughEntry?.key ?? 'pass.through', value: parsePassThrough(passThroughEntry?.key ?? 'pass.through', passThroughEntry?.value, problems) },
    { key: shallowKey, value: parseShallowIterator(shallowKey, consumerView.properties.get('shallowiterator.enable')?.value, problems) },
    problems
  )
  const passThroughOn = passThroughEntry?.value.trim().toLowerCase() === 'on' || passThroughEntry?.value.trim().toLowerCase() === 'true'
  const corruptBatchesEntry = flowEntry('corrupt.batches')
  const corruptBatches =
    (corruptBatchesEntry === undefined ? undefined : parseCorruptBatches(corruptBatchesEntry.key, corruptBatchesEntry.value, problems)) ??
    FLAG_DEFAULTS['corrupt.batches']
  const throughputLimitEntry = flowEntry('throughput.limit.bytes')
  const throughputLimitBytes =
    throughputLimitEntry === undefined ? undefined : parseThroughputLimit(throughputLimitEntry.key, throughputLimitEntry.value, problems)
  return {
    numStreams,
    passThrough,
    passThroughKey: passThroughOn ? (passThroughEntry as { key: string }).key : shallowKey,
    corruptBatches,
    ...(throughputLimitBytes === undefined ? {} : { throughputLimitBytes }),
  }
}

/** Topic refresh and the topic config sync: `refresh.topics.*`, `sync.topic.configs.enabled`, the config filter, `use.incremental.alter.configs`. */
function topicSyncSettings (flowEntry: FlowEntry, problems: ProblemList) {
  const refreshEnabled = readFlowKeys(['refresh.topics.enabled'], flowEntry, problems).boolean('refresh.topics.enabled')
  // setInterval takes at most 2^31-1 ms; "disabled" becomes that (about 24.8 days).
  const refreshTopicsIntervalMs = refreshEnabled
    ? Math.min(readFlowKeys(['refresh.topics.interval.seconds'], flowEntry, problems).number('refresh.topics.interval.seconds') * 1000, 2_147_483_647)
    : 2_147_483_647
  const syncTopicConfigs = readFlowKeys(['sync.topic.configs.enabled'], flowEntry, problems).boolean('sync.topic.configs.enabled')
  const topicConfigFilter = parseTopicConfigFilter(flowEntry('config.properties.exclude') ?? flowEntry('config.properties.blacklist'),
    flowEntry('config.property.filter.class'), flowEntry('use.defaults.from'), problems)
  const incremental = readFlowKeys(['use.incremental.alter.configs'], flowEntry, problems).text('use.incremental.alter.configs')
  const incrementalAlterConfigs = incremental as FlowConfig['incrementalAlterConfigs']
  return { refreshTopicsIntervalMs, syncTopicConfigs, topicConfigFilter, ...(incrementalAlterConfigs === undefined ? {} : { incrementalAlterConfigs }) }
}

/** The flow's internal topics and what it writes to them: replication factors, offset syncs, checkpoints, group offset sync, heartbeats. */
function internalTopicSettings (source: string, target: string, flowEntry: FlowEntry, problems: ProblemList) {
  const values = readFlowKeys([
    'replication.factor', 'offset-syncs.topic.replication.factor', 'checkpoints.topic.replication.factor', 'heartbeats.topic.replication.factor',
    'offset-syncs.topic.location', 'emit.offset-syncs.enabled', 'offset.lag.max', 'sync.group.offsets.enabled', 'emit.checkpoints.enabled',
    'emit.checkpoints.interval.seconds', 'sync.group.offsets.interval.seconds', 'emit.heartbeats.enabled', 'emit.heartbeats.interval.seconds',
    'offset.flush.interval.ms',
  ], flowEntry, problems)
  const replicationFactor = values.number('replication.factor')
  // The internal topics: MM2's own keys, else what replication.factor says for the mirrored topics.
  const factor = (key: string): number => values.optionalNumber(key) ?? replicationFactor
  const offsetSyncsReplicationFactor = factor('offset-syncs.topic.replication.factor')
  const location = values.text('offset-syncs.topic.location') as Mm2OffsetSyncLocation
  const offsetSyncsEnabled = values.boolean('emit.offset-syncs.enabled')
  // MirrorMaker 2 names the topic after the other cluster than the one holding it (MirrorSourceConfig.offsetSyncsTopic).
  const mm2 = {
    location,
    topic: `mm2-offset-syncs.${location === 'source' ? target : source}.internal`,
    maxOffsetLagRecords: values.number('offset.lag.max'),
    replicationFactor: offsetSyncsReplicationFactor,
  }
  const emitCheckpoints = values.boolean('emit.checkpoints.enabled')
  return {
    replicationFactor,
    offsetSyncs: {
      enabled: offsetSyncsEnabled,
      topic: `mirror-offset-syncs.${source}.internal`,
      replicationFactor: offsetSyncsReplicationFactor,
      ...(offsetSyncsEnabled ? { mm2 } : {}),
    },
    groupSync: {
      // MM2 syncs group offsets from checkpoints: without checkpoints there is nothing to sync.
      enabled: values.boolean('sync.group.offsets.enabled') && emitCheckpoints,
      // A checkpoint carries a translation from the offset syncs: without syncs there is none to write.
      emitCheckpoints: emitCheckpoints && offsetSyncsEnabled,
      // MirrorMaker 2's defaults: each every 60 s, independently.
      intervalMs: values.number('sync.group.offsets.interval.seconds') * 1000,
      checkpointIntervalMs: values.number('emit.checkpoints.interval.seconds') * 1000,
      checkpointsTopic: `${source}.checkpoints.internal`,
      checkpointsReplicationFactor: factor('checkpoints.topic.replication.factor'),
    },
    heartbeats: {
      enabled: values.boolean('emit.heartbeats.enabled'),
      intervalMs: values.number('emit.heartbeats.interval.seconds') * 1000,
      topic: HEARTBEATS_TOPIC,
      replicationFactor: factor('heartbeats.topic.replication.factor'),
    },
    offsetCommitIntervalMs: values.number('offset.flush.interval.ms'),
  }
}

/** `<target>.exactly.once.source.support` and `exactly.once.commit.interval.ms`: the flow's exactly-once settings, when on. */
function exactlyOnceOf (
  source: string, target: string, top: Properties, flowEntry: FlowEntry, producer: ProducerSettings, positionsReplicationFactor: number, problems: ProblemList
): Pick<FlowConfig, 'exactlyOnce'> {
  // MirrorMaker 2 reads it per target cluster (KIP-618); the top-level key is not applied there, nor here.
  const supportKey = `${target}.${EXACTLY_ONCE_SUPPORT}`
  const exactlyOnce = parseExactlyOnceSupport(supportKey, top.get(supportKey)?.value, problems) ?? false
  if (exactlyOnce) checkExactlyOnceProducer(supportKey, producer, `${target}.producer.`, problems)
  const commitIntervalMs = readFlowKeys(['exactly.once.commit.interval.ms'], flowEntry, problems).number('exactly.once.commit.interval.ms')
  if (!exactlyOnce) return {}
  return {
    exactlyOnce: {
      key: supportKey,
      commitIntervalMs,
      transactionTimeoutMs: DEFAULT_TRANSACTION_TIMEOUT_MS,
      positionsTopic: `mirror-positions.${source}.internal`,
      positionsReplicationFactor,
    },
  }
}

/** The flow's range digests (`digests.*`), with the two checks across keys. */
function digestsOf (source: string, flowEntry: FlowEntry, replicationFactor: number, problems: ProblemList): FlowConfig['digests'] {
  const values = readFlowKeys(['digests.enabled', 'digests.audit.interval.ms', 'digests.range.records', 'digests.audit.max.records'], flowEntry, problems)
  const digests = {
    enabled: values.boolean('digests.enabled'),
    topic: `mirror-digests.${source}.internal`,
    rangeRecords: values.number('digests.range.records'),
    replicationFactor,
    auditIntervalMs: values.number('digests.audit.interval.ms'),
    auditMaxRecords: values.number('digests.audit.max.records'),
  }
  if (digests.enabled && digests.auditMaxRecords < digests.rangeRecords) {
    problems.add(
      flowEntry('digests.audit.max.records')?.key ?? 'digests.audit.max.records',
      String(digests.auditMaxRecords),
      `below digests.range.records ${digests.rangeRecords}: a pass could not re-read one digest; give at least ${digests.rangeRecords}`
    )
  }
  if (digests.auditIntervalMs > 0 && !digests.enabled) {
    const entry = flowEntry('digests.audit.interval.ms')
    problems.add(
      entry?.key ?? 'digests.audit.interval.ms',
      entry?.value,
      'the audit compares the target with the digests the mirror writes; add digests.enabled = true, or leave the interval at 0'
    )
  }
  return digests
}

/** `message.handler` and `message.handler.args`, checked against the flow's pass-through. */
function flowMessageHandler (flowEntry: FlowEntry, passThrough: FlowConfig['passThrough'], passThroughKey: string, problems: ProblemList) {
  const handlerEntry = flowEntry('message.handler')
  const handlerArgsEntry = flowEntry('message.handler.args')
  const messageHandler = parseMessageHandler({ module: handlerEntry?.key ?? 'message.handler', args: handlerArgsEntry?.key ?? 'message.handler.args' },
    handlerEntry?.value, handlerArgsEntry?.value, problems)
  checkHandlerPassThrough(passThrough, passThroughKey, messageHandler, problems)
  return messageHandler
}

function buildFlow (
  source: string, target: string, flowOverrides: ReadonlyMap<string, string>, path: string, top: Properties,
  flowEntry: FlowEntry,
  problems: ProblemList
): FlowConfig | undefined {
  const views = { consumer: clientView(top, source, 'consumer', flowOverrides), producer: clientView(top, target, 'producer', flowOverrides) }
  checkAdminKeys(top, [[source, 'consumer', views.consumer], [target, 'producer', views.producer]], problems)
  const before = problems.problems.length
  const clients = flowClients(source, target, path, views, problems)
  const filters = flowFilters(flowEntry, problems)
  const replicationPolicy = replicationPolicyOf(flowEntry, problems)
  const { passThroughKey, ...copy } = copySettings(source, flowEntry, views.consumer, problems)
  const topicSync = topicSyncSettings(flowEntry, problems)
  const internal = internalTopicSettings(source, target, flowEntry, problems)
  const positionsReplicationFactor = internal.offsetSyncs.replicationFactor
  const exactlyOnce = exactlyOnceOf(source, target, top, flowEntry, clients.producer, positionsReplicationFactor, problems)
  const messageHandler = flowMessageHandler(flowEntry, copy.passThrough, passThroughKey, problems)
  const digests = digestsOf(source, flowEntry, positionsReplicationFactor, problems)
  const { sourceConnection, targetConnection } = clients
  if (problems.problems.length !== before || sourceConnection === undefined || targetConnection === undefined ||
    filters.topics === undefined || filters.groups === undefined) return undefined
  // Read only for a flow without problems so far, so a problem here is reported once the others are fixed.
  const metadata = readFlowKeys(['sync.topic.configs.interval.seconds', 'sync.topic.acls.enabled', 'sync.topic.acls.interval.seconds'], flowEntry, problems)
  const { groupSync } = internal
  return {
    name: `${source}->${target}`,
    source: sourceConnection,
    target: targetConnection,
    consumer: clients.consumer,
    producer: clients.producer,
    topics: withHeartbeatsTopic(filters.topics, HEARTBEATS_TOPIC),
    replicationPolicy,
    numStreams: copy.numStreams,
    numProducers: FLAG_DEFAULTS['num.producers'],
    queueMaxRecords: FLAG_DEFAULTS['queue.size'],
    queueMaxBytes: FLAG_DEFAULTS['queue.bytes'],
    offsetCommitIntervalMs: internal.offsetCommitIntervalMs,
    abortOnSendFailure: true,
    passThrough: copy.passThrough,
    corruptBatches: copy.corruptBatches,
    ...(copy.throughputLimitBytes === undefined ? {} : { throughputLimitBytes: copy.throughputLimitBytes }),
    ...exactlyOnce,
    ...topicSync,
    syncTopicConfigsIntervalMs: metadata.number('sync.topic.configs.interval.seconds') * 1000,
    syncTopicAcls: metadata.boolean('sync.topic.acls.enabled'),
    syncTopicAclsIntervalMs: metadata.number('sync.topic.acls.interval.seconds') * 1000,
    replicationFactor: internal.replicationFactor,
    offsetSyncs: internal.offsetSyncs,
    groupSync: {
      enabled: groupSync.enabled,
      emitCheckpoints: groupSync.emitCheckpoints,
      groups: filters.groups,
      intervalMs: groupSync.intervalMs,
      checkpointIntervalMs: groupSync.checkpointIntervalMs,
      checkpointsTopic: groupSync.checkpointsTopic,
      checkpointsReplicationFactor: groupSync.checkpointsReplicationFactor,
    },
    heartbeats: internal.heartbeats,
    ...(messageHandler === undefined ? {} : { messageHandler }),
    digests,
  }
}
