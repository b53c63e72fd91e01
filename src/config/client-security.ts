import { createSecureContext, type ConnectionOptions } from 'node:tls'
import { AWS_MSK_IAM_LOGIN_MODULE, awsMskIamFromProperties } from './aws-msk-iam-config.js'
import {
  saslCredentials,
  tlsOptions,
  type AwsMskIamSettings,
  type GssapiSettings,
  type OAuthBearerCredentials,
  type SaslCredentials,
  type SaslMechanism,
} from './cluster-connection.js'
import type { Properties } from './java-properties.js'
import { parseJaasConfig, type JaasEntry } from './jaas.js'
import { KRB5_LOGIN_MODULE, kerberosFromProperties } from './kerberos-config.js'
import { clientCertificate, trustedCertificates } from './key-stores.js'
import { OAUTH_LOGIN_MODULE, oauthBearerFromProperties } from './oauth-bearer-config.js'
import { PROTOCOLS, SECURITY_TABLE, securityRow, type SecurityKeyRow } from './security-keys.js'
import { parseChoice, type ProblemList } from './values.js'

/** True for keys `securityFromProperties` reads (applies, refuses or reports as ignored). */
export function isSecurityKey (key: string): boolean {
  return key === 'security.protocol' || key.startsWith('ssl.') || key.startsWith('sasl.')
}

export interface ClientSecurity {
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials | OAuthBearerCredentials | AwsMskIamSettings | GssapiSettings
}

const MECHANISMS: Record<string, { mechanism: SaslMechanism, module: string }> = {
  PLAIN: { mechanism: 'plain', module: 'org.apache.kafka.common.security.plain.PlainLoginModule' },
  'SCRAM-SHA-256': { mechanism: 'scram-sha-256', module: 'org.apache.kafka.common.security.scram.ScramLoginModule' },
  'SCRAM-SHA-512': { mechanism: 'scram-sha-512', module: 'org.apache.kafka.common.security.scram.ScramLoginModule' },
}

type Sasl = SaslCredentials | OAuthBearerCredentials | AwsMskIamSettings | GssapiSettings

/** A client file's security keys: their values, how messages name them, and what `security.protocol` and `sasl.mechanism` turn on. */
interface SecurityContext {
  readonly properties: Properties
  readonly where: string
  readonly get: (name: string) => string | undefined
  readonly key: (name: string) => string
  readonly protocol: typeof PROTOCOLS[number]
  readonly usesSasl: boolean
  readonly usesTls: boolean
  /** The SASL mechanism in capitals (GSSAPI, Java's default, when `sasl.mechanism` is not set); undefined without SASL. */
  readonly mechanism: string | undefined
}

/** True when the security table applies `row` in `context` (its protocol and mechanism). */
function applied (row: SecurityKeyRow, context: SecurityContext): boolean {
  switch (row.use) {
    case 'always': return true
    case 'tls': return context.usesTls
    case 'sasl': return context.usesSasl
    case 'oauthbearer': return context.mechanism === 'OAUTHBEARER'
    case 'aws_msk_iam': return context.mechanism === 'AWS_MSK_IAM'
    case 'gssapi': return context.mechanism === 'GSSAPI'
    case 'never': return false
  }
}

/**
 * Refuses the Java class keys not applied here, and reports the other `ssl.*`/`sasl.*` keys that are
 * not applied: as ignored, or, for `sasl.mechanism` and `sasl.jaas.config` without SASL, as a problem.
 */
function checkSecurityKeys (context: SecurityContext, problems: ProblemList): void {
  const { get, key } = context
  const refused = SECURITY_TABLE.filter(row => row.refused !== undefined && !applied(row, context))
  for (const row of refused) {
    const value = get(row.key)
    if (value !== undefined) problems.add(key(row.key), value, row.refused as string)
  }
  for (const name of context.properties.keys()) {
    if (!name.startsWith('sasl.') && !name.startsWith('ssl.')) continue
    const row = securityRow(name)
    if (row !== undefined && (refused.includes(row) || applied(row, context))) continue
    if (row?.use === 'sasl') {
      problems.add(
        key(name),
        get(name),
        `is set but security.protocol is ${context.protocol}, so it would have no effect; set security.protocol=SASL_SSL (or SASL_PLAINTEXT) or remove it`
      )
    } else problems.ignore(key(name))
  }
}

/** `sasl.jaas.config` parsed and handed to `build`, or a problem saying it is `missing`. */
function withJaas (context: SecurityContext, missing: string, build: (entry: JaasEntry) => Sasl | undefined, problems: ProblemList): Sasl | undefined {
  const jaas = context.get('sasl.jaas.config')
  if (jaas === undefined) {
    problems.add(context.key('sasl.jaas.config'), undefined, missing)
    return undefined
  }
  const entry = parseJaasConfig(context.key('sasl.jaas.config'), jaas, problems)
  return entry === undefined ? undefined : build(entry)
}

