import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createSecureContext, type ConnectionOptions } from 'node:tls'
import { saslCredentials, tlsOptions, type OAuthBearerCredentials, type SaslCredentials, type SaslMechanism } from './cluster-connection.js'
import type { Properties } from './java-properties.js'
import { parseJaasConfig } from './jaas.js'
import { OAUTH_KEYS, OAUTH_LOGIN_MODULE, oauthBearerFromProperties } from './oauth-bearer-config.js'
import { readJks, storeFormatOf, type JksContent, type StoreFormat } from './java-key-store.js'
import type { ProblemList } from './values.js'

/** True for keys `securityFromProperties` reads (applies, refuses or reports as ignored). */
export function isSecurityKey (key: string): boolean {
  return key === 'security.protocol' || key.startsWith('ssl.') || key.startsWith('sasl.')
}
/** Keys read by `securityFromProperties`, besides every `ssl.*` and `sasl.*` key. */
export const SECURITY_KEYS = ['security.protocol'] as const

export interface ClientSecurity {
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials | OAuthBearerCredentials
}

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const
const MECHANISMS: Record<string, { mechanism: SaslMechanism, module: string }> = {
  PLAIN: { mechanism: 'plain', module: 'org.apache.kafka.common.security.plain.PlainLoginModule' },
  'SCRAM-SHA-256': { mechanism: 'scram-sha-256', module: 'org.apache.kafka.common.security.scram.ScramLoginModule' },
  'SCRAM-SHA-512': { mechanism: 'scram-sha-512', module: 'org.apache.kafka.common.security.scram.ScramLoginModule' },
}
/** Keys that would load Java code or change how authentication works: refused rather than ignored. */
const JAVA_CLASS_KEYS = ['sasl.client.callback.handler.class', 'sasl.login.callback.handler.class', 'sasl.login.class', 'ssl.engine.factory.class']
/** Keys read when TLS is on; any other `ssl.*` key is reported as ignored. */
const APPLIED_SSL_KEYS = new Set(['ssl.truststore.location', 'ssl.truststore.type', 'ssl.truststore.password', 'ssl.truststore.certificates',
  'ssl.keystore.location', 'ssl.keystore.type', 'ssl.keystore.password', 'ssl.keystore.key', 'ssl.keystore.certificate.chain', 'ssl.key.password',
  'ssl.endpoint.identification.algorithm', 'ssl.enabled.protocols', 'ssl.protocol'])
const APPLIED_SASL_KEYS = new Set(['sasl.mechanism', 'sasl.jaas.config'])

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

function pemBlocks (text: string, kind: 'certificate' | 'key'): string[] {
  return [...text.matchAll(PEM_BLOCK)].filter(m => kind === 'certificate' ? m[1] === 'CERTIFICATE' : /PRIVATE KEY$/.test(m[1] ?? '')).map(m => m[0])
}

/** Store types Java's clients accept in `ssl.truststore.type` / `ssl.keystore.type`. */
const STORE_TYPES: readonly StoreFormat[] = ['JKS', 'PKCS12', 'PEM', 'JCEKS']

/** Reads a store file; `undefined` after recording a problem. */
function readStore (key: string, path: string, problems: ProblemList): Buffer | undefined {
  try {
    return readFileSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    problems.add(key, path, `${code === 'ENOENT' ? 'file not found' : `cannot read it (${code ?? 'error'})`}; give the path of a readable store file`)
    return undefined
  }
}

/**
 * The store's format. The configured type defaults to JKS, as in Java's clients; when the content
 * is recognisably another format (JKS, JCEKS, PKCS12, PEM) it is read as what it is, as Java's
 * dual-format keystores do. Content of no known format is read as the configured type, if one is
 * given, so the message says what that type lacks.
 */
