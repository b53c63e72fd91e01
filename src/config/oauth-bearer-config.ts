import { oauthBearerCredentials, type OAuthBearerCredentials } from './cluster-connection.js'
import type { JaasEntry } from './jaas.js'
import type { Properties } from './java-properties.js'
import { parseBoolean, parseInteger, type ProblemList } from './values.js'

export const OAUTH_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'

/** Kafka's login callback handlers for the client credentials grant (3.1-3.x in `secured`, 3.4+ in `oauthbearer`): what the sidecar does itself. */
const OAUTH_LOGIN_CALLBACK_HANDLERS = [
  'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
  'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler',
] as const

/** `sasl.*` keys the OAUTHBEARER client reads, besides `sasl.mechanism` and `sasl.jaas.config`. */
export const OAUTH_KEYS = [
  'sasl.login.callback.handler.class', 'sasl.oauthbearer.token.endpoint.url', 'sasl.oauthbearer.scope', 'sasl.oauthbearer.client.credentials.client.id',
  'sasl.oauthbearer.client.credentials.client.secret', 'sasl.oauthbearer.header.urlencode', 'sasl.oauthbearer.sub.claim.name',
  'sasl.login.refresh.window.factor', 'sasl.login.refresh.window.jitter', 'sasl.login.refresh.min.period.seconds', 'sasl.login.refresh.buffer.seconds',
  'sasl.login.connect.timeout.ms', 'sasl.login.read.timeout.ms', 'sasl.login.retry.backoff.ms', 'sasl.login.retry.backoff.max.ms',
] as const

function parseFraction (key: string, raw: string | undefined, min: number, max: number, fallback: number, problems: ProblemList): number {
  if (raw === undefined) return fallback
  const value = Number(raw.trim())
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    problems.add(key, raw, `expected a number from ${min} to ${max} (default ${fallback})`)
    return fallback
  }
  return value
}

function checkEndpointUrl (key: string, raw: string | undefined, problems: ProblemList): string | undefined {
  if (raw === undefined) {
    problems.add(key, undefined, 'missing for OAUTHBEARER; set it to the OAuth token endpoint of your identity provider (https://.../token), as with Kafka\'s OAuthBearerLoginCallbackHandler')
    return undefined
  }
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    problems.add(key, raw, 'not a URL; give the token endpoint, e.g. https://idp.example.com/oauth2/token')
    return undefined
  }
  if (!['http:', 'https:', 'file:'].includes(url.protocol)) {
    problems.add(key, raw, 'expected an https:// (or http://) token endpoint, or a file: URL of a file holding a token')
    return undefined
  }
  return url.href
}

/**
 * The OAUTHBEARER settings of a Java client configuration (KIP-768): the token endpoint from
 * `sasl.oauthbearer.token.endpoint.url`, client id, secret and scope from the JAAS options
 * `clientId`, `clientSecret`, `scope` (or the `sasl.oauthbearer.client.credentials.*` and
 * `sasl.oauthbearer.scope` keys), SASL extensions from `extension_NAME` options, refresh and
 * retry timing from `sasl.login.*`. Problems never repeat the secret.
 */
