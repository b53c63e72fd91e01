import type { ConnectionOptions } from 'node:tls'
import { inspect } from 'node:util'

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512'

/**
 * SASL credentials. The password never leaves this object: it is not logged or printed. Build
 * them with `saslCredentials()`, which keeps the password in a non-enumerable property and
 * redacts it in `JSON.stringify` and `util.inspect`.
 */
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
  /** TLS options, or undefined for a plaintext connection. Build with `tlsOptions()` so key material stays hidden. */
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials
  /** TCP connect timeout; default 10000. */
  readonly connectionTimeoutMs?: number
  /** Per-request timeout; default 30000. */
  readonly requestTimeoutMs?: number
}

const REDACTED = '[redacted]'

/** TLS option names that hold secrets: private keys, their passphrase, PKCS#12 stores. */
export const TLS_SECRET_FIELDS = ['key', 'passphrase', 'pfx'] as const

/** Defines `secrets` as non-enumerable properties and makes JSON and inspect show them as `[redacted]`. */
function hideSecrets<T extends object> (visible: T, secrets: Record<string, unknown>): T {
  const names = Object.keys(secrets).filter(name => secrets[name] !== undefined)
  for (const name of names) Object.defineProperty(visible, name, { value: secrets[name], enumerable: false })
  const redacted = (): Record<string, unknown> => ({ ...visible, ...Object.fromEntries(names.map(name => [name, REDACTED])) })
  Object.defineProperty(visible, 'toJSON', { value: redacted, enumerable: false })
  Object.defineProperty(visible, inspect.custom, { value: () => redacted(), enumerable: false })
  return visible
}

/** SASL credentials whose password is neither enumerable nor serialised. */
export function saslCredentials (mechanism: SaslMechanism, username: string, password: string): SaslCredentials {
  return hideSecrets({ mechanism, username } as SaslCredentials, { password })
}

/** TLS options whose `key`, `passphrase` and `pfx` are neither enumerable nor serialised. */
export function tlsOptions (options: ConnectionOptions): ConnectionOptions {
  const visible: Record<string, unknown> = {}
  const secrets: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if ((TLS_SECRET_FIELDS as readonly string[]).includes(name)) secrets[name] = value
    else visible[name] = value
  }
  return hideSecrets(visible as ConnectionOptions, secrets)
}
