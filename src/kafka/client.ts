import kafkajs from 'kafkajs'
import type { Kafka as KafkaClient, logCreator as LogCreator } from 'kafkajs'
import type { Logger } from '../shared/logger.js'
import { silentLogger } from '../shared/logger.js'
import { registerCodecs } from './codecs.js'
import { tlsForClient, type ClusterConnection } from './connection.js'

const { Kafka, logLevel } = kafkajs

export type { KafkaClient }

function logCreatorFor (logger: Logger): LogCreator {
  return () => ({ level, log }) => {
    const { message, ...extra } = log as { message: string, [key: string]: unknown }
    delete extra.timestamp
    delete extra.logger
    const fields = { kafkajs: log.namespace, ...extra }
    if (level === logLevel.ERROR) logger.error(message, fields)
    else if (level === logLevel.WARN) logger.warn(message, fields)
    else if (level === logLevel.INFO) logger.debug(message, fields)
    else logger.debug(message, fields)
  }
}

/**
 * The one place a kafkajs client is made. kafkajs' own retrier is kept for connection-level
 * work (metadata, coordinator lookup); data-plane retries are ours (`shared/retry.ts`).
 */
export function createKafkaClient (connection: ClusterConnection, logger: Logger = silentLogger): KafkaClient {
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
    logLevel: logger.level === 'debug' ? logLevel.DEBUG : logLevel.INFO,
    logCreator: logCreatorFor(logger.child({ cluster: connection.alias })),
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 5_000 },
  })
}
