import type { ConnectionOptions } from 'node:tls'
import type { SaslCredentials } from '../kafka/connection.js'
import type { Properties } from './java-properties.js'
import type { ProblemList } from './values.js'

/** Keys read by `securityFromProperties`; the rest of a client file is read elsewhere. */
export const SECURITY_KEYS = ['security.protocol'] as const

export interface ClientSecurity {
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials
}

/**
 * Maps Java client security keys onto TLS and SASL options. `prefix` names the keys in messages
 * (for example `source.consumer.` in mm2.properties).
 */
export function securityFromProperties (properties: Properties, where: string, problems: ProblemList): ClientSecurity {
  const protocol = properties.get('security.protocol')?.value ?? 'PLAINTEXT'
  if (protocol.toUpperCase() !== 'PLAINTEXT') {
    problems.add(`${where}security.protocol`, protocol, 'only PLAINTEXT is supported in this build')
  }
  return {}
}
