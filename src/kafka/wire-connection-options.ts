import type { ClusterConnection } from '../config/cluster-connection.js'
import type { BrokerConnectionOptions } from './wire/broker-connection.js'
import { plainMechanism, scramMechanism, type SaslMechanism } from './wire/sasl-mechanism.js'

/** How the wire layer reaches one cluster: its bootstrap brokers and the options of every broker connection. */
export interface WireClusterOptions {
  readonly bootstrap: ReadonlyArray<{ readonly host: string, readonly port: number }>
  readonly connection: Omit<BrokerConnectionOptions, 'host' | 'port'>
}

/**
 * Whether the wire layer speaks `connection`'s security: none, TLS (with or without a client
 * certificate), SASL PLAIN or SCRAM over plaintext or TLS. OAUTHBEARER, AWS_MSK_IAM and GSSAPI are
 * not on the wire layer: those clusters are reached through kafkajs.
 */
export function wireSpeaks (connection: ClusterConnection): boolean {
  return saslOf(connection) !== null
}

/** `connection` as the wire layer's options, the one place a `ClusterConnection` becomes `BrokerConnectionOptions`; undefined when `wireSpeaks` is false. */
export function wireClusterOptions (connection: ClusterConnection): WireClusterOptions | undefined {
  const sasl = saslOf(connection)
  if (sasl === null) return undefined
  return {
    bootstrap: connection.brokers.map(hostPort),
    connection: {
      clientId: connection.clientId,
      ...(connection.tls === undefined ? {} : { tls: connection.tls }),
      ...(sasl === undefined ? {} : { sasl }),
      ...(connection.connectionTimeoutMs === undefined ? {} : { connectTimeoutMs: connection.connectionTimeoutMs }),
      ...(connection.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: connection.requestTimeoutMs }),
    },
  }
}

/** The wire layer's SASL mechanism for `connection`: undefined without SASL, null for a mechanism it does not speak. */
function saslOf (connection: ClusterConnection): SaslMechanism | undefined | null {
  const sasl = connection.sasl
  if (sasl === undefined) return undefined
  switch (sasl.mechanism) {
    case 'plain': return plainMechanism(sasl.username, sasl.password)
    case 'scram-sha-256': return freshScram('SCRAM-SHA-256', sasl.username, sasl.password)
    case 'scram-sha-512': return freshScram('SCRAM-SHA-512', sasl.username, sasl.password)
    default: return null
  }
}

/** SCRAM with a client nonce of its own for each authentication (RFC 5802: a nonce is never reused). */
function freshScram (name: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username: string, password: string): SaslMechanism {
  return { name, authenticate: async exchange => await scramMechanism(name, username, password).authenticate(exchange) }
}

/** `host:port` (an IPv6 host in brackets) as host and port. */
function hostPort (broker: string): { host: string, port: number } {
  const colon = broker.lastIndexOf(':')
  const host = broker.slice(0, colon)
  return { host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port: Number(broker.slice(colon + 1)) }
}
