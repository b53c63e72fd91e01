import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import type { OAuthBearerCredentials } from '../../../src/config/cluster-connection.js'
import { securityFromProperties } from '../../../src/config/client-security.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { ProblemList } from '../../../src/config/values.js'
import { OAuthTokenSource } from '../../../src/kafka/oauth-token-source.js'
import { createLogger, silentLogger } from '../../../src/shared/logger.js'
import { redactUrl, redactUrlsIn } from '../../../src/shared/redact-url.js'
import { OidcServer } from '../../helpers/oidc-server.js'

const SIDECAR_BIN = fileURLToPath(new URL('../../../src/bin/mirror-sidecar.js', import.meta.url))
const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
const USER_PASSWORD = 'url-password-4d1c'
const QUERY_SECRET = 'url-query-key-93ab'
const FRAGMENT_SECRET = 'url-fragment-7e20'
const SECRET_URL = `https://mirror:${USER_PASSWORD}@idp.example.com:8443/oauth2/token?api_key=${QUERY_SECRET}#${FRAGMENT_SECRET}`
const SECRETS = new RegExp(`${USER_PASSWORD}|${QUERY_SECRET}|${FRAGMENT_SECRET}|mirror:`)

function oauthProperties (endpoint: string, clientSecret = 'client-secret-1'): Record<string, string> {
  return {
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': 'OAUTHBEARER',
    'sasl.oauthbearer.token.endpoint.url': endpoint,
    'sasl.jaas.config': `${MODULE} required clientId="mirror" clientSecret="${clientSecret}";`,
    'sasl.login.retry.backoff.ms': '10',
    'sasl.login.retry.backoff.max.ms': '20',
  }
}

function read (entries: Record<string, string>): { problems: ProblemList, sasl: ReturnType<typeof securityFromProperties>['sasl'] } {
  const problems = new ProblemList()
  const text = Object.entries(entries).map(([k, v]) => `${k}=${v}`).join('\n') + '\n'
  return { problems, sasl: securityFromProperties(parseProperties(text), 'client.properties: ', problems).sasl }
}

test('a URL is shown as scheme, host and path: user-info, query and fragment dropped; one without them unchanged', () => {
  assert.equal(redactUrl(SECRET_URL), 'https://idp.example.com:8443/oauth2/token')
  assert.equal(redactUrl('file:///etc/mirror/token.jwt?x=1'), 'file:///etc/mirror/token.jwt')
  assert.equal(redactUrl('https://idp.example.com/token'), 'https://idp.example.com/token')
  assert.equal(redactUrl('http://collector:4318'), 'http://collector:4318')
  assert.equal(redactUrl(`not a url?key=${QUERY_SECRET}`), 'not a url')
  assert.equal(redactUrl(`user:${USER_PASSWORD}@idp/token`), 'idp/token')
  assert.equal(
    redactUrlsIn(`Request cannot be constructed from a URL that includes credentials: ${SECRET_URL} (then http://h/ok)`),
    'Request cannot be constructed from a URL that includes credentials: https://idp.example.com:8443/oauth2/token (then http://h/ok)'
  )
})

test('the token endpoint URL: JSON, inspect, config problems and log lines show it without its secrets', () => {
  const { sasl, problems } = read(oauthProperties(SECRET_URL))
  assert.deepEqual(problems.problems, [])
  const settings = sasl as OAuthBearerCredentials
  assert.equal(settings.tokenEndpointUrl, SECRET_URL, 'the client uses it whole')
  assert.match(JSON.stringify(settings), /"tokenEndpointUrl":"https:\/\/idp\.example\.com:8443\/oauth2\/token"/)
  assert.doesNotMatch(JSON.stringify(settings) + inspect(settings), SECRETS)

  const refused = read(oauthProperties(`ftp://mirror:${USER_PASSWORD}@idp.example.com/token?api_key=${QUERY_SECRET}`)).problems.problems
  assert.deepEqual(refused.map(p => [p.key, p.value]), [['client.properties: sasl.oauthbearer.token.endpoint.url', 'ftp://idp.example.com/token']])

  const lines: string[] = []
  const logger = createLogger({ write: line => { lines.push(line) } })
  logger.warn(`cannot reach ${SECRET_URL}`, { endpoint: SECRET_URL, error: new Error(`fetch ${SECRET_URL} failed`), nested: { url: SECRET_URL } })
  assert.equal(lines.length, 1)
  assert.doesNotMatch(lines[0] ?? '', SECRETS)
  assert.equal((lines[0]?.match(/https:\/\/idp\.example\.com:8443\/oauth2\/token/g) ?? []).length, 4, lines[0])
})

