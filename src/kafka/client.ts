import type { ConnectionOptions } from 'node:tls'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { Kafka as KafkaClient, logCreator as LogCreator } from '@kafka-mirror-sidecar/kafkajs'
import { TLS_SECRET_FIELDS, type ClusterConnection } from '../config/cluster-connection.js'
import type { Logger } from '../shared/logger.js'
import { silentLogger } from '../shared/logger.js'
import { type CodecImplementations, registerCodecs } from './codecs.js'
import { assertKafkajsPatched } from './kafkajs-internals.js'
import { AWS_MSK_IAM_MECHANISM, awsMskIamAuthenticationProvider } from './aws-msk-iam-mechanism.js'
import { awsCredentialsSource, gssapiCredentials, oauthTokenSource } from './connection-credentials.js'
import { GSSAPI_MECHANISM, gssapiAuthenticationProvider } from './gssapi-mechanism.js'

const { Kafka, logLevel } = kafkajs

export type { KafkaClient }

/**
 * kafkajs warnings about choices made on purpose, logged at debug instead of warn: the sink's
 * idempotent producer makes one attempt per send, and the worker resends the partitions not
 * written through the same producer with their same sequence numbers (see `KafkaRecordSink`), so
 * the guarantee the warning is about holds.
 */
const EXPECTED_WARNINGS: ReadonlySet<string> = new Set(['Limiting retries for the idempotent producer may invalidate EoS guarantees'])

/**
 * kafkajs logs each failed attempt of a connection it will retry at error level. An outage is not
 * an error of the mirror until its own retries give up (those are logged by the component that
 * waits), so these are warnings.
 */
const TRANSIENT_CONNECTION_ERROR = /^(Connection error|Connection timeout|Failed to connect to (seed )?broker)/

/**
 * The messages of the protocol errors kafkajs 2.2.4 marks `retriable: true`
 * (`@kafka-mirror-sidecar/kafkajs/src/protocol/error.js`; a unit test compares the two lists). kafkajs logs every error
 * answer at error level (`Response <Api>` with the message in `error`) before its retrier tries
 * again, so such a line is a retried condition, not a failure.
 */
export const RETRIABLE_PROTOCOL_ERRORS: ReadonlySet<string> = new Set([
  'This message has failed its CRC checksum, exceeds the valid size, or is otherwise corrupt',
  'This server does not host this topic-partition',
  'There is no leader for this topic-partition as we are in the middle of a leadership election',
  'This server is not the leader for that topic-partition',
  'The request timed out',
  'The replica is not available for the requested topic-partition',
  'The server disconnected before a response was received',
  'The coordinator is loading and hence can\'t process requests for this group',
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
  'Messages are rejected since there are fewer in-sync replicas than required',
  'Messages are written to the log, but to fewer in-sync replicas than required',
  'This is not the correct controller for this cluster',
  'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
  'Disk error when trying to access log file on the disk',
  'The fetch session ID was not found',
  'The fetch session epoch is invalid',
  'There is no listener on the leader broker that matches the listener on which metadata request was processed',
  'The leader epoch in the request is older than the epoch on the broker',
  'The leader epoch in the request is newer than the epoch on the broker',
  'The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing',
  'The preferred leader was not available',
  'Eligible topic partition leaders are not available',
  'Leader election not needed for topic partition',
  'There are unstable offsets that need to be cleared',
])

/**
 * Retriable answers every start of a cluster, group or leader election gives for a few seconds
 * (the group coordinator loading its partition, leaders being elected): debug, not warn.
 */
const EXPECTED_AT_START_UP: ReadonlySet<string> = new Set([
  'The coordinator is loading and hence can\'t process requests for this group',
  'The group coordinator is not available',
  'This is not the correct coordinator for this group',
  'There is no leader for this topic-partition as we are in the middle of a leadership election',
  'This server is not the leader for that topic-partition',
])

/** Answers the mirror expects and handles itself: a cluster without an authorizer answering the ACL sync (`TopicAdmin.topicAcls`). */
const HANDLED_BY_THE_MIRROR: ReadonlySet<string> = new Set(['Security features are disabled'])

/** kafkajs error lines after which it recovers by itself (the consumer re-joins its group). */
const RECOVERED_BY_KAFKAJS: ReadonlySet<string> = new Set(['The coordinator is not aware of this member, re-joining the group'])

/**
 * A group member's JoinGroup, SyncGroup or Heartbeat answered "rebalancing": the normal course of a
 * rebalance (a second stream joining at start, a member leaving); kafkajs joins again.
 */
