import { checkSigningRegions } from './aws-msk-iam-config.js'
import type { ClusterConnection } from './cluster-connection.js'
import { isProviderKey } from './config-providers.js'
import { isSecurityKey, securityFromProperties } from './client-security.js'
import type { Properties } from './java-properties.js'
import { CompressionNames, type ConsumerSettings, type ProducerSettings } from './mirror-config.js'
import { parseBoolean, parseBootstrapServers, parseChoice, parseInteger, type ProblemList } from './values.js'

/** Where a set of client properties came from, so messages name the file or prefix. */
export interface PropertiesOrigin {
  /** Cluster alias used in logs and metrics. */
  readonly alias: string
  /** How to name a key in messages: a file path plus ':' or an mm2 prefix such as `A.consumer.`. */
  readonly where: string
  /** The flag or key to set when `bootstrap.servers` is missing. */
  readonly bootstrapHint: string
  readonly defaultClientId: string
}

/** Keys `connectionFromProperties` reads, besides the security keys. */
export const CONNECTION_KEYS = ['bootstrap.servers', 'client.id', 'request.timeout.ms', 'socket.connection.setup.timeout.ms'] as const
/** Keys `consumerSettingsFromProperties` reads. */
export const CONSUMER_KEYS = [
  'group.id',
  'auto.offset.reset',
  'enable.auto.commit',
  'max.poll.records',
  'shallowiterator.enable',
  'fetch.max.bytes',
  'max.partition.fetch.bytes',
  'session.timeout.ms',
  'heartbeat.interval.ms',
  'fetch.max.wait.ms',
  'fetch.min.bytes',
  'fetch.sessions.enable',
] as const
/** Keys `producerSettingsFromProperties` reads. */
export const PRODUCER_KEYS = [
  'acks',
  'compression.type',
  'batch.size',
  'linger.ms',
  'enable.idempotence',
  'max.request.size',
  'max.in.flight.requests.per.connection',
] as const

/**
 * Most requests an idempotent producer may have in flight per connection: the broker keeps the
 * sequences of the last 5 batches of a producer to drop a resent one (KAFKA-5494); Java's producer
 * refuses more with enable.idempotence=true.
 */
const MAX_IN_FLIGHT_IDEMPOTENT = 5

/**
 * Records, as ignored, every key of a client file that neither the connection nor `roleKeys`
 * read (Java-only settings such as `key.deserializer` or `retries`): one warning lists them.
 */
function noteUnusedKeys (properties: Properties, where: string, roleKeys: readonly string[], problems: ProblemList): void {
  for (const name of properties.keys()) {
    if (isSecurityKey(name) || isProviderKey(name) || (CONNECTION_KEYS as readonly string[]).includes(name) || roleKeys.includes(name)) continue
    problems.ignore(`${where}${name}`)
  }
}

function value (properties: Properties, key: string): string | undefined {
  return properties.get(key)?.value
}

/** The connection part of a Java client config: `bootstrap.servers`, `client.id`, timeouts and security. */
export function connectionFromProperties (properties: Properties, origin: PropertiesOrigin, problems: ProblemList): ClusterConnection | undefined {
  const key = (name: string): string => `${origin.where}${name}`
  const brokers = parseBootstrapServers(key('bootstrap.servers'), value(properties, 'bootstrap.servers'), problems)
  if (brokers === undefined && !problems.problems.some(p => p.key === key('bootstrap.servers'))) {
    problems.add(key('bootstrap.servers'), undefined, `missing; set it to the ${origin.alias} cluster's brokers (host:port,...) ${origin.bootstrapHint}`)
  }
  const requestTimeoutMs = parseInteger(key('request.timeout.ms'), value(properties, 'request.timeout.ms'), { min: 1 }, problems)
  const connectionTimeoutMs = parseInteger(
    key('socket.connection.setup.timeout.ms'),
    value(properties, 'socket.connection.setup.timeout.ms'),
    { min: 1 },
    problems
  )
  const security = securityFromProperties(properties, origin.where, problems)
  if (brokers === undefined) return undefined
  if (security.sasl?.mechanism === 'aws_msk_iam') checkSigningRegions(security.sasl, brokers, key('bootstrap.servers'), problems)
  return {
    alias: origin.alias,
    brokers,
    clientId: value(properties, 'client.id') ?? origin.defaultClientId,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(connectionTimeoutMs === undefined ? {} : { connectionTimeoutMs }),
    ...security,
  }
}