function storeType (typeKey: string, configured: string | undefined, locationKey: string, path: string | undefined, content: Buffer | undefined, problems: ProblemList): StoreFormat | undefined {
  const upper = (configured ?? 'JKS').trim().toUpperCase()
  const type = STORE_TYPES.find(t => t === upper)
  if (type === undefined) {
    problems.add(typeKey, configured, `expected ${STORE_TYPES.join(', ')} (default JKS)`)
    return undefined
  }
  if (content === undefined) return type
  const format = storeFormatOf(content)
  // Content of no known format: read as the configured type, which says what is wrong with it.
  if (format === undefined && configured !== undefined) return type
  if (format === undefined) {
    problems.add(locationKey, path, 'is not a key store (neither JKS, JCEKS, PKCS12 nor PEM); give the path of the store file')
    return undefined
  }
  return format
}

function refuseJceks (key: string, path: string, problems: ProblemList): void {
  problems.add(key, path, `is a JCEKS store, which cannot be read here; convert it: keytool -importkeystore -srcstoretype JCEKS -srckeystore ${path} -deststoretype PKCS12 -destkeystore ${path.replace(/\.(jceks|jks|ks)$/i, '')}.p12, then point ${key.replace(/^.*?(ssl\.)/, '$1')} at the .p12 file`)
}

/** A JKS store read with its passwords; `undefined` after recording one problem naming the key to fix. */
function jksContent (role: 'truststore' | 'keystore', key: (name: string) => string, properties: Properties, content: Buffer, problems: ProblemList): JksContent | undefined {
  const location = properties.get(`ssl.${role}.location`)?.value as string
  const storePasswordKey = `ssl.${role}.password`
  const storePassword = properties.get(storePasswordKey)
  const keyPassword = role === 'keystore' ? properties.get('ssl.key.password') : undefined
  if (role === 'keystore' && storePassword === undefined) {
    // Kafka refuses a keystore without a password too ("SSL key store is specified, but key store password is not specified").
    problems.add(key(storePasswordKey), undefined, `missing; the JKS keystore ${location} is protected by a password: set ${storePasswordKey} to it`)
    return undefined
  }
  const result = readJks(content, storePassword?.value, keyPassword?.value)
  if (result.ok) return result.content
  if (result.failure === 'store-password') {
    problems.add(key(storePasswordKey), storePassword?.reference, `does not open the JKS ${role} ${location} (wrong password); give the password the store was made with`)
  } else if (result.failure === 'key-password') {
    const which = keyPassword === undefined ? storePasswordKey : 'ssl.key.password'
    problems.add(key(which), (keyPassword ?? storePassword)?.reference, `does not decrypt the private key in the JKS keystore ${location} (wrong password)${keyPassword === undefined ? '; the key has its own password: set ssl.key.password to it' : '; give the key\'s password (keytool -keypass)'}`)
  } else {
    problems.add(key(`ssl.${role}.location`), location, `cannot be read as a JKS store (damaged or not a keystore); check the file with keytool -list -keystore ${location}`)
  }
  return undefined
}

/** The certificates of a PKCS#12 truststore, through the openssl command (Node's tls cannot read PKCS#12 trust stores). */
function pkcs12Certificates (key: string, path: string, password: string | undefined, problems: ProblemList): string | undefined {
  const attempt = (legacy: boolean): string => execFileSync('openssl', ['pkcs12', '-in', path, '-nokeys', '-passin', 'env:MIRROR_TRUSTSTORE_PASSWORD', ...(legacy ? ['-legacy'] : [])], {
    env: { ...process.env, MIRROR_TRUSTSTORE_PASSWORD: password ?? '' }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 10_000,
  })
  for (const legacy of [false, true]) {
    try {
      const certificates = pemBlocks(attempt(legacy), 'certificate')
      if (certificates.length > 0) return certificates.join('\n')
    } catch { /* try the legacy algorithms next, then report below */ }
  }
  problems.add(key, path, `cannot read this PKCS12 truststore${password === undefined ? ' (no ssl.truststore.password given)' : ' (wrong ssl.truststore.password?)'}; convert it to PEM: openssl pkcs12 -in ${path} -nokeys -out ca.pem, then set ssl.truststore.type=PEM and ssl.truststore.location=ca.pem`)
  return undefined
}