test('token endpoint errors name the endpoint without user-info or query', async t => {
  const oidc = await OidcServer.start(t, { clients: [{ id: 'mirror', secret: 'right' }], tokenLifetimeSeconds: 60, audience: 'kafka' })
  const messages: string[] = []
  for (const endpoint of [`${oidc.tokenUrl}?api_key=${QUERY_SECRET}#${FRAGMENT_SECRET}`, oidc.tokenUrl.replace('http://', `http://mirror:${USER_PASSWORD}@`)]) {
    const source = new OAuthTokenSource(read(oauthProperties(endpoint, 'wrong')).sasl as OAuthBearerCredentials, silentLogger)
    const error = await source.token().then(() => undefined, (e: unknown) => e)
    assert.ok(error instanceof Error, endpoint)
    messages.push(error.message)
  }
  assert.match(messages[0] ?? '', /the token endpoint http:\/\/127\.0\.0\.1:\d+\/token refused the client credentials/)
  assert.match(messages[1] ?? '', /cannot reach the token endpoint http:\/\/127\.0\.0\.1:\d+\/token \(.*http:\/\/127\.0\.0\.1:\d+\/token\)/)
  assert.doesNotMatch(messages.join('\n'), SECRETS)
})

test('--print-config and a configuration error show the token endpoint without its secrets', t => {
  const dir = mkdtempSync(join(tmpdir(), 'redact-url-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const prefixed = (alias: string, entries: Record<string, string>): string[] => Object.entries(entries).map(([k, v]) => `${alias}.${k}=${v}`)
  const mm2 = (endpoint: string): string => {
    const path = join(dir, `mm2-${Math.random().toString(36).slice(2)}.properties`)
    const lines = ['clusters=A, B', 'A.bootstrap.servers=127.0.0.1:1', 'B.bootstrap.servers=127.0.0.1:2', 'A->B.enabled=true', 'A->B.topics=t']
    writeFileSync(path, [...lines, ...prefixed('B', oauthProperties(endpoint))].join('\n') + '\n')
    return path
  }
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_')))
  const run = (args: string[]): { status: number | null, stdout: string, stderr: string } =>
    spawnSync(process.execPath, [SIDECAR_BIN, ...args], { encoding: 'utf8', timeout: 20_000, env })

  const printed = run([mm2(SECRET_URL), '--clusters', 'B', '--print-config'])
  assert.equal(printed.status, 0, printed.stderr)
  const shown = JSON.parse(printed.stdout) as { flows: Array<{ target: { sasl: { tokenEndpointUrl: string } } }> }
  assert.equal(shown.flows[0]?.target.sasl.tokenEndpointUrl, 'https://idp.example.com:8443/oauth2/token')
  assert.doesNotMatch(printed.stdout + printed.stderr, SECRETS)

  const refused = run([mm2(`gopher://mirror:${USER_PASSWORD}@idp/token?api_key=${QUERY_SECRET}`), '--clusters', 'B', '--print-config'])
  assert.equal(refused.status, 2)
  assert.match(refused.stderr, /B\.sasl\.oauthbearer\.token\.endpoint\.url "gopher:\/\/idp\/token": expected an https:\/\/ \(or http:\/\/\) token endpoint/)
  assert.doesNotMatch(refused.stdout + refused.stderr, SECRETS)
})
