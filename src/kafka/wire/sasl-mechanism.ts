import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'

/** One SaslAuthenticate round trip (KIP-152): our token to the broker, its answer's bytes back. */
export type SaslExchange = (token: Buffer) => Promise<Buffer>

/** The broker a connection authenticates to, as the connection was opened (AWS_MSK_IAM signs the host, GSSAPI names its service principal by it). */
export interface SaslBroker {
  readonly host: string
  readonly port: number
}

/**
 * The client side of one SASL mechanism, run after SaslHandshake named it: once per connection, and again at
 * each re-authentication (KIP-368). One mechanism serves any number of connections. `authenticate` resolves
 * when the broker accepted the client, or rejects with an AUTHENTICATION MirrorError whose message names the
 * mechanism and user, never a secret.
 */
export interface SaslMechanism {
  /** The mechanism's name as SaslHandshake sends it (`PLAIN`, `SCRAM-SHA-512`). */
  readonly name: string
  authenticate (exchange: SaslExchange, broker: SaslBroker): Promise<void>
}

/** KIP-368: the share of a session's lifetime after which Kafka's `SaslClientAuthenticator` renews it, 85 % plus a random 0-10 %. */
const REAUTHENTICATION_FACTOR = 0.85
const REAUTHENTICATION_JITTER = 0.10

/**
 * When to renew a session the broker granted for `sessionLifetimeMs`, in milliseconds from the end of the
 * authentication: at 85-95 % of it, chosen at random so that many connections authenticated together do not
 * renew together; the rest leaves room for the round trips and for clocks apart (KIP-368).
 */
export function reauthenticationDelayMs (sessionLifetimeMs: number, random = Math.random): number {
  return Math.floor(sessionLifetimeMs * (REAUTHENTICATION_FACTOR + REAUTHENTICATION_JITTER * random()))
}

/** SASL PLAIN (RFC 4616): one token, `\0user\0password`, which the broker accepts or refuses. */
export function plainMechanism (username: string, password: string): SaslMechanism {
  return {
    name: 'PLAIN',
    authenticate: async exchange => {
      await exchange(Buffer.from(`\u0000${username}\u0000${password}`, 'utf8'))
    },
  }
}

const pbkdf2Async = promisify(pbkdf2)

/** The hash functions of Kafka's SCRAM mechanisms (KIP-84). */
const SCRAM_HASHES = { 'SCRAM-SHA-256': { hash: 'sha256', bytes: 32 }, 'SCRAM-SHA-512': { hash: 'sha512', bytes: 64 } } as const
/** Kafka's ScramMechanism refuses fewer iterations; a server asking fewer is not a Kafka broker's SCRAM. */
const MIN_SCRAM_ITERATIONS = 4096

/** RFC 5802 saslname: `=` and `,` escaped. */
function saslName (username: string): string {
  return username.replace(/=/g, '=3D').replace(/,/g, '=2C')
}

function attributes (message: string): Map<string, string> {
  return new Map(message.split(',').map(part => [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]))
}

/**
 * SCRAM-SHA-256 or SCRAM-SHA-512 (RFC 5802, RFC 7677; Kafka KIP-84): client-first, server-first, client-final
 * with the proof, then the server's signature, checked, so that a server that does not know the password
 * is not taken for the broker. `nonce` is for tests (RFC 7677's example); by default 24 random bytes.
 */
