import type { ClusterConnection } from '../../config/cluster-connection.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { awsMskIamMechanism } from '../aws-msk-iam-mechanism.js'
import { awsCredentialsSource, gssapiCredentials, oauthTokenSource } from '../connection-credentials.js'
import { gssapiMechanism } from '../gssapi-mechanism.js'
import type { BrokerConnectionOptions } from './broker-connection.js'
import { oauthBearerMechanism, plainMechanism, scramMechanism, type SaslMechanism } from './sasl-mechanism.js'

/** One broker of a cluster, as Metadata names it (or as `bootstrap.servers` does). */
export interface WireBroker {
  readonly host: string
  readonly port: number
}

/** The SASL mechanism of the wire layer for a cluster connection's SASL settings. */
function wireMechanism (sasl: NonNullable<ClusterConnection['sasl']>, logger: Logger): SaslMechanism {
  switch (sasl.mechanism) {
    case 'plain':
      return plainMechanism(sasl.username, sasl.password)
    case 'scram-sha-256':
      return scramMechanism('SCRAM-SHA-256', sasl.username, sasl.password)
    case 'scram-sha-512':
      return scramMechanism('SCRAM-SHA-512', sasl.username, sasl.password)
    case 'oauthbearer': {
      const tokens = oauthTokenSource(sasl, logger)
      return oauthBearerMechanism(async () => await tokens.token())
    }
    case 'aws_msk_iam':
      return awsMskIamMechanism(sasl, awsCredentialsSource(sasl, logger), logger)
    case 'gssapi':
      return gssapiMechanism(sasl, gssapiCredentials(sasl), logger)
  }
}

/**
 * The options of a `BrokerConnection` to `broker` of `connection`: its client id, timeouts, TLS options (the
 * secrets `tlsOptions()` hides stay hidden: the connection reads them by name) and SASL mechanism, whichever of
 * PLAIN, SCRAM-SHA-256/512, OAUTHBEARER, AWS_MSK_IAM and GSSAPI the connection names. The credentials behind
 * OAUTHBEARER, AWS_MSK_IAM and GSSAPI are those the cluster's kafkajs clients use (`connection-credentials.ts`):
 * one token, one set of AWS credentials, one ticket cache per cluster. Throws the `kerberos` package's one-line
 * install hint when GSSAPI is named and the package is missing.
 */
export function wireConnectionOptions (connection: ClusterConnection, broker: WireBroker, logger: Logger = silentLogger): BrokerConnectionOptions {
  const log = logger.child({ cluster: connection.alias })
  return {
    host: broker.host,
    port: broker.port,
    clientId: connection.clientId,
    ...(connection.tls === undefined ? {} : { tls: connection.tls }),
    ...(connection.sasl === undefined ? {} : { sasl: wireMechanism(connection.sasl, log) }),
    ...(connection.connectionTimeoutMs === undefined ? {} : { connectTimeoutMs: connection.connectionTimeoutMs }),
    ...(connection.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: connection.requestTimeoutMs }),
  }
}

/** How the wire layer reaches one cluster: its bootstrap brokers and the options of every broker connection. */
export interface WireClusterOptions {
  readonly bootstrap: readonly WireBroker[]
  readonly connection: Omit<BrokerConnectionOptions, 'host' | 'port'>
}

/** `connection` as the wire layer's options for every broker of the cluster (`wireConnectionOptions` without a broker). */
export function wireClusterOptions (connection: ClusterConnection, logger: Logger = silentLogger): WireClusterOptions {
  const bootstrap = connection.brokers.map(hostPort)
  const { host: _host, port: _port, ...options } = wireConnectionOptions(connection, bootstrap[0]!, logger)
  return { bootstrap, connection: options }
}

/** `host:port` (an IPv6 host in brackets) as host and port. */
function hostPort (broker: string): WireBroker {
  const colon = broker.lastIndexOf(':')
  const host = broker.slice(0, colon)
  return { host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port: Number(broker.slice(colon + 1)) }
}
