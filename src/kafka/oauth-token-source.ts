import { readFile } from 'node:fs/promises'
import type { OAuthBearerCredentials } from '../config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { redactUrl, redactUrlsIn } from '../shared/redact-url.js'
import { retry } from '../shared/retry.js'

/** An access token and when it was issued and expires (epoch ms). */
export interface OAuthToken {
  readonly value: string
  readonly issuedAtMs: number
  readonly expiresAtMs: number
}

/** What kafkajs' `oauthBearerProvider` returns: the token and the SASL extensions sent with it. */
export interface OAuthBearerToken {
  readonly value: string
  readonly extensions?: Record<string, string>
}

/**
 * kafkajs re-authenticates a connection (KIP-368) 10 s before the session the broker granted ends
 * (its `reauthenticationThreshold`); a token with less than that left would end the new session
 * at once, so it is refreshed too.
 */
const KAFKAJS_REAUTHENTICATION_MS = 10_000 + 1_000

/** The claims of a JWT (not verified: the broker verifies the signature); undefined when `token` is not a JWT. */
function jwtClaims (token: string): Record<string, unknown> | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const claims = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as unknown
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? claims as Record<string, unknown> : undefined
  } catch {
    // Not base64url JSON: an opaque token, whose lifetime comes from expires_in.
    return undefined
  }
}

/**
 * When to fetch the next token, as Kafka's `ExpiringCredentialRefreshingLogin` does: once
 * `factor + jitter * random` of the token's lifetime passed, but no sooner than the minimum period
 * and no later than the buffer before expiry; both limits are ignored when together they exceed
 * the lifetime left.
 */
export function refreshAtMs (
  token: OAuthToken,
  nowMs: number,
  settings: Pick<OAuthBearerCredentials, 'refreshWindowFactor' | 'refreshWindowJitter' | 'refreshMinPeriodSeconds' | 'refreshBufferSeconds'>,
  random = Math.random
): number {
  const lifetimeMs = token.expiresAtMs - token.issuedAtMs
  let at = token.issuedAtMs + lifetimeMs * (settings.refreshWindowFactor + settings.refreshWindowJitter * random())
  const minPeriodMs = settings.refreshMinPeriodSeconds * 1000
  const bufferMs = settings.refreshBufferSeconds * 1000
  if (minPeriodMs + bufferMs <= token.expiresAtMs - nowMs) {
    at = Math.min(Math.max(at, nowMs + minPeriodMs), token.expiresAtMs - bufferMs)
  }
  return Math.round(at)
}

function authenticationError (settings: OAuthBearerCredentials, message: string, cause?: unknown): MirrorError {
  return new MirrorError(ErrorCodes.AUTHENTICATION, `${settings.jaasKey}: ${message}`, { cause })
}

/**
 * OAuth tokens for one cluster connection, by the client credentials grant (RFC 6749 4.4) as
 * Kafka's `OAuthBearerLoginCallbackHandler` asks for them: a POST of
 * `grant_type=client_credentials` (and `scope`) with the client id and secret as HTTP Basic
 * credentials. `token()` returns the current token and fetches the next one once the refresh
 * time passed (see `refreshAtMs`); kafkajs asks at every authentication and re-authentication.
 * A failed refresh keeps the current token while it is valid and tries again after a backoff;
 * a refused secret (HTTP 4xx) is an authentication error, never retried. The token and the secret
 * are never logged.
 */
export class OAuthTokenSource {
  readonly #settings: OAuthBearerCredentials
  readonly #logger: Logger
  readonly #now: () => number
  readonly #random: () => number
  #current: OAuthToken | undefined
  #refreshAtMs = 0
  #retryAtMs = 0
  #failedRefreshes = 0
  #fetching: Promise<OAuthToken> | undefined
  /** Tokens fetched so far. */
  fetched = 0

