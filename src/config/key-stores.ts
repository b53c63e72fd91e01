import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from 'node:tls'
import { readJks, storeFormatOf, type JksContent, type StoreFormat } from './java-key-store.js'
import type { Properties } from './java-properties.js'
import { readPkcs12Certificates } from './pkcs12-store.js'
import type { ProblemList } from './values.js'

/*
 * The TLS material of a Java client configuration: `ssl.truststore.*` and `ssl.keystore.*` /
 * `ssl.key.password` read into Node's TLS options (PEM text, or a PKCS12 store as `pfx`).
 */

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
function storeType (
  typeKey: string,
  configured: string | undefined,
  locationKey: string,
  path: string | undefined,
  content: Buffer | undefined,
  problems: ProblemList
): StoreFormat | undefined {
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
  problems.add(
    key,
    path,
    `is a JCEKS store, which cannot be read here; convert it: keytool -importkeystore -srcstoretype JCEKS -srckeystore ${path} -deststoretype PKCS12 -destkeystore ${path.replace(/\.(jceks|jks|ks)$/i, '')}.p12, then point ${key.replace(/^.*?(ssl\.)/, '$1')} at the .p12 file`
  )
}

/** A JKS store read with its passwords; `undefined` after recording one problem naming the key to fix. */
function jksContent (
  role: 'truststore' | 'keystore',
  key: (name: string) => string,
  properties: Properties,
  content: Buffer,
  problems: ProblemList
): JksContent | undefined {
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
    problems.add(
      key(storePasswordKey),
      storePassword?.reference,
      `does not open the JKS ${role} ${location} (wrong password); give the password the store was made with`
    )
  } else if (result.failure === 'key-password') {
    const which = keyPassword === undefined ? storePasswordKey : 'ssl.key.password'
    problems.add(
      key(which),
      (keyPassword ?? storePassword)?.reference,
      `does not decrypt the private key in the JKS keystore ${location} (wrong password)${keyPassword === undefined ? '; the key has its own password: set ssl.key.password to it' : "; give the key's password (keytool -keypass)"}`
    )
  } else {
    problems.add(
      key(`ssl.${role}.location`),
      location,
      `cannot be read as a JKS store (damaged or not a keystore); check the file with keytool -list -keystore ${location}`
    )
  }
  return undefined
}

