import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { TestContext } from 'node:test'

/** A client the test identity provider knows. */
export interface OidcClient {
  readonly id: string
  readonly secret: string
}

export interface OidcServerOptions {
  readonly clients: readonly OidcClient[]
  /** Lifetime of each access token; default 3600. */
  readonly tokenLifetimeSeconds?: number
  /** The `aud` claim of every token. */
  readonly audience: string
}

/** What the identity provider saw: one entry per token request, with the client id, scope and whether a token was issued. */
export interface TokenRequest {
  readonly clientId: string | undefined
  readonly scope: string | undefined
  readonly issued: boolean
}

/**
 * An OAuth 2 / OIDC identity provider on 127.0.0.1 for tests: `POST /token` grants client
 * credentials (HTTP Basic) with RS256 JWTs signed by a key made for this run, `GET /jwks` serves
 * the public key as Kafka's `OAuthBearerValidatorCallbackHandler` reads it. Closed when the test ends.
 */
export class OidcServer {
  readonly requests: TokenRequest[] = []
  /** Every access token issued, to check that none is ever printed. */
  readonly tokens: string[] = []
  readonly #server: Server
  readonly #options: OidcServerOptions
  readonly #kid = randomUUID()
  readonly #keys = generateKeyPairSync('rsa', { modulusLength: 2048 })
  #failures: { count: number, status: number } = { count: 0, status: 503 }

  private constructor (options: OidcServerOptions) {
    this.#options = options
    this.#server = createServer((request, response) => {
      void this.#answer(request).then(({ status, body }) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(body))
      })
    })
  }

  static async start (t: TestContext, options: OidcServerOptions): Promise<OidcServer> {
    const server = new OidcServer(options)
    await new Promise<void>(resolve => server.#server.listen(0, '127.0.0.1', resolve))
    t.after(() => new Promise<void>(resolve => { server.#server.closeAllConnections(); server.#server.close(() => resolve()) }))
    return server
  }

  get url (): string { return `http://127.0.0.1:${(this.#server.address() as { port: number }).port}` }
  get tokenUrl (): string { return `${this.url}/token` }
  get jwksUrl (): string { return `${this.url}/jwks` }
  /** The next `count` token requests are answered with `status` (an outage of the identity provider). */
  failNext (count: number, status = 503): void { this.#failures = { count, status } }

  /** A JWT with exactly `claims`, signed with this provider's key, or with another key under the same key id (`forged`): tokens a broker must refuse. */
  sign (claims: Record<string, unknown>, forged = false): string {
    return this.#jwt(claims, forged ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey : this.#keys.privateKey)
  }

  /** Tokens issued so far. */
  get issued (): number { return this.requests.filter(r => r.issued).length }

  async #answer (request: IncomingMessage): Promise<{ status: number, body: unknown }> {
    if (request.method === 'GET' && request.url === '/jwks') {
      return { status: 200, body: { keys: [{ ...this.#keys.publicKey.export({ format: 'jwk' }), kid: this.#kid, alg: 'RS256', use: 'sig' }] } }
    }
    if (request.method !== 'POST' || request.url !== '/token') return { status: 404, body: { error: 'not_found' } }
    if (this.#failures.count > 0) {
      this.#failures.count--
      this.requests.push({ clientId: undefined, scope: undefined, issued: false })
      return { status: this.#failures.status, body: { error: 'temporarily_unavailable' } }
    }
    let text = ''
    for await (const chunk of request) text += String(chunk)
    const form = new URLSearchParams(text)
    const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '')?.[1]
    const [id, secret] = basic === undefined ? [] : Buffer.from(basic, 'base64').toString('utf8').split(':')
    const scope = form.get('scope') ?? undefined
    const client = this.#options.clients.find(c => c.id === id && c.secret === secret)
    this.requests.push({ clientId: id, scope, issued: client !== undefined && form.get('grant_type') === 'client_credentials' })
    if (form.get('grant_type') !== 'client_credentials') return { status: 400, body: { error: 'unsupported_grant_type' } }
    if (client === undefined) return { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } }
    const lifetime = this.#options.tokenLifetimeSeconds ?? 3600
    const iat = Math.floor(Date.now() / 1000)
    const token = this.#jwt({
      sub: client.id,
      aud: this.#options.audience,
      iss: this.url,
      iat,
      exp: iat + lifetime,
      ...(scope === undefined ? {} : { scope }),
      jti: randomUUID(),
    })
    this.tokens.push(token)
    return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: lifetime } }
  }

  #jwt (claims: Record<string, unknown>, key: KeyObject = this.#keys.privateKey): string {
    const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
    const input = `${part({ alg: 'RS256', typ: 'JWT', kid: this.#kid })}.${part(claims)}`
    return `${input}.${createSign('RSA-SHA256').update(input).sign(key).toString('base64url')}`
  }
}