  constructor (settings: OAuthBearerCredentials, logger: Logger, clock: { now?: () => number, random?: () => number } = {}) {
    this.#settings = settings
    this.#logger = logger
    this.#now = clock.now ?? Date.now
    this.#random = clock.random ?? Math.random
  }

  /** kafkajs' `oauthBearerProvider`. */
  async token (): Promise<OAuthBearerToken> {
    const token = await this.#validToken()
    const extensions = this.#settings.extensions
    return Object.keys(extensions).length === 0 ? { value: token.value } : { value: token.value, extensions: { ...extensions } }
  }

  async #validToken (): Promise<OAuthToken> {
    const now = this.#now()
    const current = this.#current
    if (current !== undefined && now < this.#refreshAtMs && current.expiresAtMs - now > KAFKAJS_REAUTHENTICATION_MS) return current
    const usable = current !== undefined && now < current.expiresAtMs
    if (usable && now < this.#retryAtMs) return current
    try {
      // With a valid token in hand one attempt is enough: the caller (an authentication) should not wait out a backoff.
      this.#fetching ??= this.#fetchWithRetries(usable ? 1 : undefined).finally(() => { this.#fetching = undefined })
      return await this.#fetching
    } catch (error) {
      if (!usable) throw error
      // The current token is still valid: keep it, and try again after a backoff.
      this.#failedRefreshes++
      const waitMs = Math.min(this.#settings.retryBackoffMaxMs, this.#settings.retryBackoffMs * 2 ** Math.min(this.#failedRefreshes, 20))
      this.#retryAtMs = now + waitMs
      this.#logger.warn('OAuth token refresh failed; the current token stays in use', {
        error: (error as Error).message,
        expiresInMs: current.expiresAtMs - now,
        retryInMs: waitMs,
      })
      return current
    }
  }