function gssapiSasl (context: SecurityContext, problems: ProblemList): Sasl | undefined {
  const { get, key, properties, where } = context
  const why =
    get('sasl.mechanism') === undefined
      ? "missing while sasl.mechanism is not set either, so Java's default GSSAPI (Kerberos) applies; set sasl.mechanism to the broker's mechanism (PLAIN, SCRAM-SHA-512, ...) with its login module, or for Kerberos set it"
      : 'missing for GSSAPI; set it'
  const missing = `${why} to ${KRB5_LOGIN_MODULE} required useKeyTab=true storeKey=true keyTab="/path/to/client.keytab" principal="user@REALM";`
  return withJaas(context, missing, entry => {
    if (get('sasl.mechanism') === undefined && entry.loginModule !== KRB5_LOGIN_MODULE) {
      problems.add(
        key('sasl.mechanism'),
        undefined,
        `missing, so Java's default GSSAPI (Kerberos) applies, which does not fit ${entry.loginModule} in sasl.jaas.config; set sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI)`
      )
      return undefined
    }
    return kerberosFromProperties(properties, entry, where, problems)
  }, problems)
}

/** PLAIN and SCRAM: `username` and `password` of the mechanism's own login module. */
function userPasswordSasl (context: SecurityContext, problems: ProblemList): Sasl | undefined {
  const { get, key } = context
  const mechanismName = context.mechanism ?? ''
  const mechanism = MECHANISMS[mechanismName]
  if (mechanism === undefined) {
    problems.add(
      key('sasl.mechanism'),
      get('sasl.mechanism'),
      'is not a SASL mechanism the sidecar speaks; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI with sasl.jaas.config'
    )
    return undefined
  }
  const example = `${mechanism.module} required username="..." password="...";`
  return withJaas(context, `missing for ${mechanismName}; set it to ${example}`, entry => {
    const username = entry.options.get('username')
    const password = entry.options.get('password')
    let message: string | undefined
    if (entry.loginModule !== mechanism.module) {
      message = `uses ${entry.loginModule}, which does not fit sasl.mechanism=${mechanismName}; use ${mechanism.module}`
    } else if (entry.controlFlag !== 'required') {
      message = `control flag "${entry.controlFlag}": write "required" after the login module`
    } else if (username === undefined || password === undefined) {
      message = `has no ${username === undefined ? 'username' : 'password'} option; write ${example}`
    } else return saslCredentials(mechanism.mechanism, username, password)
    problems.add(key('sasl.jaas.config'), undefined, message)
    return undefined
  }, problems)
}

/** The SASL settings of the mechanism `sasl.mechanism` names, each from its own parser. */
function saslFromProperties (context: SecurityContext, problems: ProblemList): Sasl | undefined {
  const { properties, where } = context
  switch (context.mechanism) {
    case 'GSSAPI': return gssapiSasl(context, problems)
    case 'AWS_MSK_IAM': {
      const missing = `missing for AWS_MSK_IAM; set it to ${AWS_MSK_IAM_LOGIN_MODULE} required; (optionally with awsProfileName="..." or awsRoleArn="...")`
      return withJaas(context, missing, entry => awsMskIamFromProperties(properties, entry, where, problems), problems)
    }
    case 'OAUTHBEARER': {
      const missing = `missing for OAUTHBEARER; set it to ${OAUTH_LOGIN_MODULE} required clientId="..." clientSecret="..." scope="...";`
      return withJaas(context, missing, entry => oauthBearerFromProperties(properties, entry, where, problems), problems)
    }
    default: return userPasswordSasl(context, problems)
  }
}

function tlsProtocols (
  get: (name: string) => string | undefined,
  key: (name: string) => string,
  problems: ProblemList
): Pick<ConnectionOptions, 'minVersion' | 'maxVersion'> {
  const raw = get('ssl.enabled.protocols')
  if (raw === undefined) return {}
  const known = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const
  const wanted = raw
    .split(',')
    .map(s => s.trim())
    .filter(s => s !== '')
  const bad = wanted.filter(p => !(known as readonly string[]).includes(p))
  if (bad.length > 0 || wanted.length === 0) {
    problems.add(key('ssl.enabled.protocols'), raw, `expected a list of ${known.join(', ')}`)
    return {}
  }
  const indexes = wanted.map(p => (known as readonly string[]).indexOf(p))
  return { minVersion: known[Math.min(...indexes)], maxVersion: known[Math.max(...indexes)] }
}

