import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { AwsMskIamSettings, ClusterConnection } from '../../../../src/config/cluster-connection.js'
import { BrokerConnection } from '../../../../src/kafka/wire/broker-connection.js'
import { wireConnectionOptions } from '../../../../src/kafka/wire/wire-connection-options.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import { withAwsEnvCredentials } from '../../../helpers/aws-env.js'
import { FakeSaslBroker, mskIamBroker } from '../../../helpers/fake-sasl-broker.js'
import { requestsAcrossRenewals } from '../../../helpers/wire-renewals.js'

const SECRET = 'wire-fake-broker-secret-8e2'
const TOKEN = 'wire-fake-broker-token-41d'

function withEnvCredentials (t: TestContext): void {
  withAwsEnvCredentials(t, { accessKeyId: 'AKIDWIREFAKE', secretAccessKey: SECRET, sessionToken: TOKEN })
}

function mskCluster (): ClusterConnection {
  const sasl: AwsMskIamSettings = { mechanism: 'aws_msk_iam', debugCreds: false, fallbackRegion: 'eu-north-1', jaasKey: 'msk.properties: sasl.jaas.config' }
  return { alias: 'source', brokers: [], clientId: 'wire-msk-iam-test', sasl, connectionTimeoutMs: 3_000, requestTimeoutMs: 5_000 }
}

test(
  'AWS_MSK_IAM on a BrokerConnection against a fake broker: a signed payload it verifies, Metadata answered; a session of 600 ms renewed (KIP-368) ' +
    'with a new signature each time while Metadata requests keep flowing, none failed, none sent during a renewal',
  { timeout: 60_000 },
  async t => {
    withEnvCredentials(t)
    const { broker, payloads } = mskIamBroker(SECRET, 600n)
    await broker.start()
    t.after(async () => { await broker.stop() })
    const connection = new BrokerConnection(wireConnectionOptions(mskCluster(), { host: '127.0.0.1', port: broker.port }))
    t.after(() => connection.stop())
    await connection.start()
    assert.deepEqual(broker.mechanisms, ['AWS_MSK_IAM'])
    assert.equal(connection.sessionLifetimeMs, 600n)
    assert.equal(payloads[0]?.host, '127.0.0.1')
    assert.match(payloads[0]?.['x-amz-credential'] ?? '', /^AKIDWIREFAKE\/\d{8}\/eu-north-1\/kafka-cluster\/aws4_request$/)
    assert.equal(payloads[0]?.['x-amz-security-token'], TOKEN)

    // Three requests pipelined at a time: some are in flight when a renewal starts, some are sent while it runs.
    const { answered, failures } = await requestsAcrossRenewals(connection, 3, () => [0, 1, 2].map(async () => {
      const described = await connection.send('Metadata', { topics: [], allowAutoTopicCreation: true })
      assert.deepEqual(described.brokers.map(b => [b.host, b.port]), [['127.0.0.1', broker.port]])
    }), { timeoutMs: 30_000, intervalMs: 20 })
    assert.deepEqual(failures, [])
    assert.equal(broker.requestsDuringAuthentication, 0, 'no request but SASL ones between SaslHandshake and SaslAuthenticate (KIP-368)')
    assert.deepEqual(broker.mechanisms, Array.from({ length: connection.reauthentications + 1 }, () => 'AWS_MSK_IAM'))
    assert.equal(payloads.length, connection.reauthentications + 1)
    // Signed at each renewal (SigV4 dates have one-second steps; three renewals span more than one second).
    assert.ok(payloads.at(-1)!['x-amz-date']! > payloads[0]!['x-amz-date']!, payloads.map(p => p['x-amz-date']).join(' '))
    t.diagnostic(`${answered} Metadata requests answered across ${connection.reauthentications} renewals`)
    assert.ok(answered > 3 * connection.reauthentications)
  }
)

test('AWS_MSK_IAM refused by the broker: start() rejects with an AUTHENTICATION error naming the broker\'s reason, no secret in it', async t => {
  withEnvCredentials(t)
  const broker = new FakeSaslBroker('AWS_MSK_IAM', () => ({ error: '[a41c] Access denied' }))
  await broker.start()
  t.after(async () => { await broker.stop() })
  const connection = new BrokerConnection(wireConnectionOptions(mskCluster(), { host: '127.0.0.1', port: broker.port }))
  t.after(() => connection.stop())
  await assert.rejects(connection.start(), (error: MirrorError) => {
    assert.equal(error.code, ErrorCodes.AUTHENTICATION)
    assert.match(error.message, /^127\.0\.0\.1:\d+: SASL AWS_MSK_IAM: authentication failed: \[a41c\] Access denied$/)
    assert.doesNotMatch(`${error.message} ${String(error.stack)}`, new RegExp(`${SECRET}|${TOKEN}`))
    return true
  })
  connection.checkInvariants()
})
