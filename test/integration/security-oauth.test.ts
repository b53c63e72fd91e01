import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { test } from 'node:test'
import { auditKeys, produce, readAll, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { mm2File } from '../helpers/mm2-file.js'
import { OidcServer } from '../helpers/oidc-server.js'
import { startOAuthCluster } from '../helpers/secured-cluster.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { spawnSidecarArgs, waitMirroring, writeProperties, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const SECRET = 'oidc-client-secret-5e7a91'
const WRONG_SECRET = 'not-the-oidc-secret-c2'
const TOKEN_LIFETIME_SECONDS = 15
const AUDIENCE = 'kafka-mirror-test'
const FAST = { 'refresh.topics.interval.seconds': '1', 'offset.flush.interval.ms': '500', 'replication.factor': '1' }
const SIDECAR_FLAGS = ['--metrics.port', '0', '--metrics.host', '127.0.0.1']
const LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'

test(
  'OAUTHBEARER with client credentials: an mm2.properties reads and writes through a broker validating RS256 tokens from a local OIDC provider, past several 15 s token lifetimes; a wrong secret exits 2 before anything is copied; no secret or token in any output',
  { timeout: 240_000 },
  async t => {
    const oidc = await OidcServer.start(t, {
      clients: [{ id: 'mirror-sidecar', secret: SECRET }],
      tokenLifetimeSeconds: TOKEN_LIFETIME_SECONDS,
      audience: AUDIENCE,
    })
    const { cluster, oauthBootstrap } = await startOAuthCluster(t, oidc.jwksUrl, AUDIENCE)
    const client = (secret: string): Record<string, string> => ({
      'bootstrap.servers': oauthBootstrap,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'OAUTHBEARER',
      'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
      'sasl.oauthbearer.token.endpoint.url': oidc.tokenUrl,
      'sasl.jaas.config': `${LOGIN_MODULE} required clientId="mirror-sidecar" clientSecret="${secret}" scope="kafka.mirror" extension_traceTag="jks";`,
    })
    const prefixed = (alias: string, entries: Record<string, string>): Record<string, string> =>
      Object.fromEntries(Object.entries(entries).map(([k, v]) => [`${alias}.${k}`, v]))
    // Source A and target B are the same cluster, both through the OAUTHBEARER listener: the copy lands in A.<topic>.
    const topic = uniqueName('oauth')
    await withAdmin(cluster, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
    const group = uniqueName('oauth-mm2')
    const mm2 = (secretB: string): string =>
      mm2File({
        clusters: 'A, B',
        ...prefixed('A', client(SECRET)),
        ...prefixed('B', client(secretB)),
        'A->B.enabled': 'true',
        'A->B.topics': topic,
        'A.consumer.group.id': group,
        ...FAST,
      })
    const runs: SidecarProcess[] = []
    const outputs: string[] = []
    const batch = (from: number): Array<{ partition: number, key: string, value: string }> =>
      Array.from({ length: 30 }, (_, i) => ({ partition: (from + i) % 2, key: `k${from + i}`, value: `v${from + i}` }))

    // A wrong client secret for B: one line naming the JAAS key and the endpoint, exit 2, nothing copied.
    await produce(cluster, topic, batch(0))
    const refused = spawnSidecarArgs(t, [mm2(WRONG_SECRET), '--clusters', 'B', ...SIDECAR_FLAGS])
    runs.push(refused)
    assert.equal(await refused.exited, 2, refused.stderr())
    const lastLine = refused.stderr().trim().split('\n').at(-1) ?? ''
    t.diagnostic(lastLine)
    assert.match(
      lastLine,
      /^mirror-sidecar: .*B\.sasl\.jaas\.config: the token endpoint http:\/\/127\.0\.0\.1:\d+\/token refused the client credentials \(HTTP 401 invalid_client: client authentication failed\); check clientId and clientSecret/
    )
    assert.equal(await totalRecords(cluster, `A.${topic}`).catch(() => 0n), 0n, 'nothing copied')

    const sidecar = spawnSidecarArgs(t, [mm2(SECRET), '--clusters', 'B', ...SIDECAR_FLAGS])
    runs.push(sidecar)
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(cluster, `A.${topic}`).catch(() => 0n)) === 30n, {
      timeoutMs: 60_000,
      message: 'the first 30 records copied',
    })
    const issuedAtStart = oidc.issued
    const firstExpiryMs = (JSON.parse(Buffer.from(oidc.tokens[0]?.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }).exp * 1000
    // Past the first token's expiry: every session re-authenticated with a fresh token, or the broker closed it.
    await waitUntil(() => Date.now() > firstExpiryMs + 2_000 && oidc.issued >= issuedAtStart + 2, {
      timeoutMs: 4 * TOKEN_LIFETIME_SECONDS * 1000,
      intervalMs: 500,
      message: "tokens refreshed while mirroring, past the first one's expiry",
    })
    await produce(cluster, topic, batch(30))
    await waitUntil(async () => (await totalRecords(cluster, `A.${topic}`)) === 60n, {
      timeoutMs: 60_000,
      message: 'the next 30 records copied after the first tokens expired',
    })
    outputs.push(await scrape(await sidecarHttpPort(sidecar)))
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-3000))
    assert.deepEqual(auditKeys(await readAll(cluster, `A.${topic}`), 60), { missing: 0, duplicates: 0 })
    assert.ok(oidc.issued >= 3, `tokens issued: ${oidc.issued}`)
    assert.ok(
      oidc.requests.every(r => r.scope === 'kafka.mirror'),
      'scope sent with every grant'
    )
    assert.doesNotMatch(sidecar.stderr(), /"level":"error"/)

    // mirror-check through the same keys as --*-command-config.
    const properties = writeProperties(client(SECRET), 'oauth.properties')
    const verify = await runMirrorCheck([
      'verify',
      '--source-command-config',
      properties,
      '--target-command-config',
      properties,
      '--topic',
      topic,
      '--target-topic',
      `A.${topic}`,
      '--group',
      group,
      '--format',
      'json',
    ])
    outputs.push(verify.stdout, verify.stderr)
    assert.equal(verify.code, 0, verify.stderr.slice(-2000))
    assert.deepEqual((JSON.parse(verify.stdout) as { total: { checked: number } }).total.checked, 60)
    const wrong = await runMirrorCheck(['offsets', '--command-config', writeProperties(client(WRONG_SECRET)), '--group', group])
    outputs.push(wrong.stdout, wrong.stderr)
    assert.equal(wrong.code, 2, wrong.stderr)
    assert.match(wrong.stderr.trim(), /sasl\.jaas\.config: the token endpoint \S+ refused the client credentials \(HTTP 401/)

    // A token from a file: URL (sasl.oauthbearer.token.endpoint.url=file:...): taken when valid; one for another audience is refused by the broker.
    const tokenFile = (claims: Record<string, unknown>, forged = false): Record<string, string> => {
      const path = writeProperties({}, 'token.jwt')
      writeFileSync(
        path,
        oidc.sign({ sub: 'mirror-sidecar', iss: oidc.url, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 600, ...claims }, forged)
      )
      return { ...client(SECRET), 'sasl.oauthbearer.token.endpoint.url': pathToFileURL(path).href, 'sasl.jaas.config': `${LOGIN_MODULE} required ;` }
    }
    const fromFile = await runMirrorCheck(['offsets', '--command-config', writeProperties(tokenFile({ aud: AUDIENCE })), '--group', group])
    assert.equal(fromFile.code, 0, fromFile.stderr)
    outputs.push(fromFile.stdout, fromFile.stderr)
    for (const [name, claims, forged] of [
      ['a forged signature', { aud: AUDIENCE }, true],
      ['another audience', { aud: 'some-other-service' }, false],
    ] as const) {
      const refusedToken = await runMirrorCheck(['offsets', '--command-config', writeProperties(tokenFile(claims, forged)), '--group', group])
      outputs.push(refusedToken.stdout, refusedToken.stderr)
      assert.equal(refusedToken.code, 2, `${name}: ${refusedToken.stderr}`)
      t.diagnostic(`${name}: ${refusedToken.stderr.trim()}`)
      assert.match(refusedToken.stderr.trim(), /the broker refused the OAuth token/, name)
    }

    const printed = spawnSidecarArgs(t, [mm2(SECRET), '--clusters', 'B', '--print-config'])
    runs.push(printed)
    assert.equal(await printed.exited, 0, printed.stderr())
    const shown = JSON.parse(printed.stdout()) as { flows: Array<{ target: { sasl: Record<string, unknown> } }> }
    assert.deepEqual(
      [shown.flows[0]?.target.sasl.mechanism, shown.flows[0]?.target.sasl.clientSecret, shown.flows[0]?.target.sasl.extensions],
      ['OAUTHBEARER', '[redacted]', ['traceTag']]
    )

    const everything = [...runs.map(r => r.stdout() + r.stderr()), ...outputs].join('\n')
    for (const secret of [SECRET, WRONG_SECRET, ...oidc.tokens.map(token => token.split('.')[2] as string)]) {
      assert.equal(everything.includes(secret), false, `a secret appeared in the output: ${secret.slice(0, 4)}...`)
    }
  }
)
