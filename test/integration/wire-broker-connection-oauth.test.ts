import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import type { ClusterConnection } from '../../src/config/cluster-connection.js'
import { securityFromProperties } from '../../src/config/client-security.js'
import { parseProperties } from '../../src/config/java-properties.js'
import { ProblemList } from '../../src/config/values.js'
import { BrokerConnection } from '../../src/kafka/wire/broker-connection.js'
import { wireConnectionOptions } from '../../src/kafka/wire/wire-connection-options.js'
import { ErrorCodes, MirrorError } from '../../src/shared/errors.js'
import { createLogger } from '../../src/shared/logger.js'
import { OidcServer } from '../helpers/oidc-server.js'
import { startOAuthCluster } from '../helpers/secured-cluster.js'
import { writeProperties } from '../helpers/sidecar.js'
import { requestsAcrossRenewals } from '../helpers/wire-renewals.js'

const SECRET = 'wire-oidc-secret-2d7c'
const WRONG_SECRET = 'not-the-wire-oidc-secret-9a'
const AUDIENCE = 'kafka-wire-test'
const LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
/** The broker's longest session (KIP-368), shorter than the tokens' lifetime: sessions end by it, not by the token. */
const MAX_REAUTH_MS = 3_000
const TOKEN_LIFETIME_SECONDS = 8