/** The problem of TLS options Node's TLS refused (`createSecureContext`): which key, and what to do. */
function tlsContextProblem (context: SecurityContext, client: ConnectionOptions, error: Error, problems: ProblemList): void {
  const { get, key, properties } = context
  const reason = error.message.replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/i, '')
  if (client.pfx !== undefined && /mac verify failure/i.test(reason)) {
    // Node reports a wrong PKCS12 password as an integrity (MAC) failure of the store.
    const password = properties.get('ssl.keystore.password') ?? properties.get('ssl.key.password')
    if (password === undefined) {
      problems.add(
        key('ssl.keystore.password'),
        undefined,
        `missing; the PKCS12 keystore ${get('ssl.keystore.location')} is protected by a password: set ssl.keystore.password to it`
      )
    } else {
      problems.add(
        key(properties.has('ssl.keystore.password') ? 'ssl.keystore.password' : 'ssl.key.password'),
        password.reference,
        `does not open the PKCS12 keystore ${get('ssl.keystore.location')} (wrong password); give the password the store was exported with`
      )
    }
  } else if (client.pfx !== undefined && /unsupported/i.test(reason)) {
    // OpenSSL 3 refuses PKCS12 stores encrypted with RC2/3DES (OpenSSL 1.x and older keytool) even with the right password.
    const location = get('ssl.keystore.location') as string
    problems.add(
      key('ssl.keystore.location'),
      location,
      `is a PKCS12 store with legacy encryption (RC2/3DES), which Node cannot read; re-export it: openssl pkcs12 -legacy -in ${location} -nodes | openssl pkcs12 -export -out ${location.replace(/\.(p12|pfx)$/i, '')}-aes.p12, then point ssl.keystore.location at the new file`
    )
  } else {
    const store = get('ssl.keystore.location') === undefined ? 'ssl.keystore.key' : 'ssl.keystore.location'
    const which = client.pfx !== undefined ? 'ssl.keystore.location' : client.key !== undefined ? store : 'ssl.truststore.location'
    problems.add(key(which), get(which) ?? '(inline PEM)', `cannot be used for TLS (${reason}); check the file and ssl.keystore.password / ssl.key.password`)
  }
}

/** The TLS options of `ssl.*`: trusted certificates, the client certificate, host name check and versions, tried on Node's TLS. */
function tlsFromProperties (context: SecurityContext, problems: ProblemList): ConnectionOptions {
  const { properties, get, key } = context
  const before = problems.problems.length
  const ca = trustedCertificates(properties, get, key, problems)
  const client = clientCertificate(properties, get, key, problems)
  const algorithm = get('ssl.endpoint.identification.algorithm')
  const checkHost = algorithm === undefined || algorithm.trim().toLowerCase() === 'https'
  if (!checkHost && algorithm?.trim() !== '') {
    problems.add(key('ssl.endpoint.identification.algorithm'), algorithm, 'expected https (check the broker host name) or empty (do not)')
  }
  const options: ConnectionOptions = {
    rejectUnauthorized: true,
    ...(ca === undefined ? {} : { ca }),
    ...client,
    ...tlsProtocols(get, key, problems),
    // ssl.endpoint.identification.algorithm= (empty): the certificate is still verified, the host name is not.
    ...(checkHost ? {} : { checkServerIdentity: () => undefined }),
  }
  if (problems.problems.length === before) {
    try {
      createSecureContext(options)
    } catch (error) {
      tlsContextProblem(context, client, error as Error, problems)
    }
  }
  return tlsOptions(options)
}

/**
 * Maps Java client security keys onto TLS and SASL options: `security.protocol`, `sasl.mechanism`
 * with `sasl.jaas.config` (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with `sasl.oauthbearer.*`, AWS_MSK_IAM,
 * GSSAPI with `sasl.kerberos.service.name`; GSSAPI is also Java's default mechanism), `ssl.truststore.*` (JKS read in memory,
 * PKCS12 read with node-forge, PEM, inline certificates), `ssl.keystore.*`/`ssl.key.password` (JKS
 * converted to PEM in memory, PKCS12, PEM) and `ssl.endpoint.identification.algorithm`. Store
 * types default to JKS as in Java; the file's content decides when it disagrees. Keys that would
 * change behaviour and cannot be honoured (JCEKS stores, Java classes) are
 * problems; other unused `ssl.*`/`sasl.*`
 * keys are reported as ignored. `where` names the keys in messages (a file path or an mm2 prefix).
 * Which key is applied when, and which is refused, is the security key table (`SECURITY_TABLE`).
 */
export function securityFromProperties (properties: Properties, where: string, problems: ProblemList): ClientSecurity {
  const get = (name: string): string | undefined => properties.get(name)?.value
  const key = (name: string): string => `${where}${name}`
  const protocolRow = securityRow('security.protocol') as SecurityKeyRow
  const protocol = parseChoice(key('security.protocol'), get('security.protocol') ?? String(protocolRow.default), PROTOCOLS, problems)
  if (protocol === undefined) return {}
  const usesSasl = protocol.startsWith('SASL_')
  const mechanismRow = securityRow('sasl.mechanism') as SecurityKeyRow
  const mechanism = usesSasl ? (get('sasl.mechanism') ?? String(mechanismRow.default)).trim().toUpperCase() : undefined
  const context: SecurityContext = { properties, where, get, key, protocol, usesSasl, usesTls: protocol.endsWith('SSL'), mechanism }
  checkSecurityKeys(context, problems)
  const sasl = usesSasl ? saslFromProperties(context, problems) : undefined
  const tls = context.usesTls ? tlsFromProperties(context, problems) : undefined
  return { ...(tls === undefined ? {} : { tls }), ...(sasl === undefined ? {} : { sasl }) }
}