function checkCertificates (key: string, shown: string, pem: string, problems: ProblemList): string | undefined {
  const blocks = pemBlocks(pem, 'certificate')
  if (blocks.length === 0) {
    problems.add(key, shown, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA certificates that signed the brokers\' certificates')
    return undefined
  }
  for (const block of blocks) {
    try {
      void new X509Certificate(block)
    } catch {
      problems.add(key, shown, 'holds a certificate that cannot be parsed; check the PEM file')
      return undefined
    }
  }
  return blocks.join('\n')
}

/** `ca` from `ssl.truststore.*`; undefined means the system's default CAs. */
function trustedCertificates (properties: Properties, get: (name: string) => string | undefined, key: (name: string) => string, problems: ProblemList): string | undefined {
  const location = get('ssl.truststore.location')
  const inline = get('ssl.truststore.certificates')
  if (location !== undefined && inline !== undefined) {
    problems.add(key('ssl.truststore.certificates'), '(inline PEM)', 'conflicts with ssl.truststore.location; give one of them')
    return undefined
  }
  if (inline !== undefined) {
    const type = storeType(key('ssl.truststore.type'), get('ssl.truststore.type') ?? 'PEM', key('ssl.truststore.certificates'), undefined, undefined, problems)
    if (type !== undefined && type !== 'PEM') problems.add(key('ssl.truststore.type'), get('ssl.truststore.type'), 'must be PEM with ssl.truststore.certificates')
    return checkCertificates(key('ssl.truststore.certificates'), '(inline PEM)', inline, problems)
  }
  if (location === undefined) return undefined
  const content = readStore(key('ssl.truststore.location'), location, problems)
  const type = storeType(key('ssl.truststore.type'), get('ssl.truststore.type'), key('ssl.truststore.location'), location, content, problems)
  if (content === undefined || type === undefined) return undefined
  if (type === 'JCEKS') { refuseJceks(key('ssl.truststore.location'), location, problems); return undefined }
  if (type === 'JKS') {
    const jks = jksContent('truststore', key, properties, content, problems)
    if (jks === undefined) return undefined
    // Java trusts the certificate entries and the first certificate of each key entry (KeyStores.getTrustedCerts).
    const trusted = [...jks.trustedCertificates, ...jks.keys.map(k => pemBlocks(k.chainPem, 'certificate')[0] ?? '')].filter(c => c !== '')
    if (trusted.length === 0) problems.add(key('ssl.truststore.location'), location, 'is a JKS store with no certificate; import the CA: keytool -importcert -file ca.pem -keystore ' + location)
    return trusted.length === 0 ? undefined : trusted.join('')
  }
  if (type === 'PKCS12') return pkcs12Certificates(key('ssl.truststore.location'), location, get('ssl.truststore.password'), problems)
  return checkCertificates(key('ssl.truststore.location'), location, content.toString('utf8'), problems)
}

