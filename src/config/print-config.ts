import type { ConnectionOptions } from 'node:tls'
import type { ClusterConnection } from './cluster-connection.js'
import type { MirrorConfig } from './mirror-config.js'
import { redactUrl } from '../shared/redact-url.js'
import { REDACTED } from './values.js'

function describeTls (tls: ConnectionOptions): Record<string, unknown> {
  const certificates = (pem: unknown): number => typeof pem === 'string' ? (pem.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length : 0
  return {
    trustedCertificates: tls.ca === undefined ? 'system default CAs' : certificates(tls.ca),
    hostnameVerification: tls.checkServerIdentity === undefined,
    ...(tls.cert === undefined ? {} : { clientCertificates: certificates(tls.cert) }),
    ...(tls.key === undefined ? {} : { clientKey: REDACTED }),
    ...(tls.pfx === undefined ? {} : { clientKeystore: REDACTED }),
    ...(tls.passphrase === undefined ? {} : { keyPassword: REDACTED }),
    ...(tls.minVersion === undefined ? {} : { minVersion: tls.minVersion }),
    ...(tls.maxVersion === undefined ? {} : { maxVersion: tls.maxVersion }),
  }
}

function describeSasl (sasl: NonNullable<ClusterConnection['sasl']>): Record<string, unknown> {
  if (sasl.mechanism === 'aws_msk_iam') {
    // Credentials come from the AWS chain at authentication time: there is no secret here to show.
    const { mechanism, jaasKey, ...options } = sasl
    return { mechanism: 'AWS_MSK_IAM', ...options }
  }
  if (sasl.mechanism === 'gssapi') {
    // Keys stay in the keytab or the ticket cache: its path is shown, never its content.
    const { mechanism, jaasKey, ...options } = sasl
    return { mechanism: 'GSSAPI', ...options }
  }
  if (sasl.mechanism !== 'oauthbearer') return { mechanism: sasl.mechanism.toUpperCase(), username: sasl.username, password: REDACTED }
  return {
    mechanism: 'OAUTHBEARER',
    tokenEndpointUrl: redactUrl(sasl.tokenEndpointUrl),
    clientId: sasl.clientId,
    clientSecret: REDACTED,
    ...(sasl.scope === undefined ? {} : { scope: sasl.scope }),
    // Extension names only: their values are the identity provider's business (pool ids, tenants).
    extensions: Object.keys(sasl.extensions),
    refreshWindowFactor: sasl.refreshWindowFactor,
    refreshWindowJitter: sasl.refreshWindowJitter,
    refreshMinPeriodSeconds: sasl.refreshMinPeriodSeconds,
    refreshBufferSeconds: sasl.refreshBufferSeconds,
  }
}

function describeConnection (connection: ClusterConnection): Record<string, unknown> {
  const { tls, sasl, ...rest } = connection
  return {
    ...rest,
    securityProtocol: `${sasl === undefined ? '' : 'SASL_'}${tls === undefined ? 'PLAINTEXT' : 'SSL'}`,
    ...(tls === undefined ? {} : { tls: describeTls(tls) }),
    ...(sasl === undefined ? {} : { sasl: describeSasl(sasl) }),
  }
}

/**
 * The resolved configuration as `--print-config` shows it: every flow with its connections,
 * settings and filters. Passwords and key material appear only as `[redacted]`, URLs without user-info and query.
 */
export function printableConfig (config: MirrorConfig): Record<string, unknown> {
  return {
    ...config,
    flows: config.flows.map(flow => ({
      ...flow,
      source: describeConnection(flow.source),
      target: describeConnection(flow.target),
      topics: { include: flow.topics.include, exclude: flow.topics.exclude ?? null },
      groupSync: { ...flow.groupSync, groups: { include: flow.groupSync.groups.include, exclude: flow.groupSync.groups.exclude ?? null } },
    })),
  }
}