export function oauthBearerFromProperties (properties: Properties, entry: JaasEntry, where: string, problems: ProblemList): OAuthBearerCredentials | undefined {
  const get = (name: string): string | undefined => properties.get(name)?.value
  const key = (name: string): string => `${where}${name}`
  const jaasKey = key('sasl.jaas.config')
  const before = problems.problems.length
  if (entry.loginModule !== OAUTH_LOGIN_MODULE) {
    problems.add(
      jaasKey,
      undefined,
      `uses ${entry.loginModule}, which does not fit sasl.mechanism=OAUTHBEARER; use ${OAUTH_LOGIN_MODULE} required clientId="..." clientSecret="...";`
    )
    return undefined
  }
  if (entry.controlFlag !== 'required') problems.add(jaasKey, undefined, `control flag "${entry.controlFlag}": write "required" after the login module`)
  const handler = get('sasl.login.callback.handler.class')
  if (handler !== undefined && !(OAUTH_LOGIN_CALLBACK_HANDLERS as readonly string[]).includes(handler.trim())) {
    problems.add(
      key('sasl.login.callback.handler.class'),
      handler,
      `Java classes cannot be loaded here; use ${OAUTH_LOGIN_CALLBACK_HANDLERS[0]} (the client credentials grant) or remove the key`
    )
  }
  if ([...entry.options.keys()].some(name => name.startsWith('unsecuredLogin'))) {
    problems.add(
      jaasKey,
      undefined,
      'has unsecuredLogin* options (unsigned test tokens), which are not supported; use clientId and clientSecret with sasl.oauthbearer.token.endpoint.url'
    )
  }
  const tokenEndpointUrl = checkEndpointUrl(key('sasl.oauthbearer.token.endpoint.url'), get('sasl.oauthbearer.token.endpoint.url'), problems)
  const isFile = tokenEndpointUrl?.startsWith('file:') === true
  const clientId = entry.options.get('clientId') ?? get('sasl.oauthbearer.client.credentials.client.id')
  const clientSecret = entry.options.get('clientSecret') ?? get('sasl.oauthbearer.client.credentials.client.secret')
  if (!isFile && (clientId === undefined || clientSecret === undefined)) {
    problems.add(
      jaasKey,
      undefined,
      `has no ${clientId === undefined ? 'clientId' : 'clientSecret'} option; write ${OAUTH_LOGIN_MODULE} required clientId="..." clientSecret="..." scope="...";`
    )
  }
  const extensions: Record<string, string> = {}
  for (const [name, value] of entry.options) {
    if (!name.startsWith('extension_')) continue
    const extension = name.slice('extension_'.length)
    // RFC 7628 3.1: key = 1*(ALPHA); Kafka also refuses the reserved name "auth".
    if (!/^[A-Za-z]+$/.test(extension) || extension === 'auth') {
      problems.add(jaasKey, undefined, `option ${name}: an extension name is letters only and not "auth"`)
    } else extensions[extension] = value
  }
  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number =>
    parseInteger(key(name), get(name), { min, max }, problems) ?? fallback
  const connectTimeoutMs = int('sasl.login.connect.timeout.ms', 10_000, 1)
  const readTimeoutMs = int('sasl.login.read.timeout.ms', 10_000, 1)
  const settings = {
    tokenEndpointUrl: tokenEndpointUrl ?? '',
    clientId: clientId ?? '',
    ...((entry.options.get('scope') ?? get('sasl.oauthbearer.scope')) === undefined
      ? {}
      : { scope: entry.options.get('scope') ?? get('sasl.oauthbearer.scope') }),
    extensions,
    headerUrlencode: parseBoolean(key('sasl.oauthbearer.header.urlencode'), get('sasl.oauthbearer.header.urlencode'), problems) ?? false,
    subClaimName: get('sasl.oauthbearer.sub.claim.name')?.trim() || 'sub',
    refreshWindowFactor: parseFraction(key('sasl.login.refresh.window.factor'), get('sasl.login.refresh.window.factor'), 0.5, 1, 0.8, problems),
    refreshWindowJitter: parseFraction(key('sasl.login.refresh.window.jitter'), get('sasl.login.refresh.window.jitter'), 0, 0.25, 0.05, problems),
    refreshMinPeriodSeconds: int('sasl.login.refresh.min.period.seconds', 60, 0, 900),
    refreshBufferSeconds: int('sasl.login.refresh.buffer.seconds', 300, 0, 3600),
    requestTimeoutMs: connectTimeoutMs + readTimeoutMs,
    retryBackoffMs: int('sasl.login.retry.backoff.ms', 100, 1),
    retryBackoffMaxMs: int('sasl.login.retry.backoff.max.ms', 10_000, 1),
    jaasKey,
  }
  if (problems.problems.length > before) return undefined
  return oauthBearerCredentials(settings, clientSecret ?? '')
}
