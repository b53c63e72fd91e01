import { oauthBearerCredentials, type OAuthBearerCredentials } from './cluster-connection.js'
import type { JaasEntry } from './jaas.js'
import type { Properties } from './java-properties.js'
import { readKeys } from './key-table.js'
import { SECURITY_TABLE } from './security-keys.js'
import type { ProblemList } from './values.js'

/** A key of `properties` as `readKeys` takes it, named with `key` (its file or prefix). */
function entryOf (properties: Properties, key: (name: string) => string, name: string): { key: string, value: string } | undefined {
  const entry = properties.get(name)
  return entry === undefined ? undefined : { key: key(name), value: entry.value }
}

export const OAUTH_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'

/** Kafka's login callback handlers for the client credentials grant (3.1-3.x in `secured`, 3.4+ in `oauthbearer`): what the sidecar does itself. */
const OAUTH_LOGIN_CALLBACK_HANDLERS = [
  'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
  'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler',
] as const

/** The OAUTHBEARER keys `readKeys` reads (timing, header encoding, subject claim), in the order they are read. */
const OAUTH_VALUE_TABLE = SECURITY_TABLE.filter(row => row.use === 'oauthbearer' && row.readBy === undefined)

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
  const values = readKeys(OAUTH_VALUE_TABLE, { get: name => entryOf(properties, key, name), name: key }, problems)
  const scope = entry.options.get('scope') ?? get('sasl.oauthbearer.scope')
  const settings = {
    tokenEndpointUrl: tokenEndpointUrl ?? '',
    clientId: clientId ?? '',
    ...(scope === undefined ? {} : { scope }),
    extensions,
    headerUrlencode: values.boolean('sasl.oauthbearer.header.urlencode'),
    subClaimName: values.text('sasl.oauthbearer.sub.claim.name')?.trim() || 'sub',
    refreshWindowFactor: values.number('sasl.login.refresh.window.factor'),
    refreshWindowJitter: values.number('sasl.login.refresh.window.jitter'),
    refreshMinPeriodSeconds: values.number('sasl.login.refresh.min.period.seconds'),
    refreshBufferSeconds: values.number('sasl.login.refresh.buffer.seconds'),
    requestTimeoutMs: values.number('sasl.login.connect.timeout.ms') + values.number('sasl.login.read.timeout.ms'),
    retryBackoffMs: values.number('sasl.login.retry.backoff.ms'),
    retryBackoffMaxMs: values.number('sasl.login.retry.backoff.max.ms'),
    jaasKey,
  }
  if (problems.problems.length > before) return undefined
  return oauthBearerCredentials(settings, clientSecret ?? '')
}
