import type { ConnectionOptions } from 'node:tls'
import kafkajs from 'kafkajs'
import type { Kafka as KafkaClient, logCreator as LogCreator } from 'kafkajs'
import { TLS_SECRET_FIELDS, type ClusterConnection } from '../config/cluster-connection.js'
import type { Logger } from '../shared/logger.js'
import { silentLogger } from '../shared/logger.js'
import { registerCodecs } from './codecs.js'

const { Kafka, logLevel } = kafkajs

export type { KafkaClient }

/**
 * kafkajs warnings about choices made on purpose, logged at debug instead of warn: the sink limits
 * in-request retries of its idempotent producer and replaces the producer before retrying
 * (see `KafkaRecordSink`), so the guarantee the warning is about holds.
 */
const EXPECTED_WARNINGS: ReadonlySet<string> = new Set(['Limiting retries for the idempotent producer may invalidate EoS guarantees'])

/**
 * kafkajs logs each failed attempt of a connection it will retry at error level. An outage is not
 * an error of the mirror until its own retries give up (those are logged by the component that
 * waits), so these are warnings.
 */
const TRANSIENT_CONNECTION_ERROR = /^(Connection error|Connection timeout|Failed to connect to (seed )?broker)/

/**
 * Routes kafkajs log lines into our JSON logger (kafkajs INFO is our debug: it is chatty).
 * kafkajs' stack traces are kept at debug level only: they describe the client's internals, never
 * what a user should change.
 */
export function logCreatorFor (logger: Logger): LogCreator {
  return () => ({ level, log }) => {
    const { message, ...extra } = log as { message: string, [key: string]: unknown }
    delete extra.timestamp
    delete extra.logger
    if (logger.level !== 'debug') delete extra.stack
    const fields = { kafkajs: log.namespace, ...extra }
    if (level === logLevel.ERROR && (extra.retryCount !== undefined || TRANSIENT_CONNECTION_ERROR.test(message))) logger.warn(message, fields)
    else if (level === logLevel.ERROR) logger.error(message, fields)
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
  registerCodecs()
  const { tls, sasl } = connection
  return new Kafka({
    clientId: connection.clientId,
    brokers: [...connection.brokers],
    // Secrets are non-enumerable on the config (never serialised); kafkajs gets a plain copy.
    ...(tls === undefined ? {} : { ssl: tlsForClient(tls) }),
    ...(sasl === undefined ? {} : { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as never }),
    connectionTimeout: connection.connectionTimeoutMs ?? 10_000,
    requestTimeout: connection.requestTimeoutMs ?? 30_000,
    logLevel: logger.level === 'silent' ? logLevel.NOTHING : logger.level === 'debug' ? logLevel.DEBUG : logLevel.INFO,
    logCreator: logCreatorFor(logger.child({ cluster: connection.alias })),
    retry: { retries: options.retries ?? 5, initialRetryTime: Math.min(200, options.maxRetryTimeMs ?? 200), maxRetryTime: options.maxRetryTimeMs ?? 5_000 },
  })
}

/** A plain copy of TLS options with the hidden secrets included (see `tlsOptions`), for the Kafka client only. */
function tlsForClient (tls: ConnectionOptions): ConnectionOptions {
  const copy: Record<string, unknown> = { ...tls }
  for (const name of TLS_SECRET_FIELDS) if (tls[name] !== undefined) copy[name] = tls[name]
  return copy as ConnectionOptions
}