  async #fetchWithRetries (attempts?: number): Promise<OAuthToken> {
    const { retryBackoffMs, retryBackoffMaxMs } = this.#settings
    // Backoffs double from sasl.login.retry.backoff.ms up to sasl.login.retry.backoff.max.ms, then one more attempt.
    const maxAttempts = attempts ?? 2 + Math.ceil(Math.log2(Math.max(1, retryBackoffMaxMs / retryBackoffMs)))
    const token = await retry(async () => await this.#fetchOnce(), {
      maxAttempts,
      initialBackoffMs: retryBackoffMs,
      maxBackoffMs: retryBackoffMaxMs,
      onRetry: (error, attempt, backoffMs) => {
        this.#logger.warn('OAuth token request failed; retrying', { error: (error as Error).message, attempt, backoffMs })
      },
    })
    const now = this.#now()
    this.#current = token
    this.#refreshAtMs = refreshAtMs(token, now, this.#settings, this.#random)
    this.#failedRefreshes = 0
    this.#retryAtMs = 0
    this.fetched++
    this.#logger.debug('OAuth token fetched', { expiresInMs: token.expiresAtMs - now, refreshInMs: this.#refreshAtMs - now })
    return token
  }

  async #fetchOnce (): Promise<OAuthToken> {
    const settings = this.#settings
    const endpoint = redactUrl(settings.tokenEndpointUrl)
    if (settings.tokenEndpointUrl.startsWith('file:')) {
      const text = await readFile(new URL(settings.tokenEndpointUrl), 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw authenticationError(
          settings,
          `cannot read the token file ${endpoint} (${error.code ?? error.message}); check sasl.oauthbearer.token.endpoint.url`,
          error
        )
      })
      return this.#tokenFrom(text.trim(), undefined)
    }
    const encode = (text: string): string => settings.headerUrlencode ? encodeURIComponent(text) : text
    const basic = Buffer.from(`${encode(settings.clientId)}:${encode(settings.clientSecret)}`).toString('base64')
    const body = `grant_type=client_credentials${settings.scope === undefined ? '' : `&scope=${encodeURIComponent(settings.scope)}`}`
    let response: Response
    try {
      response = await fetch(settings.tokenEndpointUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(settings.requestTimeoutMs),
      })
    } catch (error) {
      const reason =
        (error as Error).name === 'TimeoutError'
          ? `no answer in ${settings.requestTimeoutMs} ms`
          : redactUrlsIn(String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message))
      throw new MirrorError(
        ErrorCodes.CONNECTION,
        `${settings.jaasKey}: cannot reach the token endpoint ${endpoint} (${reason}); check sasl.oauthbearer.token.endpoint.url`,
        { retriable: true, cause: error }
      )
    }
    const text = await response.text()
    if (!response.ok) {
      let reason = ''
      try {
        const answer = JSON.parse(text) as { error?: unknown, error_description?: unknown }
        reason = [answer.error, answer.error_description].filter(part => typeof part === 'string').join(': ')
      } catch {
        // Not an OAuth error document (RFC 6749 5.2): the status says enough.
      }
      const status = `HTTP ${response.status}${reason === '' ? '' : ` ${reason}`}`
      // 408, 429 and 5xx pass; any other answer refuses these credentials, and will again.
      if (response.status === 408 || response.status === 429 || response.status >= 500) {
        throw new MirrorError(ErrorCodes.CONNECTION, `${settings.jaasKey}: the token endpoint ${endpoint} answered ${status}`, {
          retriable: true,
        })
      }
      throw authenticationError(
        settings,
        `the token endpoint ${endpoint} refused the client credentials (${status}); check clientId and clientSecret (and scope)`
      )
    }
    let answer: { access_token?: unknown, expires_in?: unknown }
    try {
      answer = JSON.parse(text) as typeof answer
    } catch (error) {
      throw authenticationError(
        settings,
        `the token endpoint ${endpoint} answered with no JSON token document; check sasl.oauthbearer.token.endpoint.url`,
        error
      )
    }
    if (typeof answer.access_token !== 'string' || answer.access_token === '') {
      throw authenticationError(
        settings,
        `the token endpoint ${endpoint} answered without an access_token; check sasl.oauthbearer.token.endpoint.url`
      )
    }
    return this.#tokenFrom(answer.access_token, typeof answer.expires_in === 'number' ? answer.expires_in : undefined)
  }

  /** Lifetime from the JWT's `iat`/`exp` claims, else from `expires_in`; the subject claim must be there, as Kafka's client checks. */
  #tokenFrom (value: string, expiresInSeconds: number | undefined): OAuthToken {
    const settings = this.#settings
    const endpoint = redactUrl(settings.tokenEndpointUrl)
    const now = this.#now()
    const claims = jwtClaims(value)
    if (claims !== undefined && (typeof claims[settings.subClaimName] !== 'string' || claims[settings.subClaimName] === '')) {
      throw authenticationError(
        settings,
        `the token from ${endpoint} has no "${settings.subClaimName}" claim; set sasl.oauthbearer.sub.claim.name to the claim naming the client`
      )
    }
    const expSeconds = typeof claims?.exp === 'number' ? claims.exp : undefined
    const expiresAtMs = expSeconds !== undefined ? expSeconds * 1000 : expiresInSeconds !== undefined ? now + expiresInSeconds * 1000 : undefined
    if (expiresAtMs === undefined) {
      throw authenticationError(settings, `the token from ${endpoint} has no expiry (neither an exp claim nor expires_in)`)
    }
    if (expiresAtMs <= now) {
      throw authenticationError(
        settings,
        `the token from ${endpoint} has expired already (exp ${new Date(expiresAtMs).toISOString()}); check the clock of this host and of the identity provider`
      )
    }
    const iatSeconds = typeof claims?.iat === 'number' ? claims.iat : undefined
    const issuedAtMs = iatSeconds !== undefined && iatSeconds * 1000 < expiresAtMs ? Math.min(iatSeconds * 1000, now) : now
    return { value, issuedAtMs, expiresAtMs }
  }
}