export function consumerSettingsFromProperties (properties: Properties, where: string, problems: ProblemList, reportUnused = true): ConsumerSettings {
  if (reportUnused) noteUnusedKeys(properties, where, CONSUMER_KEYS, problems)
  const key = (name: string): string => `${where}${name}`
  const int = (name: string, fallback: number, min = 1): number =>
    parseInteger(key(name), value(properties, name), { min }, problems) ?? fallback
  const reset = parseChoice(key('auto.offset.reset'), value(properties, 'auto.offset.reset'), ['earliest', 'latest', 'none'] as const, problems)
  if (reset === 'none') {
    problems.add(key('auto.offset.reset'), 'none', 'a mirror must start somewhere on partitions without a committed offset; use earliest or latest')
  }
  const autoCommit = parseBoolean(key('enable.auto.commit'), value(properties, 'enable.auto.commit'), problems)
  if (autoCommit === true) {
    problems.add(key('enable.auto.commit'), 'true', 'the mirror commits only what the target acknowledged; remove the key or set it to false')
  }
  const sessionTimeoutMs = int('session.timeout.ms', 45_000)
  const fetchMaxWaitMs = int('fetch.max.wait.ms', 500, 0)
  // kafkajs heartbeats between fetches, so a fetch held longer than the session would lose the group.
  if (fetchMaxWaitMs >= sessionTimeoutMs) {
    problems.add(
      key('fetch.max.wait.ms'),
      String(fetchMaxWaitMs),
      `must be below session.timeout.ms (${sessionTimeoutMs}): the consumer heartbeats between fetches; lower it or raise session.timeout.ms`
    )
  }
  return {
    groupId: value(properties, 'group.id') ?? 'mirror-sidecar',
    autoOffsetReset: reset === 'latest' ? 'latest' : 'earliest',
    maxPollRecords: int('max.poll.records', 2000),
    fetchMaxBytes: int('fetch.max.bytes', 52_428_800),
    maxPartitionFetchBytes: int('max.partition.fetch.bytes', 1_048_576),
    sessionTimeoutMs,
    heartbeatIntervalMs: int('heartbeat.interval.ms', 3_000),
    fetchMaxWaitMs,
    fetchMinBytes: int('fetch.min.bytes', 1),
    fetchSessions: parseBoolean(key('fetch.sessions.enable'), value(properties, 'fetch.sessions.enable'), problems) ?? true,
  }
}

export function producerSettingsFromProperties (properties: Properties, where: string, problems: ProblemList, reportUnused = true): ProducerSettings {
  if (reportUnused) noteUnusedKeys(properties, where, PRODUCER_KEYS, problems)
  const key = (name: string): string => `${where}${name}`
  const int = (name: string, fallback: number, min = 0): number =>
    parseInteger(key(name), value(properties, name), { min }, problems) ?? fallback
  // The mirror commits a source offset once the target acknowledged its copy: that holds only when
  // the acknowledgement means every in-sync replica has it (acks=all), and the idempotent producer refuses anything else.
  const acksRaw = value(properties, 'acks')
  if (acksRaw !== undefined) {
    const normalised = acksRaw.trim().toLowerCase()
    if (normalised === '0') {
      problems.add(
        key('acks'),
        acksRaw,
        'acks=0 gives no acknowledgement, so the mirror could neither avoid loss nor record offsets; set acks=all or remove the key'
      )
    } else if (normalised === '1') {
      problems.add(
        key('acks'),
        acksRaw,
        'acks=1 is acknowledged by the leader alone, so a leader change loses records whose source offsets the mirror committed; set acks=all or remove the key'
      )
    } else if (normalised !== 'all' && normalised !== '-1') problems.add(key('acks'), acksRaw, 'expected all (or -1); set acks=all or remove the key')
  }
  const idempotent = parseBoolean(key('enable.idempotence'), value(properties, 'enable.idempotence'), problems) ?? true
  const inFlight = parseInteger(key('max.in.flight.requests.per.connection'), value(properties, 'max.in.flight.requests.per.connection'), { min: 1 }, problems)
  if (idempotent && inFlight !== undefined && inFlight > MAX_IN_FLIGHT_IDEMPOTENT) {
    problems.add(
      key('max.in.flight.requests.per.connection'),
      String(inFlight),
      `the idempotent producer allows at most ${MAX_IN_FLIGHT_IDEMPOTENT} (the broker drops a resent batch by the last 5 sequences); set ${MAX_IN_FLIGHT_IDEMPOTENT} or less, or remove the key`
    )
  }
  const compression = parseChoice(key('compression.type'), value(properties, 'compression.type'), CompressionNames, problems) ?? 'none'
  return {
    acks: -1,
    compression,
    compressionSet: value(properties, 'compression.type') !== undefined,
    batchSizeBytes: int('batch.size', 524_288, 1),
    lingerMs: int('linger.ms', 0),
    idempotent,
    maxRequestSizeBytes: int('max.request.size', 1_048_576, 1),
  }
}