export function scramMechanism (
  name: keyof typeof SCRAM_HASHES, username: string, password: string, fixedNonce?: string
): SaslMechanism {
  const { hash, bytes } = SCRAM_HASHES[name]
  const hmac = (key: Buffer, text: string): Buffer => createHmac(hash, key).update(text, 'utf8').digest()
  const refused = (what: string): MirrorError => new MirrorError(ErrorCodes.AUTHENTICATION, `${name} for user "${username}": ${what}`)
  return {
    name,
    authenticate: async exchange => {
      // RFC 5802: a client nonce is never used twice, so each authentication (a reconnect, a KIP-368 re-authentication) draws its own.
      const nonce = fixedNonce ?? randomBytes(24).toString('base64')
      const clientFirstBare = `n=${saslName(username)},r=${nonce}`
      const serverFirst = (await exchange(Buffer.from(`n,,${clientFirstBare}`, 'utf8'))).toString('utf8')
      const first = attributes(serverFirst)
      const serverNonce = first.get('r') ?? ''
      const salt = Buffer.from(first.get('s') ?? '', 'base64')
      const iterations = Number(first.get('i'))
      if (first.has('e')) throw refused(`the broker refused: ${first.get('e')}`)
      if (!serverNonce.startsWith(nonce) || serverNonce.length === nonce.length) throw refused('the broker\'s nonce does not extend ours')
      if (!Number.isInteger(iterations) || iterations < MIN_SCRAM_ITERATIONS) {
        throw refused(`the broker asks ${first.get('i')} iterations, fewer than ${MIN_SCRAM_ITERATIONS}`)
      }
      const saltedPassword = await pbkdf2Async(Buffer.from(password.normalize('NFKC'), 'utf8'), salt, iterations, bytes, hash)
      const clientKey = hmac(saltedPassword, 'Client Key')
      const storedKey = createHash(hash).update(clientKey).digest()
      const withoutProof = `c=${Buffer.from('n,,').toString('base64')},r=${serverNonce}`
      const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`
      const signature = hmac(storedKey, authMessage)
      const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i]!))
      const serverFinal = attributes((await exchange(Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8'))).toString('utf8'))
      if (serverFinal.has('e')) throw refused(`the broker refused: ${serverFinal.get('e')}`)
      const expected = hmac(hmac(saltedPassword, 'Server Key'), authMessage)
      const verifier = Buffer.from(serverFinal.get('v') ?? '', 'base64')
      if (verifier.length !== expected.length || !timingSafeEqual(verifier, expected)) {
        throw refused('the broker\'s signature does not prove it knows the password')
      }
    },
  }
}

/** RFC 7628's separator of the OAUTHBEARER client message's key-value pairs (Kafka's `OAuthBearerClientInitialResponse`). */
const KVSEP = '\u0001'

/** An OAuth access token and the SASL extensions sent with it (KIP-342). */
export interface OAuthBearerTokenWithExtensions {
  readonly value: string
  readonly extensions?: Readonly<Record<string, string>>
}

/**
 * SASL OAUTHBEARER (RFC 7628, Kafka KIP-255): one client message, `n,,` then `auth=Bearer <token>` and the
 * extensions as `key=value`, each followed by ^A, then a closing ^A, as Kafka's `OAuthBearerClientInitialResponse`
 * writes it. `token` is asked at every authentication (and re-authentication, KIP-368); it gives the current
 * token or fetches a new one. A broker that refuses the token answers with a JSON error document; the client
 * ends the exchange with a lone ^A and the broker answers that with the failure (RFC 7628 3.2.3). The token is
 * never in an error.
 */
export function oauthBearerMechanism (token: () => Promise<OAuthBearerTokenWithExtensions>): SaslMechanism {
  return {
    name: 'OAUTHBEARER',
    authenticate: async exchange => {
      const { value, extensions = {} } = await token()
      const pairs = [`auth=Bearer ${value}`, ...Object.entries(extensions).map(([key, extension]) => `${key}=${extension}`)]
      const answer = await exchange(Buffer.from(`n,,${KVSEP}${pairs.map(pair => `${pair}${KVSEP}`).join('')}${KVSEP}`, 'utf8'))
      if (answer.length === 0) return
      let status = 'an error'
      try {
        status = `status "${String((JSON.parse(answer.toString('utf8')) as { status?: unknown }).status)}"`
      } catch {
        // Not RFC 7628's JSON error document: the broker's own failure message follows and says enough.
      }
      const refusal = `the broker refused the OAuth token with ${status}`
      try {
        await exchange(Buffer.from(KVSEP, 'utf8'))
      } catch (error) {
        if (!(error instanceof MirrorError)) throw error
        throw new MirrorError(error.code, `${error.message} (${refusal})`, { retriable: error.retriable, cause: error })
      }
      throw new MirrorError(ErrorCodes.AUTHENTICATION, `OAUTHBEARER: ${refusal}, then accepted the client's ^A`)
    },
  }
}
