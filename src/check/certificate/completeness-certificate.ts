import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { UsageError } from '../cli/exit-codes.js'
import { canonicalJson } from './canonical-json.js'

/** The `format` of every certificate this version writes and reads. */
export const CERTIFICATE_FORMAT = 'kafka-mirror-sidecar/completeness-certificate/1'

/** One cluster as the certificate names it: bootstrap servers (host:port, never credentials) and its cluster id from Metadata. */
export interface CertifiedCluster {
  readonly bootstrapServers: readonly string[]
  readonly clusterId: string
}

/**
 * Source offsets `sourceFromOffset..sourceUntilOffset-1` of one partition were verified as copied;
 * their copy is the `records` data records at target offsets `targetFromOffset..targetUntilOffset-1`
 * of `targetPartition`, whose `sha256` (`targetRecordsSha256`) can be recomputed from the target alone.
 */
export interface CertifiedRange {
  readonly partition: number
  readonly sourceFromOffset: number
  readonly sourceUntilOffset: number
  readonly targetPartition: number
  readonly targetFromOffset: number
  readonly targetUntilOffset: number
  readonly records: number
  readonly sha256: string
}

export interface CertifiedTopic {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly ranges: readonly CertifiedRange[]
}

/** What is signed. */
export interface CertificatePayload {
  readonly format: typeof CERTIFICATE_FORMAT
  readonly tool: { readonly name: 'mirror-check', readonly version: string }
  /** ISO 8601 time the certificate was written. */
  readonly issuedAt: string
  /** The check that passed before the certificate was written. */
  readonly verification: 'record-level'
  readonly source: CertifiedCluster
  readonly target: CertifiedCluster
  readonly topics: readonly CertifiedTopic[]
}

/** The certificate file: payload and an Ed25519 signature over `canonicalJson(payload)`. */
export interface SignedCertificate {
  readonly payload: CertificatePayload
  readonly signature: {
    readonly algorithm: 'ed25519'
    /** SHA-256 of the signing key's public key (SPKI DER), hex: which key to check it with. */
    readonly publicKeySha256: string
    /** Base64 of the 64-byte signature. */
    readonly value: string
  }
}

function keyFile (path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`${flag} "${path}": cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a PEM file made with openssl genpkey -algorithm ed25519`)
  }
}

/** The Ed25519 private key in the PEM (PKCS8) file at `path`; a `UsageError` naming `flag` when it is not one. */
export function readPrivateKey (path: string, flag = '--signing-key'): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey(keyFile(path, flag))
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(`${flag} "${path}": not a PEM private key; make one with openssl genpkey -algorithm ed25519 -out ${path}`)
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new UsageError(`${flag} "${path}": a ${key.asymmetricKeyType ?? 'unknown'} key, expected ed25519; make one with openssl genpkey -algorithm ed25519 -out ${path}`)
  }
  return key
}

/** The Ed25519 public key in the PEM (SPKI) file at `path` (a private key file gives its public half). */
export function readPublicKey (path: string, flag = '--public-key'): KeyObject {
  let key: KeyObject
  try {
    key = createPublicKey(keyFile(path, flag))
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(`${flag} "${path}": not a PEM public key; make one with openssl pkey -in signing.pem -pubout -out ${path}`)
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new UsageError(`${flag} "${path}": a ${key.asymmetricKeyType ?? 'unknown'} key, expected ed25519`)
  }
  return key
}

function publicKeySha256 (key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex')
}

/** `payload` signed with `privateKey` (Ed25519 over the canonical JSON of the payload). */
export function signCertificate (payload: CertificatePayload, privateKey: KeyObject): SignedCertificate {
  const value = sign(null, Buffer.from(canonicalJson(payload), 'utf8'), privateKey).toString('base64')
  return { payload, signature: { algorithm: 'ed25519', publicKeySha256: publicKeySha256(privateKey), value } }
}

/** The certificate file's text: its canonical JSON on one line. Invariant: `parseCertificate(certificateText(c))` accepts it and no other text of it. */
export function certificateText (certificate: SignedCertificate): string {
  return canonicalJson(certificate) + '\n'
}

/** Why a certificate is not valid, or undefined when its signature holds under `publicKey`. */
export function signatureProblem (certificate: SignedCertificate, publicKey: KeyObject): string | undefined {
  if (certificate.signature.publicKeySha256 !== publicKeySha256(publicKey)) {
    return `signed by another key (public key SHA-256 ${certificate.signature.publicKeySha256}, the key given is ${publicKeySha256(publicKey)})`
  }
  const signature = Buffer.from(certificate.signature.value, 'base64')
  // Node's base64 decoder ignores stray characters and padding: only the one canonical spelling of the 64 bytes is accepted.
  if (signature.length !== 64 || signature.toString('base64') !== certificate.signature.value) {
    return 'the signature is not 64 bytes in base64: the certificate was altered'
  }
  const ok = verify(null, Buffer.from(canonicalJson(certificate.payload), 'utf8'), publicKey, signature)
  return ok ? undefined : 'the signature does not match the content: the certificate was altered'
}

function isRange (r: unknown): r is CertifiedRange {
  if (typeof r !== 'object' || r === null) return false
  const v = r as Record<string, unknown>
  const ints = ['partition', 'sourceFromOffset', 'sourceUntilOffset', 'targetPartition', 'targetFromOffset', 'targetUntilOffset', 'records']
  return ints.every(k => Number.isSafeInteger(v[k]) && (v[k] as number) >= 0) && typeof v.sha256 === 'string' && /^[0-9a-f]{64}$/.test(v.sha256)
}

/**
 * The certificate in `text`, or a reason why the text is not one. A text that is not exactly the
 * canonical form `certificateText` writes is refused, so any changed byte of the file, whitespace
 * included, fails the check.
 */
export function parseCertificate (text: string): SignedCertificate | { problem: string } {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { problem: 'not JSON: the file is damaged or not a certificate' }
  }
  const c = parsed as Partial<SignedCertificate>
  const p = c?.payload as Partial<CertificatePayload> | undefined
  if (
    typeof c !== 'object' || c === null || typeof p !== 'object' || p === null ||
    p.format !== CERTIFICATE_FORMAT ||
    !Array.isArray(p.topics) ||
    !p.topics.every(t => typeof t?.sourceTopic === 'string' && typeof t.targetTopic === 'string' && Array.isArray(t.ranges) && t.ranges.every(isRange)) ||
    c.signature?.algorithm !== 'ed25519' || typeof c.signature.value !== 'string' || typeof c.signature.publicKeySha256 !== 'string'
  ) {
    return { problem: `not a ${CERTIFICATE_FORMAT} certificate` }
  }
  let canonical: string
  try {
    canonical = certificateText(c as SignedCertificate)
  } catch {
    return { problem: 'holds a value no certificate holds (a number that is not a safe integer)' }
  }
  if (canonical !== text) return { problem: 'the file is not in the canonical form mirror-check writes: it was altered' }
  return c as SignedCertificate
}
