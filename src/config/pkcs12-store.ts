import { X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'

type NodeForge = typeof import('node-forge')
let nodeForge: NodeForge | undefined
/** node-forge, loaded when a PKCS12 truststore is first read: most runs read none. */
function forge (): NodeForge {
  nodeForge ??= createRequire(import.meta.url)('node-forge') as NodeForge
  return nodeForge
}

/** Why a PKCS12 store's certificates could not be read: its password, or the file itself. */
export type Pkcs12Failure = 'password' | 'unreadable'

export type Pkcs12Certificates = { readonly ok: true, readonly certificates: readonly string[] } | { readonly ok: false, readonly failure: Pkcs12Failure }

/** node-forge's words for a MAC that the password does not reproduce (lib/pkcs12.js). */
const WRONG_PASSWORD = /MAC could not be verified/

/**
 * The certificates (PEM) of a PKCS#12 store, read in JavaScript: Node's tls takes a PKCS#12 file
 * only as `pfx` with a private key, never as trusted certificates, and the `openssl` command is
 * not in slim container images. node-forge checks the store's MAC with the password and decrypts
 * its bags, legacy ones too (RC2-40 and 3DES, which OpenSSL 3 reads only with its legacy
 * provider). Each certificate goes through Node's X509Certificate, so what is returned parses.
 */
export function readPkcs12Certificates (content: Buffer, password: string | undefined): Pkcs12Certificates {
  const { asn1, pkcs12, pki, util } = forge()
  let bags
  try {
    const store = pkcs12.pkcs12FromAsn1(asn1.fromDer(util.createBuffer(content.toString('binary'))), true, password ?? '')
    const certBag = pki.oids.certBag as string
    bags = store.getBags({ bagType: certBag })[certBag] ?? []
  } catch (error) {
    // node-forge throws plain Errors for every reason; only the MAC's message means the password.
    return { ok: false, failure: WRONG_PASSWORD.test(String((error as Error).message)) ? 'password' : 'unreadable' }
  }
  const certificates: string[] = []
  for (const bag of bags) {
    // node-forge parses RSA certificates only and leaves others (EC, Ed25519) as ASN.1.
    const der: typeof bag.asn1 | undefined = bag.cert === null || bag.cert === undefined ? bag.asn1 : pki.certificateToAsn1(bag.cert)
    if (der === undefined) continue
    try {
      certificates.push(new X509Certificate(Buffer.from(asn1.toDer(der).getBytes(), 'binary')).toString())
    } catch {
      // A certificate bag that does not parse as X.509: the store is damaged.
      return { ok: false, failure: 'unreadable' }
    }
  }
  return { ok: true, certificates }
}
