import assert from 'node:assert/strict'
import { inspect } from 'node:util'
import { test } from 'node:test'
import type { OAuthBearerCredentials } from '../../../src/config/cluster-connection.js'
import { securityFromProperties } from '../../../src/config/client-security.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { ProblemList } from '../../../src/config/values.js'
import { OAuthTokenSource, refreshAtMs } from '../../../src/kafka/oauth-token-source.js'
import { MirrorError } from '../../../src/shared/errors.js'
import { silentLogger } from '../../../src/shared/logger.js'
import { OidcServer } from '../../helpers/oidc-server.js'

const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
const SECRET = 'unit-oidc-secret-83f1'

function read (entries: Record<string, string>): { problems: ProblemList, sasl: ReturnType<typeof securityFromProperties>['sasl'] } {
  const problems = new ProblemList()
  const text = Object.entries({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER', ...entries }).map(([k, v]) => `${k}=${v}`).join('\n') + '\n'
  return { problems, sasl: securityFromProperties(parseProperties(text), 'client.properties: ', problems).sasl }
}

const JAVA_KEYS = {
  'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
  'sasl.oauthbearer.token.endpoint.url': 'https://idp.example.com/oauth2/token',
  'sasl.jaas.config': `${MODULE} required clientId="mirror" clientSecret="${SECRET}" scope="kafka api://x" extension_logicalCluster="lkc-1" extension_identityPoolId="pool-2";`,
}

test('OAUTHBEARER from Java client keys: endpoint, client id, secret, scope, extensions, refresh timing; the secret is hidden', () => {
  const { problems, sasl } = read({
    ...JAVA_KEYS,
    'sasl.login.refresh.window.factor': '0.9',
    'sasl.login.refresh.buffer.seconds': '30',
    'sasl.login.retry.backoff.max.ms': '2000',
    'sasl.oauthbearer.expected.audience': 'x',
  })
  assert.deepEqual(problems.problems, [])
  assert.deepEqual(problems.ignored, ['client.properties: sasl.oauthbearer.expected.audience'])
  const oauth = sasl as OAuthBearerCredentials
  assert.equal(oauth.mechanism, 'oauthbearer')
  assert.deepEqual([oauth.tokenEndpointUrl, oauth.clientId, oauth.clientSecret, oauth.scope], ['https://idp.example.com/oauth2/token', 'mirror', SECRET, 'kafka api://x'])
  assert.deepEqual(oauth.extensions, { logicalCluster: 'lkc-1', identityPoolId: 'pool-2' })
  assert.deepEqual(
    [
      oauth.refreshWindowFactor,
      oauth.refreshWindowJitter,
      oauth.refreshMinPeriodSeconds,
      oauth.refreshBufferSeconds,
      oauth.retryBackoffMs,
      oauth.retryBackoffMaxMs,
    ],
    [0.9, 0.05, 60, 30, 100, 2000]
  )
  assert.doesNotMatch(JSON.stringify(sasl) + inspect(sasl, { depth: 5 }), new RegExp(SECRET))
  // The older class name (Kafka 3.1-3.3) is taken too; the KIP-1139 keys stand in for the JAAS options.
  const keys = read({
    'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler',
    'sasl.oauthbearer.token.endpoint.url': 'https://idp/t',
    'sasl.oauthbearer.client.credentials.client.id': 'c',
    'sasl.oauthbearer.client.credentials.client.secret': 's',
    'sasl.jaas.config': `${MODULE} required ;`
  })
  assert.deepEqual(keys.problems.problems, [])
  assert.deepEqual([(keys.sasl as OAuthBearerCredentials).clientId, (keys.sasl as OAuthBearerCredentials).clientSecret], ['c', 's'])
})

test('OAUTHBEARER mistakes: each names its key, none repeats the secret', () => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ ...JAVA_KEYS, 'sasl.oauthbearer.token.endpoint.url': '' }, 'sasl.oauthbearer.token.endpoint.url', /not a URL/],
    [{ 'sasl.jaas.config': JAVA_KEYS['sasl.jaas.config'] }, 'sasl.oauthbearer.token.endpoint.url', /^missing for OAUTHBEARER/],
    [{ ...JAVA_KEYS, 'sasl.jaas.config': `${MODULE} required clientId="mirror";` }, 'sasl.jaas.config', /has no clientSecret option/],
    [{ ...JAVA_KEYS, 'sasl.login.callback.handler.class': 'com.example.MyHandler' }, 'sasl.login.callback.handler.class', /Java classes cannot be loaded here/],
    [{ ...JAVA_KEYS, 'sasl.login.refresh.window.factor': '0.2' }, 'sasl.login.refresh.window.factor', /expected a number from 0\.5 to 1/],
    [
      { ...JAVA_KEYS, 'sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${SECRET}";` },
      'sasl.jaas.config',
      /does not fit sasl\.mechanism=OAUTHBEARER/,
    ],
    [
      { ...JAVA_KEYS, 'sasl.jaas.config': `${MODULE} required clientId="m" clientSecret="${SECRET}" extension_auth="x";` },
      'sasl.jaas.config',
      /extension name is letters only and not "auth"/,
    ],
    [{ ...JAVA_KEYS, 'sasl.jaas.config': `${MODULE} required unsecuredLoginStringClaim_sub="admin";` }, 'sasl.jaas.config', /unsecuredLogin\* options/],
  ]
  for (const [entries, key, message] of cases) {
    const { problems, sasl } = read(entries)
    assert.equal(sasl, undefined)
    assert.ok(problems.problems.some(p => p.key === `client.properties: ${key}` && message.test(p.message)), `${key}: ${JSON.stringify(problems.problems)}`)
    assert.doesNotMatch(JSON.stringify(problems.problems), new RegExp(SECRET))
  }
})

