import { checkSigningRegions } from './aws-msk-iam-config.js'
import type { ClusterConnection } from './cluster-connection.js'
import { isProviderKey } from './config-providers.js'
import { isSecurityKey, securityFromProperties } from './client-security.js'
import type { Properties } from './java-properties.js'
import { CONNECTION_TABLE, CONSUMER_TABLE, PRODUCER_TABLE } from './client-keys.js'
import { keyNames, readKeys, type KeySource } from './key-table.js'
import type { ConsumerSettings, ProducerSettings } from './mirror-config.js'
import { parseBootstrapServers, type ProblemList } from './values.js'

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
export const CONNECTION_KEYS: readonly string[] = keyNames(CONNECTION_TABLE)
/** Keys `consumerSettingsFromProperties` reads (`shallowiterator.enable` through the pass-through parser). */
export const CONSUMER_KEYS: readonly string[] = keyNames(CONSUMER_TABLE)
/** Keys `producerSettingsFromProperties` reads. */
export const PRODUCER_KEYS: readonly string[] = keyNames(PRODUCER_TABLE)

/**
 * Records, as ignored, every key of a client file that neither the connection nor `roleKeys`
 * read (Java-only settings such as `key.deserializer` or `retries`): one warning lists them.
 */
function noteUnusedKeys (properties: Properties, where: string, roleKeys: readonly string[], problems: ProblemList): void {
  for (const name of properties.keys()) {
    if (isSecurityKey(name) || isProviderKey(name) || CONNECTION_KEYS.includes(name) || roleKeys.includes(name)) continue
    problems.ignore(`${where}${name}`)
  }
}

function value (properties: Properties, key: string): string | undefined {
  return properties.get(key)?.value
}

/** A client file's keys as `readKeys` reads them, named in messages with `where` (a file path or an mm2 prefix). */
function keySource (properties: Properties, where: string): KeySource {
  return {
    get: name => {
      const entry = properties.get(name)
      return entry === undefined ? undefined : { key: `${where}${name}`, value: entry.value }
    },
    name: name => `${where}${name}`,
  }
}

/** The connection part of a Java client config: `bootstrap.servers`, `client.id`, timeouts and security. */
export function connectionFromProperties (properties: Properties, origin: PropertiesOrigin, problems: ProblemList): ClusterConnection | undefined {
  const key = (name: string): string => `${origin.where}${name}`
  const brokers = parseBootstrapServers(key('bootstrap.servers'), value(properties, 'bootstrap.servers'), problems)
  if (brokers === undefined && !problems.problems.some(p => p.key === key('bootstrap.servers'))) {
    problems.add(key('bootstrap.servers'), undefined, `missing; set it to the ${origin.alias} cluster's brokers (host:port,...) ${origin.bootstrapHint}`)
  }
  const values = readKeys(CONNECTION_TABLE, keySource(properties, origin.where), problems)
  const requestTimeoutMs = values.optionalNumber('request.timeout.ms')
  const connectionTimeoutMs = values.optionalNumber('socket.connection.setup.timeout.ms')
  const security = securityFromProperties(properties, origin.where, problems)
  if (brokers === undefined) return undefined
  if (security.sasl?.mechanism === 'aws_msk_iam') checkSigningRegions(security.sasl, brokers, key('bootstrap.servers'), problems)
  return {
    alias: origin.alias,
    brokers,
    clientId: values.text('client.id') ?? origin.defaultClientId,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(connectionTimeoutMs === undefined ? {} : { connectionTimeoutMs }),
    ...security,
  }
}

export function consumerSettingsFromProperties (properties: Properties, where: string, problems: ProblemList, reportUnused = true): ConsumerSettings {
  if (reportUnused) noteUnusedKeys(properties, where, CONSUMER_KEYS, problems)
  const values = readKeys(CONSUMER_TABLE, keySource(properties, where), problems)
  const groupInstanceId = values.text('group.instance.id')
  const clientRack = values.text('client.rack')
  return {
    groupId: values.text('group.id') as string,
    autoOffsetReset: values.text('auto.offset.reset') === 'latest' ? 'latest' : 'earliest',
    maxPollRecords: values.number('max.poll.records'),
    fetchMaxBytes: values.number('fetch.max.bytes'),
    maxPartitionFetchBytes: values.number('max.partition.fetch.bytes'),
    sessionTimeoutMs: values.number('session.timeout.ms'),
    heartbeatIntervalMs: values.number('heartbeat.interval.ms'),
    fetchMaxWaitMs: values.number('fetch.max.wait.ms'),
    fetchMinBytes: values.number('fetch.min.bytes'),
    fetchSessions: values.boolean('fetch.sessions.enable'),
    groupProtocol: values.text('group.protocol') === 'consumer' ? 'consumer' : 'classic',
    ...(groupInstanceId === undefined || groupInstanceId === '' ? {} : { groupInstanceId }),
    ...(clientRack === undefined || clientRack === '' ? {} : { clientRack }),
  }
}

export function producerSettingsFromProperties (properties: Properties, where: string, problems: ProblemList, reportUnused = true): ProducerSettings {
  if (reportUnused) noteUnusedKeys(properties, where, PRODUCER_KEYS, problems)
  const values = readKeys(PRODUCER_TABLE, keySource(properties, where), problems)
  return {
    acks: -1,
    compression: values.text('compression.type') as ProducerSettings['compression'],
    compressionSet: value(properties, 'compression.type') !== undefined,
    batchSizeBytes: values.number('batch.size'),
    lingerMs: values.number('linger.ms'),
    idempotent: values.boolean('enable.idempotence'),
    maxRequestSizeBytes: values.number('max.request.size'),
  }
}