/** The certificates of a PKCS#12 truststore; `undefined` after recording one problem naming the key to fix. */
function pkcs12Certificates (properties: Properties, key: (name: string) => string, content: Buffer, problems: ProblemList): string | undefined {
  const location = properties.get('ssl.truststore.location')?.value as string
  const password = properties.get('ssl.truststore.password')
  const result = readPkcs12Certificates(content, password?.value)
  if (result.ok && result.certificates.length > 0) return result.certificates.join('')
  if (result.ok) {
    problems.add(
      key('ssl.truststore.location'),
      location,
      `is a PKCS12 store with no certificate; import the CA: keytool -importcert -file ca.pem -storetype PKCS12 -keystore ${location}`
    )
  } else if (result.failure === 'password') {
    problems.add(
      key('ssl.truststore.password'),
      password?.reference,
      password === undefined
        ? `missing; the PKCS12 truststore ${location} is protected by a password: set ssl.truststore.password to it`
        : `does not open the PKCS12 truststore ${location} (wrong password); give the password the store was exported with`
    )
  } else {
    problems.add(
      key('ssl.truststore.location'),
      location,
      `cannot be read as a PKCS12 store (damaged or not a keystore); check the file with keytool -list -storetype PKCS12 -keystore ${location}`
    )
  }
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
export function trustedCertificates (
  properties: Properties,
  get: (name: string) => string | undefined,
  key: (name: string) => string,
  problems: ProblemList
): string | undefined {
  const location = get('ssl.truststore.location')
  const inline = get('ssl.truststore.certificates')
  if (location !== undefined && inline !== undefined) {
    problems.add(key('ssl.truststore.certificates'), '(inline PEM)', 'conflicts with ssl.truststore.location; give one of them')
    return undefined
  }
  if (inline !== undefined) {
    const type = storeType(key('ssl.truststore.type'), get('ssl.truststore.type') ?? 'PEM', key('ssl.truststore.certificates'), undefined, undefined, problems)
    if (type !== undefined && type !== 'PEM') {
      problems.add(key('ssl.truststore.type'), get('ssl.truststore.type'), 'must be PEM with ssl.truststore.certificates')
    }
    return checkCertificates(key('ssl.truststore.certificates'), '(inline PEM)', inline, problems)
  }
  if (location === undefined) return undefined
  const content = readStore(key('ssl.truststore.location'), location, problems)
  const type = storeType(key('ssl.truststore.type'), get('ssl.truststore.type'), key('ssl.truststore.location'), location, content, problems)
  if (content === undefined || type === undefined) return undefined
  if (type === 'JCEKS') {
    refuseJceks(key('ssl.truststore.location'), location, problems)
    return undefined
  }
  if (type === 'JKS') {
    const jks = jksContent('truststore', key, properties, content, problems)
    if (jks === undefined) return undefined
    // Java trusts the certificate entries and the first certificate of each key entry (KeyStores.getTrustedCerts).
    const trusted = [...jks.trustedCertificates, ...jks.keys.map(k => pemBlocks(k.chainPem, 'certificate')[0] ?? '')].filter(c => c !== '')
    if (trusted.length === 0) {
      problems.add(
        key('ssl.truststore.location'),
        location,
        'is a JKS store with no certificate; import the CA: keytool -importcert -file ca.pem -keystore ' + location
      )
    }
    return trusted.length === 0 ? undefined : trusted.join('')
  }
  if (type === 'PKCS12') return pkcs12Certificates(properties, key, content, problems)
  return checkCertificates(key('ssl.truststore.location'), location, content.toString('utf8'), problems)
}

/** `key`/`cert`/`passphrase` or `pfx`/`passphrase` from `ssl.keystore.*` and `ssl.key.password`, for mutual TLS. */
export function clientCertificate (
  properties: Properties,
  get: (name: string) => string | undefined,
  key: (name: string) => string,
  problems: ProblemList
): ConnectionOptions {
  const location = get('ssl.keystore.location')
  const inlineKey = get('ssl.keystore.key')
  const inlineChain = get('ssl.keystore.certificate.chain')
  const keyPassword = get('ssl.key.password')
  if (location !== undefined && (inlineKey !== undefined || inlineChain !== undefined)) {
    problems.add(
      key('ssl.keystore.location'),
      location,
      'conflicts with ssl.keystore.key / ssl.keystore.certificate.chain; give the store file or the inline PEM, not both'
    )
    return {}
  }
  if (inlineKey !== undefined || inlineChain !== undefined) {
    if (inlineKey === undefined || inlineChain === undefined) {
      problems.add(
        key(inlineKey === undefined ? 'ssl.keystore.key' : 'ssl.keystore.certificate.chain'),
        undefined,
        'missing; inline PEM client certificates need both ssl.keystore.key and ssl.keystore.certificate.chain'
      )
      return {}
    }
    const keys = pemBlocks(inlineKey, 'key')
    const chain = pemBlocks(inlineChain, 'certificate')
    if (keys.length !== 1) {
      problems.add(key('ssl.keystore.key'), undefined, 'expected one PEM private key (-----BEGIN PRIVATE KEY----- or ENCRYPTED PRIVATE KEY)')
    }
    if (chain.length === 0) problems.add(key('ssl.keystore.certificate.chain'), '(inline PEM)', 'expected the client certificate chain in PEM')
    return { key: keys[0], cert: chain.join('\n'), ...(keyPassword === undefined ? {} : { passphrase: keyPassword }) }
  }
  if (location === undefined) return {}
  const content = readStore(key('ssl.keystore.location'), location, problems)
  const type = storeType(key('ssl.keystore.type'), get('ssl.keystore.type'), key('ssl.keystore.location'), location, content, problems)
  if (content === undefined || type === undefined) return {}
  if (type === 'JCEKS') {
    refuseJceks(key('ssl.keystore.location'), location, problems)
    return {}
  }
  if (type === 'JKS') {
    const jks = jksContent('keystore', key, properties, content, problems)
    if (jks === undefined) return {}
    // Kafka names no alias: Java's key manager offers the server a key it accepts; the first key entry is used here.
    const entry = jks.keys[0]
    if (entry === undefined) {
      problems.add(
        key('ssl.keystore.location'),
        location,
        'is a JKS store with no private key entry; a keystore holds the client key and its certificate chain (keytool -genkeypair or -importkeystore)'
      )
      return {}
    }
    return { key: entry.keyPem, cert: entry.chainPem }
  }
  if (type === 'PKCS12') {
    const storePassword = get('ssl.keystore.password')
    if (keyPassword !== undefined && storePassword !== undefined && keyPassword !== storePassword) {
      problems.add(
        key('ssl.key.password'),
        keyPassword,
        'differs from ssl.keystore.password, which Node cannot honour for PKCS12 stores; re-export the store with one password'
      )
      return {}
    }
    return { pfx: content, ...((storePassword ?? keyPassword) === undefined ? {} : { passphrase: storePassword ?? keyPassword }) }
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
