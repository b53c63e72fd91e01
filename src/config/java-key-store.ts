import { X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'
import type { Certificate, KeyEntry } from 'jks-js'

type JksJs = typeof import('jks-js')
let jksJs: JksJs | undefined
/** jks-js, loaded when a JKS store is first read: most runs read none, and loading it costs every start some 40 ms of CPU. */
function jks (): JksJs {
  jksJs ??= createRequire(import.meta.url)('jks-js') as JksJs
  return jksJs
}

/** The formats a store file can hold, told apart by content. */
export type StoreFormat = 'JKS' | 'JCEKS' | 'PKCS12' | 'PEM'

const JKS_MAGIC = 0xfeedfeed
const JCEKS_MAGIC = 0xcececece

/**
 * The format of a store file from its first bytes, as Java's keystore loaders tell them apart:
 * JKS magic 0xFEEDFEED, JCEKS magic 0xCECECECE, a DER SEQUENCE for PKCS12, `-----BEGIN ` for PEM.
 * Undefined when it is none of them.
 */
export function storeFormatOf (content: Buffer): StoreFormat | undefined {
  if (content.length >= 4) {
    const magic = content.readUInt32BE(0)
    if (magic === JKS_MAGIC) return 'JKS'
    if (magic === JCEKS_MAGIC) return 'JCEKS'
  }
  if (content.toString('latin1').includes('-----BEGIN ')) return 'PEM'
  // DER SEQUENCE with a definite length (PKCS#12's PFX) or an indefinite one (BER, older Windows exports).
  if (content[0] === 0x30 && content.length > 2 && (content[1] === 0x80 || (content[1] ?? 0) >= 0x81)) return 'PKCS12'
  return undefined
}

/** A private key entry of a JKS store: the key decrypted (PKCS#8 PEM) and its certificate chain (PEM). */
export interface JksKey {
  readonly alias: string
  readonly keyPem: string
  readonly chainPem: string
}

/** What a JKS store holds, in PEM: trusted certificates and private key entries, in store order. */
export interface JksContent {
  readonly trustedCertificates: readonly string[]
  readonly keys: readonly JksKey[]
}

/** Why a JKS store could not be read: the store password, a key password, or the file itself. */
export type JksFailure = 'store-password' | 'key-password' | 'unreadable'

export type JksResult = { readonly ok: true, readonly content: JksContent } | { readonly ok: false, readonly failure: JksFailure }

function certificatePem (certificate: Certificate): string {
  return new X509Certificate(certificate.value).toString()
}

function isKeyEntry (entry: unknown): entry is KeyEntry {
  return typeof entry === 'object' && entry !== null && 'protectedPrivateKey' in entry
}

/**
 * Reads a JKS store in memory with jks-js (the same format and checks as Java's `JavaKeyStore`).
 * With a store password the store's integrity hash is checked, as Java does; without one it is
 * not (Java reads a truststore without a password the same way). Private keys are decrypted with
 * `keyPassword`, or the store password when it is undefined (Kafka's `ssl.key.password`
 * default). No password or key material appears in the result's failure.
 */
export function readJks (content: Buffer, storePassword: string | undefined, keyPassword: string | undefined): JksResult {
  let entries: unknown[]
  try {
    entries = jks().parseJks(content, storePassword ?? '')
  } catch (error) {
    return { ok: false, failure: /password verification failed/i.test((error as Error).message) ? 'store-password' : 'unreadable' }
  }
  const trustedCertificates: string[] = []
  const keys: JksKey[] = []
  try {
    for (const entry of entries) {
      if (isKeyEntry(entry)) {
        const chain = entry.chain.map(certificatePem)
        let keyPem: string
        try {
          keyPem = jks().decrypt(entry.protectedPrivateKey, keyPassword ?? storePassword ?? '')
        } catch {
          // jks-js throws "Cannot recover key" when the key's own check fails: the key password is wrong.
          return { ok: false, failure: 'key-password' }
        }
        keys.push({ alias: entry.alias, keyPem, chainPem: chain.join('') })
      } else {
        trustedCertificates.push(certificatePem((entry as { cert: Certificate }).cert))
      }
    }
  } catch {
    // A certificate that X509Certificate cannot parse: the store is damaged or holds non-X.509 entries.
    return { ok: false, failure: 'unreadable' }
  }
  return { ok: true, content: { trustedCertificates, keys } }
}
