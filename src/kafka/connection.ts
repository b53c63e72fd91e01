import type { ConnectionOptions } from 'node:tls'

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512'

/** SASL credentials. The password never leaves this object: it is not logged or printed. */
export interface SaslCredentials {
  readonly mechanism: SaslMechanism
  readonly username: string
  readonly password: string
}

/** How to reach one cluster: everything the Kafka client needs, already validated. */
export interface ClusterConnection {
  /** Name used in logs, metrics and errors (`source`, `target`, or an mm2 cluster alias). */
  readonly alias: string
  readonly brokers: readonly string[]
  readonly clientId: string
  /** TLS options, or undefined for a plaintext connection. */
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials
  /** TCP connect timeout; default 10000. */
  readonly connectionTimeoutMs?: number
  /** Per-request timeout; default 30000. */
  readonly requestTimeoutMs?: number
}