const GROUP_PROTOCOL_REQUEST = /^Response (JoinGroup|SyncGroup|Heartbeat)\(/
const REBALANCING = 'The group is rebalancing, so a rejoin is needed'

/**
 * A Metadata answer naming a topic "not hosted": a topic created or deleted while the cluster was
 * asked (the topic refresh asks for all topics at once); kafkajs asks again, and the topic sync
 * and the producers deal with topics that are not there themselves.
 */
const METADATA_REQUEST = /^Response Metadata\(/
const UNKNOWN_TOPIC = 'This server does not host this topic-partition'

type LineLevel = 'debug' | 'warn' | 'error'

/** The level of a kafkajs ERROR line: error only for what kafkajs does not retry or recover from. */
function errorLineLevel (message: string, extra: Record<string, unknown>): LineLevel {
  // `Response <Api>` lines carry the broker's answer in `error`; retrier lines carry it as the message.
  const answer = typeof extra.error === 'string' ? extra.error : message
  // The consumer stopped: its retries ran out or the error is not retriable (a restart, if any, is logged next).
  if (message.startsWith('Crash: ')) return 'error'
  if (EXPECTED_AT_START_UP.has(answer) || HANDLED_BY_THE_MIRROR.has(answer)) return 'debug'
  if (answer === REBALANCING && GROUP_PROTOCOL_REQUEST.test(message)) return 'debug'
  if (answer === UNKNOWN_TOPIC && METADATA_REQUEST.test(message)) return 'debug'
  if (
    RETRIABLE_PROTOCOL_ERRORS.has(answer) ||
    RECOVERED_BY_KAFKAJS.has(message) ||
    extra.retryCount !== undefined ||
    TRANSIENT_CONNECTION_ERROR.test(message)
  ) {
    return 'warn'
  }
  return 'error'
}

/**
 * Routes kafkajs log lines into our JSON logger (kafkajs INFO is our debug: it is chatty).
 * kafkajs ERROR lines for conditions it retries (retriable protocol answers, connection attempts,
 * a re-join) are warnings, or debug for the answers expected while a cluster starts; error is kept
 * for what gives up. kafkajs' stack traces are kept at debug level only: they describe the client's
 * internals, never what a user should change.
 */
export function logCreatorFor (logger: Logger): LogCreator {
  return () => ({ level, log }) => {
    const { message, ...extra } = log as { message: string, [key: string]: unknown }
    delete extra.timestamp
    delete extra.logger
    if (logger.level !== 'debug') delete extra.stack
    const fields = { kafkajs: log.namespace, ...extra }
    if (level === logLevel.ERROR) logger[errorLineLevel(message, extra)](message, fields)
    else if (level === logLevel.WARN && !EXPECTED_WARNINGS.has(message)) logger.warn(message, fields)
    else logger.debug(message, fields)
  }
}

export interface KafkaClientOptions {
  /** kafkajs' retries for connection-level work; default 5 (a command-line check wants 1). */
  readonly retries?: number
  /** Longest wait between those retries; default 5000. */
  readonly maxRetryTimeMs?: number
}

/**
 * The one place a kafkajs client is made. kafkajs' own retrier is kept for connection-level
 * work (metadata, coordinator lookup); data-plane retries are ours (`shared/retry.ts`).
 */
export function createKafkaClient (connection: ClusterConnection, logger: Logger = silentLogger, options: KafkaClientOptions = {}): KafkaClient {
  // An embedding program may never call the bins' start-up check: an unpatched copy is refused here, in one line.
  assertKafkajsPatched()
  reportCodecs(logger, registerCodecs())
  const { tls, sasl } = connection
  return new Kafka({
    clientId: connection.clientId,
    brokers: [...connection.brokers],
    // Secrets are non-enumerable on the config (never serialised); kafkajs gets a plain copy.
    ...(tls === undefined ? {} : { ssl: tlsForClient(tls) }),
    ...(sasl === undefined ? {} : { sasl: saslForClient(sasl, logger.child({ cluster: connection.alias })) }),
    connectionTimeout: connection.connectionTimeoutMs ?? 10_000,
    requestTimeout: connection.requestTimeoutMs ?? 30_000,
    logLevel: logger.level === 'silent' ? logLevel.NOTHING : logger.level === 'debug' ? logLevel.DEBUG : logLevel.INFO,
    logCreator: logCreatorFor(logger.child({ cluster: connection.alias })),
    retry: { retries: options.retries ?? 5, initialRetryTime: Math.min(200, options.maxRetryTimeMs ?? 200), maxRetryTime: options.maxRetryTimeMs ?? 5_000 },
  })
}

let codecsReported = false

/**
 * Once per process: which codecs and CRC-32C run native code. Info when one runs JavaScript
 * (no prebuilt binary for this platform, or kafkajs was used before: it works, only slower), else debug.
 */
function reportCodecs (logger: Logger, implementations: CodecImplementations): void {
  if (codecsReported || logger.level === 'silent') return
  codecsReported = true
  const fallback = Object.entries(implementations).filter(([, implementation]) => implementation === 'javascript').map(([name]) => name)
  if (fallback.length === 0) logger.debug('codecs and CRC-32C run native code', { ...implementations })
  else logger.info(`${fallback.join(', ')}: the JavaScript implementation runs on ${process.platform}-${process.arch} (works, slower)`, { ...implementations })
}

function saslForClient (sasl: NonNullable<ClusterConnection['sasl']>, logger: Logger): never {
  if (sasl.mechanism === 'gssapi') {
    return { mechanism: GSSAPI_MECHANISM, authenticationProvider: gssapiAuthenticationProvider(sasl, gssapiCredentials(sasl)) } as never
  }
  if (sasl.mechanism === 'aws_msk_iam') {
    return { mechanism: AWS_MSK_IAM_MECHANISM, authenticationProvider: awsMskIamAuthenticationProvider(sasl, awsCredentialsSource(sasl, logger)) } as never
  }
  if (sasl.mechanism === 'oauthbearer') {
    const source = oauthTokenSource(sasl, logger)
    return { mechanism: 'oauthbearer', oauthBearerProvider: async () => await source.token() } as never
  }
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as never
}

/** A plain copy of TLS options with the hidden secrets included (see `tlsOptions`), for the Kafka client only. */
function tlsForClient (tls: ConnectionOptions): ConnectionOptions {
  const copy: Record<string, unknown> = { ...tls }
  for (const name of TLS_SECRET_FIELDS) if (tls[name] !== undefined) copy[name] = tls[name]
  return copy as ConnectionOptions
}