/** `key`/`cert`/`passphrase` or `pfx`/`passphrase` from `ssl.keystore.*` and `ssl.key.password`, for mutual TLS. */
function clientCertificate (properties: Properties, get: (name: string) => string | undefined, key: (name: string) => string, problems: ProblemList): ConnectionOptions {
  const location = get('ssl.keystore.location')
  const inlineKey = get('ssl.keystore.key')
  const inlineChain = get('ssl.keystore.certificate.chain')
  const keyPassword = get('ssl.key.password')
  if (location !== undefined && (inlineKey !== undefined || inlineChain !== undefined)) {
    problems.add(key('ssl.keystore.location'), location, 'conflicts with ssl.keystore.key / ssl.keystore.certificate.chain; give the store file or the inline PEM, not both')
    return {}
  }
  if (inlineKey !== undefined || inlineChain !== undefined) {
    if (inlineKey === undefined || inlineChain === undefined) {
      problems.add(key(inlineKey === undefined ? 'ssl.keystore.key' : 'ssl.keystore.certificate.chain'), undefined, 'missing; inline PEM client certificates need both ssl.keystore.key and ssl.keystore.certificate.chain')
      return {}
    }
    const keys = pemBlocks(inlineKey, 'key')
    const chain = pemBlocks(inlineChain, 'certificate')
    if (keys.length !== 1) problems.add(key('ssl.keystore.key'), undefined, 'expected one PEM private key (-----BEGIN PRIVATE KEY----- or ENCRYPTED PRIVATE KEY)')
    if (chain.length === 0) problems.add(key('ssl.keystore.certificate.chain'), '(inline PEM)', 'expected the client certificate chain in PEM')
    return { key: keys[0], cert: chain.join('\n'), ...(keyPassword === undefined ? {} : { passphrase: keyPassword }) }
  }
  if (location === undefined) return {}
  const content = readStore(key('ssl.keystore.location'), location, problems)
  const type = storeType(key('ssl.keystore.type'), get('ssl.keystore.type'), key('ssl.keystore.location'), location, content, problems)
  if (content === undefined || type === undefined) return {}
  if (type === 'JCEKS') { refuseJceks(key('ssl.keystore.location'), location, problems); return {} }
  if (type === 'JKS') {
    const jks = jksContent('keystore', key, properties, content, problems)
    if (jks === undefined) return {}
    // Kafka names no alias: Java's key manager offers the server a key it accepts; the first key entry is used here.
    const entry = jks.keys[0]
    if (entry === undefined) {
      problems.add(key('ssl.keystore.location'), location, 'is a JKS store with no private key entry; a keystore holds the client key and its certificate chain (keytool -genkeypair or -importkeystore)')
      return {}
    }
    return { key: entry.keyPem, cert: entry.chainPem }
  }
  if (type === 'PKCS12') {
    const storePassword = get('ssl.keystore.password')
    if (keyPassword !== undefined && storePassword !== undefined && keyPassword !== storePassword) {
      problems.add(key('ssl.key.password'), keyPassword, 'differs from ssl.keystore.password, which Node cannot honour for PKCS12 stores; re-export the store with one password')
      return {}
    }
    return { pfx: content, ...(storePassword ?? keyPassword) === undefined ? {} : { passphrase: storePassword ?? keyPassword } }
  }
  const text = content.toString('utf8')
  const keys = pemBlocks(text, 'key')
  const chain = pemBlocks(text, 'certificate')
  if (keys.length !== 1 || chain.length === 0) {
    problems.add(key('ssl.keystore.location'), location, 'a PEM keystore must hold one private key and its certificate chain')
    return {}
  }
  return { key: keys[0], cert: chain.join('\n'), ...(keyPassword === undefined ? {} : { passphrase: keyPassword }) }
}

function tlsProtocols (get: (name: string) => string | undefined, key: (name: string) => string, problems: ProblemList): Pick<ConnectionOptions, 'minVersion' | 'maxVersion'> {
  const raw = get('ssl.enabled.protocols')
  if (raw === undefined) return {}
  const known = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const
  const wanted = raw.split(',').map(s => s.trim()).filter(s => s !== '')
  const bad = wanted.filter(p => !(known as readonly string[]).includes(p))
  if (bad.length > 0 || wanted.length === 0) {
    problems.add(key('ssl.enabled.protocols'), raw, `expected a list of ${known.join(', ')}`)
    return {}
  }
  const indexes = wanted.map(p => (known as readonly string[]).indexOf(p))
  return { minVersion: known[Math.min(...indexes)], maxVersion: known[Math.max(...indexes)] }
}

