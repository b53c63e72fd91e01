import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'node:test'
import type { AwsMskIamSettings, ClusterConnection, GssapiSettings, OAuthBearerCredentials } from '../../../../src/config/cluster-connection.js'
import { oauthBearerCredentials, saslCredentials, tlsOptions } from '../../../../src/config/cluster-connection.js'
import { oauthTokenSource } from '../../../../src/kafka/connection-credentials.js'
import { wireConnectionOptions } from '../../../../src/kafka/wire/wire-connection-options.js'
import { MirrorError } from '../../../../src/shared/errors.js'
import { createLogger } from '../../../../src/shared/logger.js'

const BROKER = { host: 'b-1.example.com', port: 9096 }

function cluster (sasl?: ClusterConnection['sasl'], extra: Partial<ClusterConnection> = {}): ClusterConnection {
  return { alias: 'source', brokers: ['b-1.example.com:9096'], clientId: 'mirror-test', ...(sasl === undefined ? {} : { sasl }), ...extra }
}

function oauth (tokenEndpointUrl: string, retry = { retryBackoffMs: 100, retryBackoffMaxMs: 10_000 }): OAuthBearerCredentials {
  return oauthBearerCredentials({
    tokenEndpointUrl,
    clientId: 'mirror',
    extensions: { traceTag: 'wire' },
    headerUrlencode: false,
    subClaimName: 'sub',
    refreshWindowFactor: 0.8,
    refreshWindowJitter: 0.05,
    refreshMinPeriodSeconds: 60,
    refreshBufferSeconds: 300,
    requestTimeoutMs: 2_000,
    ...retry,
    jaasKey: 'source.properties: sasl.jaas.config',
  }, 'oidc-secret-unit-4b2')
}

/** A JWT-shaped token with `sub`, `iat` and `exp` (unsigned: the broker verifies tokens, the client only reads their lifetime). */
function tokenFile (): string {
  const now = Math.floor(Date.now() / 1000)
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  const path = join(mkdtempSync(join(tmpdir(), 'wire-oauth-')), 'token.jwt')
  writeFileSync(path, `${part({ alg: 'RS256' })}.${part({ sub: 'mirror', iat: now, exp: now + 600 })}.c2lnbmF0dXJl`)
  return pathToFileURL(path).href
}

test('every SASL mechanism of a cluster connection maps to the wire mechanism of that name; client id, timeouts and broker carried over', () => {
  const aws: AwsMskIamSettings = { mechanism: 'aws_msk_iam', debugCreds: false, fallbackRegion: 'eu-north-1', jaasKey: 'k' }
  const gssapi: GssapiSettings = {
    mechanism: 'gssapi', serviceName: 'kafka', principal: 'mirror@EXAMPLE.TEST', credentials: 'keytab', keyTab: '/x.keytab', jaasKey: 'k',
  }
  const cases: Array<[ClusterConnection['sasl'], string | undefined]> = [
    [undefined, undefined],
    [saslCredentials('plain', 'alice', 'pw'), 'PLAIN'],
    [saslCredentials('scram-sha-256', 'alice', 'pw'), 'SCRAM-SHA-256'],
    [saslCredentials('scram-sha-512', 'alice', 'pw'), 'SCRAM-SHA-512'],
    [oauth('https://idp.example.com/token'), 'OAUTHBEARER'],
    [aws, 'AWS_MSK_IAM'],
    [gssapi, 'GSSAPI'],
  ]
  for (const [sasl, name] of cases) {
    const options = wireConnectionOptions(cluster(sasl, { connectionTimeoutMs: 4_000, requestTimeoutMs: 7_000 }), BROKER)
    assert.equal(options.sasl?.name, name)
    assert.deepEqual(
      [options.host, options.port, options.clientId, options.connectTimeoutMs, options.requestTimeoutMs],
      ['b-1.example.com', 9096, 'mirror-test', 4_000, 7_000]
    )
  }
  const defaults = wireConnectionOptions(cluster(), BROKER)
  assert.deepEqual([defaults.tls, defaults.connectTimeoutMs, defaults.requestTimeoutMs], [undefined, undefined, undefined])
})

test('TLS options go over as they are: the key stays hidden from JSON and enumeration, and is there for node:tls to read', () => {
  const tls = tlsOptions({ ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM-5c0' })
  const options = wireConnectionOptions(cluster(undefined, { tls }), BROKER)
  assert.equal(options.tls?.key, 'KEY PEM-5c0')
  assert.equal(Object.keys(options.tls ?? {}).includes('key'), false)
  assert.doesNotMatch(JSON.stringify(options), /KEY PEM-5c0/)
})

test('OAUTHBEARER on the wire shares the token source of the cluster\'s kafkajs clients: two connections, one token fetched, extensions sent', async () => {
  const sasl = oauth(tokenFile())
  const sent: string[] = []
  const exchange = async (token: Buffer): Promise<Buffer> => { sent.push(token.toString('utf8')); return Buffer.alloc(0) }
  for (const host of ['b-1.example.com', 'b-2.example.com']) {
    const { sasl: mechanism } = wireConnectionOptions(cluster(sasl), { host, port: 9096 })
    await mechanism!.authenticate(exchange, { host, port: 9096 })
  }
  assert.equal(oauthTokenSource(sasl).fetched, 1)
  assert.equal(sent.length, 2)
  const [header, auth, extension, ...end] = sent[0]!.split('\u0001')
  assert.deepEqual([header, extension, end], ['n,,', 'traceTag=wire', ['', '']])
  assert.match(auth!, /^auth=Bearer [\w-]+\.[\w-]+\.c2lnbmF0dXJl$/)
})

test('OAUTHBEARER with an unreachable token endpoint: error and log lines never hold the endpoint URL whole (its query) nor the secret', async () => {
  const closed = createServer()
  await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as { port: number }).port
  await new Promise<void>(resolve => closed.close(() => resolve()))
  const lines: string[] = []
  const logger = createLogger({ level: 'debug', write: line => { lines.push(line) } })
  const sasl = oauth(`http://127.0.0.1:${port}/token?tenant=tenant-secret-3a`, { retryBackoffMs: 1, retryBackoffMaxMs: 2 })
  const { sasl: mechanism } = wireConnectionOptions(cluster(sasl), BROKER, logger)
  let exchanged = 0
  await assert.rejects(mechanism!.authenticate(async () => { exchanged++; return Buffer.alloc(0) }, BROKER), (error: MirrorError) => {
    assert.ok(error instanceof MirrorError)
    assert.match(error.message, new RegExp(`cannot reach the token endpoint http://127\\.0\\.0\\.1:${port}/token `))
    lines.push(error.message)
    return true
  })
  assert.equal(exchanged, 0, 'nothing sent to the broker without a token')
  assert.ok(lines.length > 0, 'the failed attempts are logged')
  for (const text of lines) {
    assert.doesNotMatch(text, /tenant-secret-3a|oidc-secret-unit-4b2/)
  }
})