test('refresh time follows Kafka: factor + jitter of the lifetime, within the minimum period and the buffer unless they exceed the lifetime left', () => {
  const defaults = { refreshWindowFactor: 0.8, refreshWindowJitter: 0.05, refreshMinPeriodSeconds: 60, refreshBufferSeconds: 300 }
  const short = { value: 't', issuedAtMs: 0, expiresAtMs: 15_000 }
  assert.equal(refreshAtMs(short, 0, defaults, () => 0), 12_000)
  assert.equal(refreshAtMs(short, 0, defaults, () => 1), 12_750)
  const hour = { value: 't', issuedAtMs: 0, expiresAtMs: 3_600_000 }
  assert.equal(refreshAtMs(hour, 0, defaults, () => 0), 2_880_000)
  assert.equal(refreshAtMs(hour, 0, { ...defaults, refreshWindowFactor: 1, refreshWindowJitter: 0 }, () => 0), 3_300_000, 'the buffer before expiry is kept')
  const fiveMinutes = { value: 't', issuedAtMs: 0, expiresAtMs: 400_000 }
  assert.equal(refreshAtMs(fiveMinutes, 0, { ...defaults, refreshWindowFactor: 0.5, refreshWindowJitter: 0, refreshBufferSeconds: 0 }, () => 0), 200_000)
  assert.equal(
    refreshAtMs(
      { value: 't', issuedAtMs: 0, expiresAtMs: 100_000 },
      0,
      { ...defaults, refreshWindowFactor: 0.5, refreshWindowJitter: 0, refreshBufferSeconds: 0 },
      () => 0
    ),
    60_000,
    'no sooner than the minimum period'
  )
})

test(
  'the token source fetches with client credentials, reuses the token, refreshes it at the refresh time, retries an outage and refuses a wrong secret with one line',
  async t => {
    const oidc = await OidcServer.start(t, { clients: [{ id: 'mirror', secret: SECRET }], tokenLifetimeSeconds: 60, audience: 'kafka' })
    const settings = (secret: string): OAuthBearerCredentials => read({
      ...JAVA_KEYS,
      'sasl.oauthbearer.token.endpoint.url': oidc.tokenUrl,
      'sasl.jaas.config': `${MODULE} required clientId="mirror" clientSecret="${secret}" scope="kafka" extension_tag="a";`,
      'sasl.login.retry.backoff.ms': '10',
      'sasl.login.retry.backoff.max.ms': '200'
    }).sasl as OAuthBearerCredentials
    let now = Date.now()
    const source = new OAuthTokenSource(settings(SECRET), silentLogger, { now: () => now, random: () => 0 })
    const first = await source.token()
    assert.deepEqual(first.extensions, { tag: 'a' })
    assert.equal(first.value, oidc.tokens[0])
    now += 40_000
    assert.equal((await source.token()).value, first.value, 'reused before the refresh time (48 s of 60)')
    assert.equal(oidc.issued, 1)
    now += 9_000
    const second = await source.token()
    assert.notEqual(second.value, first.value, 'refreshed after 80 % of the lifetime')
    assert.equal(oidc.issued, 2)
    assert.deepEqual(oidc.requests.map(r => r.scope), ['kafka', 'kafka'])

    // The token's lifetime counts from its iat (real time), so at 49 s its refresh time (48 s) passed already.
    // An outage of the identity provider while the token is still valid: the current token stays in use.
    oidc.failNext(100)
    assert.equal((await source.token()).value, second.value)
    // It passes: the next fetch after the backoff gets a new token.
    oidc.failNext(0)
    now += 1_000
    assert.notEqual((await source.token()).value, second.value)

    // A first fetch retries 503 answers (sasl.login.retry.backoff.*) and succeeds.
    oidc.failNext(2)
    const fresh = new OAuthTokenSource(settings(SECRET), silentLogger)
    assert.ok((await fresh.token()).value.length > 0)

    const wrong = new OAuthTokenSource(settings('wrong-secret-9'), silentLogger)
    const error = await wrong.token().then(() => undefined, (e: unknown) => e)
    assert.ok(error instanceof MirrorError)
    assert.equal(error.retriable, false)
    assert.equal(error.code, 'MIRROR_AUTHENTICATION')
    assert.match(
      error.message,
      /^client\.properties: sasl\.jaas\.config: the token endpoint http:\/\/127\.0\.0\.1:\d+\/token refused the client credentials \(HTTP 401 invalid_client: client authentication failed\); check clientId and clientSecret/
    )
    assert.doesNotMatch(error.message, /wrong-secret-9|unit-oidc-secret/)
  }
)