/**
 * Maps Java client security keys onto TLS and SASL options: `security.protocol`, `sasl.mechanism`
 * with `sasl.jaas.config` (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with `sasl.oauthbearer.*`), `ssl.truststore.*` (JKS read in memory,
 * PKCS12 through openssl, PEM, inline certificates), `ssl.keystore.*`/`ssl.key.password` (JKS
 * converted to PEM in memory, PKCS12, PEM) and `ssl.endpoint.identification.algorithm`. Store
 * types default to JKS as in Java; the file's content decides when it disagrees. Keys that would
 * change behaviour and cannot be honoured (JCEKS stores, GSSAPI, Java classes) are
 * problems; other unused `ssl.*`/`sasl.*`
 * keys are reported as ignored. `where` names the keys in messages (a file path or an mm2 prefix).
 */
export function securityFromProperties (properties: Properties, where: string, problems: ProblemList): ClientSecurity {
  const get = (name: string): string | undefined => properties.get(name)?.value
  const key = (name: string): string => `${where}${name}`
  const rawProtocol = get('security.protocol') ?? 'PLAINTEXT'
  const protocol = PROTOCOLS.find(p => p === rawProtocol.trim().toUpperCase())
  if (protocol === undefined) {
    problems.add(key('security.protocol'), rawProtocol, `expected one of ${PROTOCOLS.join(', ')}`)
    return {}
  }
  const usesSasl = protocol.startsWith('SASL_')
  const usesTls = protocol.endsWith('SSL')
  const usesOAuth = usesSasl && get('sasl.mechanism')?.trim().toUpperCase() === 'OAUTHBEARER'
  // With OAUTHBEARER the login callback handler names the client credentials grant: oauthBearerFromProperties checks it.
  const classKeys = usesOAuth ? JAVA_CLASS_KEYS.filter(name => name !== 'sasl.login.callback.handler.class') : JAVA_CLASS_KEYS
  for (const name of classKeys) {
    const value = get(name)
    if (value !== undefined) problems.add(key(name), value, 'Java classes cannot be loaded here; remove the key (supported: PLAIN, SCRAM and OAUTHBEARER with sasl.jaas.config, JKS/PKCS12/PEM stores)')
  }
  const appliedSasl = (name: string): boolean => APPLIED_SASL_KEYS.has(name) || (usesOAuth && (OAUTH_KEYS as readonly string[]).includes(name))
  for (const name of properties.keys()) {
    if (name.startsWith('sasl.') && !classKeys.includes(name) && !(usesSasl && appliedSasl(name))) {
      if (!usesSasl && APPLIED_SASL_KEYS.has(name)) problems.add(key(name), get(name), `is set but security.protocol is ${protocol}, so it would have no effect; set security.protocol=SASL_SSL (or SASL_PLAINTEXT) or remove it`)
      else problems.ignore(key(name))
    }
    if (name.startsWith('ssl.') && !JAVA_CLASS_KEYS.includes(name) && !(usesTls && APPLIED_SSL_KEYS.has(name))) problems.ignore(key(name))
  }

  let sasl: SaslCredentials | OAuthBearerCredentials | undefined
  if (usesOAuth) {
    const jaas = get('sasl.jaas.config')
    if (jaas === undefined) {
      problems.add(key('sasl.jaas.config'), undefined, `missing for OAUTHBEARER; set it to ${OAUTH_LOGIN_MODULE} required clientId="..." clientSecret="..." scope="...";`)
    } else {
      const entry = parseJaasConfig(key('sasl.jaas.config'), jaas, problems)
      if (entry !== undefined) sasl = oauthBearerFromProperties(properties, entry, where, problems)
    }
  } else if (usesSasl) {
    const rawMechanism = get('sasl.mechanism')
    const mechanismName = (rawMechanism ?? 'GSSAPI').trim().toUpperCase()
    const mechanism = MECHANISMS[mechanismName]
    const jaas = get('sasl.jaas.config')
    if (mechanism === undefined) {
      const why = mechanismName === 'GSSAPI'
        ? `${rawMechanism === undefined ? 'missing, so Java\'s default GSSAPI (Kerberos) applies, which' : 'GSSAPI (Kerberos)'} is not supported here`
        : 'is not a SASL mechanism the sidecar speaks'
      problems.add(key('sasl.mechanism'), rawMechanism, `${why}; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER with sasl.jaas.config`)
    } else if (jaas === undefined) {
      problems.add(key('sasl.jaas.config'), undefined, `missing for ${mechanismName}; set it to ${mechanism.module} required username="..." password="...";`)
    } else {
      const entry = parseJaasConfig(key('sasl.jaas.config'), jaas, problems)
      if (entry !== undefined) {
        const username = entry.options.get('username')
        const password = entry.options.get('password')
        if (entry.loginModule !== mechanism.module) {
          problems.add(key('sasl.jaas.config'), undefined, `uses ${entry.loginModule}, which does not fit sasl.mechanism=${mechanismName}; use ${mechanism.module}`)
        } else if (entry.controlFlag !== 'required') {
          problems.add(key('sasl.jaas.config'), undefined, `control flag "${entry.controlFlag}": write "required" after the login module`)
        } else if (username === undefined || password === undefined) {
          problems.add(key('sasl.jaas.config'), undefined, `has no ${username === undefined ? 'username' : 'password'} option; write ${mechanism.module} required username="..." password="...";`)
        } else {
          sasl = saslCredentials(mechanism.mechanism, username, password)
        }
      }
    }
  }

  let tls: ConnectionOptions | undefined
  if (usesTls) {
    const before = problems.problems.length
    const ca = trustedCertificates(properties, get, key, problems)
    const client = clientCertificate(properties, get, key, problems)
    const algorithm = get('ssl.endpoint.identification.algorithm')
    const checkHost = algorithm === undefined || algorithm.trim().toLowerCase() === 'https'
    if (!checkHost && algorithm?.trim() !== '') problems.add(key('ssl.endpoint.identification.algorithm'), algorithm, 'expected https (check the broker host name) or empty (do not)')
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
        const reason = (error as Error).message.replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/i, '')
        if (client.pfx !== undefined && /mac verify failure/i.test(reason)) {
          // Node reports a wrong PKCS12 password as an integrity (MAC) failure of the store.
          const password = properties.get('ssl.keystore.password') ?? properties.get('ssl.key.password')
          if (password === undefined) problems.add(key('ssl.keystore.password'), undefined, `missing; the PKCS12 keystore ${get('ssl.keystore.location')} is protected by a password: set ssl.keystore.password to it`)
          else problems.add(key(properties.has('ssl.keystore.password') ? 'ssl.keystore.password' : 'ssl.key.password'), password.reference, `does not open the PKCS12 keystore ${get('ssl.keystore.location')} (wrong password); give the password the store was exported with`)
        } else if (client.pfx !== undefined && /unsupported/i.test(reason)) {
          // OpenSSL 3 refuses PKCS12 stores encrypted with RC2/3DES (OpenSSL 1.x and older keytool) even with the right password.
          const location = get('ssl.keystore.location') as string
          problems.add(key('ssl.keystore.location'), location, `is a PKCS12 store with legacy encryption (RC2/3DES), which Node cannot read; re-export it: openssl pkcs12 -legacy -in ${location} -nodes | openssl pkcs12 -export -out ${location.replace(/\.(p12|pfx)$/i, '')}-aes.p12, then point ssl.keystore.location at the new file`)
        } else {
          const which = client.pfx !== undefined ? 'ssl.keystore.location' : client.key !== undefined ? (get('ssl.keystore.location') === undefined ? 'ssl.keystore.key' : 'ssl.keystore.location') : 'ssl.truststore.location'
          problems.add(key(which), get(which) ?? '(inline PEM)', `cannot be used for TLS (${reason}); check the file and ssl.keystore.password / ssl.key.password`)
        }
      }
    }
    tls = tlsOptions(options)
  }
  return { ...(tls === undefined ? {} : { tls }), ...(sasl === undefined ? {} : { sasl }) }
}