test(
  'OAUTHBEARER on a BrokerConnection: a broker validating RS256 tokens of a local OIDC provider accepts it, ApiVersions and Metadata answered; ' +
    `with connections.max.reauth.ms=${MAX_REAUTH_MS} and ${TOKEN_LIFETIME_SECONDS} s tokens the session is renewed (KIP-368) several times ` +
    'while pipelined requests keep flowing, none failed; a wrong secret and a forged token are refused; no secret or token in any error or log',
  { timeout: 240_000 },
  async t => {
    const oidc = await OidcServer.start(t, {
      clients: [{ id: 'mirror-wire', secret: SECRET }],
      tokenLifetimeSeconds: TOKEN_LIFETIME_SECONDS,
      audience: AUDIENCE,
    })
    const { oauthBootstrap } = await startOAuthCluster(t, oidc.jwksUrl, AUDIENCE, 'wire-oauth', {
      'listener.name.oauth.oauthbearer.connections.max.reauth.ms': String(MAX_REAUTH_MS),
    })
    const [host, port] = [oauthBootstrap.split(':')[0]!, Number(oauthBootstrap.split(':')[1])]
    const logLines: string[] = []
    const logger = createLogger({ level: 'debug', write: line => { logLines.push(line) } })
    /** The cluster connection the sidecar would read from these Java client keys. */
    const clusterOf = (entries: Record<string, string>): ClusterConnection => {
      const properties = {
        'security.protocol': 'SASL_PLAINTEXT',
        'sasl.mechanism': 'OAUTHBEARER',
        'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
        'sasl.oauthbearer.token.endpoint.url': oidc.tokenUrl,
        ...entries,
      }
      const problems = new ProblemList()
      const text = Object.entries(properties).map(([key, value]) => `${key}=${value}`).join('\n') + '\n'
      const security = securityFromProperties(parseProperties(text), 'wire.properties: ', problems)
      assert.deepEqual(problems.problems, [])
      return { alias: 'oauth', brokers: [oauthBootstrap], clientId: 'wire-oauth-test', connectionTimeoutMs: 15_000, ...security }
    }
    const connect = async (cluster: ClusterConnection): Promise<BrokerConnection> => {
      const connection = new BrokerConnection(wireConnectionOptions(cluster, { host, port }, logger))
      t.after(() => connection.stop())
      await connection.start()
      return connection
    }
    const errors: string[] = []

    const cluster = clusterOf({ 'sasl.jaas.config': `${LOGIN_MODULE} required clientId="mirror-wire" clientSecret="${SECRET}" extension_traceTag="wire";` })
    const connection = await connect(cluster)
    assert.ok(connection.versionOf('Metadata') !== undefined, 'ApiVersions answered: Metadata negotiated')
    assert.ok(connection.sessionLifetimeMs > 0n && connection.sessionLifetimeMs <= BigInt(MAX_REAUTH_MS), `session of ${connection.sessionLifetimeMs} ms`)
    const first = await connection.send('Metadata', { topics: null, allowAutoTopicCreation: false })
    assert.deepEqual(first.brokers.map(broker => broker.port), [port])

    // Requests pipelined three at a time, without pause, until the session was renewed four times: some are in
    // flight when a renewal starts (they stay in flight), some are sent while it runs (held, then written).
    const issuedBefore = oidc.issued
    const startedMs = Date.now()
    const { answered, failures } = await requestsAcrossRenewals(connection, 4, () => [
      connection.send('Metadata', { topics: null, allowAutoTopicCreation: false }),
      connection.send('ApiVersions', { clientSoftwareName: 'kafka-mirror-sidecar', clientSoftwareVersion: 'test' }),
      connection.send('Metadata', { topics: null, allowAutoTopicCreation: false }),
    ])
    const elapsedMs = Date.now() - startedMs
    t.diagnostic(`${answered} requests answered in ${elapsedMs} ms across ${connection.reauthentications} renewals; ${oidc.issued} tokens issued`)
    assert.deepEqual(failures, [])
    assert.ok(elapsedMs > 3 * MAX_REAUTH_MS * 0.85, `four renewals took ${elapsedMs} ms: each at 85-95 % of a session`)
    assert.ok(elapsedMs > MAX_REAUTH_MS, 'requests flowed past the end of the first session')
    assert.ok(oidc.issued > issuedBefore, 'renewals took new tokens from the identity provider')
    assert.ok(answered > 4 * 3, `${answered} requests answered`)

    // A wrong client secret: refused by the identity provider, nothing sent to SaslAuthenticate; one line naming the JAAS key.
    const wrong = clusterOf({ 'sasl.jaas.config': `${LOGIN_MODULE} required clientId="mirror-wire" clientSecret="${WRONG_SECRET}";` })
    await assert.rejects(connect(wrong), (error: MirrorError) => {
      errors.push(error.message)
      assert.equal(error.code, ErrorCodes.AUTHENTICATION)
      assert.match(error.message, /^wire\.properties: sasl\.jaas\.config: the token endpoint http:\/\/127\.0\.0\.1:\d+\/token refused the client credentials /)
      assert.match(error.message, /\(HTTP 401 invalid_client/)
      return true
    })

    // A token signed with another key, from a file: URL: the broker refuses it.
    const tokenPath = writeProperties({}, 'forged.jwt')
    const now = Math.floor(Date.now() / 1000)
    writeFileSync(tokenPath, oidc.sign({ sub: 'mirror-wire', aud: AUDIENCE, iss: oidc.url, iat: now, exp: now + 600 }, true))
    const forged = clusterOf({ 'sasl.oauthbearer.token.endpoint.url': pathToFileURL(tokenPath).href, 'sasl.jaas.config': `${LOGIN_MODULE} required ;` })
    await assert.rejects(connect(forged), (error: MirrorError) => {
      errors.push(error.message)
      assert.equal(error.code, ErrorCodes.AUTHENTICATION)
      assert.match(error.message, /^127\.0\.0\.1:\d+: SASL OAUTHBEARER: authentication failed: /)
      assert.match(error.message, /\(the broker refused the OAuth token with status "invalid_token"\)$/)
      return true
    })

    const everything = [...errors, ...logLines].join('\n')
    for (const secret of [SECRET, WRONG_SECRET, ...oidc.tokens.map(token => token.split('.')[2]!)]) {
      assert.equal(everything.includes(secret), false, `a secret appeared in an error or a log line: ${secret.slice(0, 4)}...`)
    }
  }
)
