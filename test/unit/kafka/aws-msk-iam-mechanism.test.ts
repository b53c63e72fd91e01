import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { AwsMskIamSettings, ClusterConnection } from '../../../src/config/cluster-connection.js'
import { createKafkaClient } from '../../../src/kafka/client.js'
import { toMirrorError } from '../../../src/kafka/errors.js'
import { withAwsEnvCredentials } from '../../helpers/aws-env.js'
import { FakeSaslBroker, mskIamBroker } from '../../helpers/fake-sasl-broker.js'

const SECRET = 'fake-broker-secret-5d1'
const TOKEN = 'fake-broker-token-c09'

function withEnvCredentials (t: TestContext): void {
  withAwsEnvCredentials(t, { accessKeyId: 'AKIDFAKEBROKER', secretAccessKey: SECRET, sessionToken: TOKEN })
}

function connection (port: number): ClusterConnection {
  const sasl: AwsMskIamSettings = { mechanism: 'aws_msk_iam', debugCreds: false, fallbackRegion: 'eu-north-1', jaasKey: 'c.properties: sasl.jaas.config' }
  return { alias: 'source', brokers: [`127.0.0.1:${port}`], clientId: 'msk-iam-test', sasl, connectionTimeoutMs: 3000, requestTimeoutMs: 5000 }
}

test('AWS_MSK_IAM end to end against a fake broker: handshake for AWS_MSK_IAM, one signed payload the broker verifies, connected', async t => {
  withEnvCredentials(t)
  const { broker, payloads } = mskIamBroker(SECRET)
  await broker.start()
  t.after(async () => { await broker.stop() })
  const admin = createKafkaClient(connection(broker.port), undefined, { retries: 0 }).admin()
  await admin.connect()
  await admin.disconnect()
  assert.deepEqual(broker.mechanisms.slice(0, 1), ['AWS_MSK_IAM'])
  assert.ok(payloads.length >= 1)
  const payload = payloads[0] as Record<string, string>
  assert.equal(payload.host, '127.0.0.1')
  assert.equal(payload.action, 'kafka-cluster:Connect')
  assert.equal(payload.version, '2020_10_22')
  assert.match(payload['x-amz-credential'] ?? '', /^AKIDFAKEBROKER\/\d{8}\/eu-north-1\/kafka-cluster\/aws4_request$/)
  assert.equal(payload['x-amz-security-token'], TOKEN)
  assert.match(payload['user-agent'] ?? '', /^kafka-mirror-sidecar\//)
  assert.ok(Math.abs(Date.parse(payload['x-amz-date']!.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z')) - Date.now()) < 60_000)
})

test('AWS_MSK_IAM refused by the broker: an authentication error with the IAM hint, no secret in it', async t => {
  withEnvCredentials(t)
  const broker = new FakeSaslBroker('AWS_MSK_IAM', () => ({ error: '[8f1c] Access denied' }))
  await broker.start()
  t.after(async () => { await broker.stop() })
  const cluster = connection(broker.port)
  const admin = createKafkaClient(cluster, undefined, { retries: 0 }).admin()
  const error = await admin.connect().then(() => undefined, (e: unknown) => e)
  await admin.disconnect()
  assert.ok(error !== undefined, 'connect must fail')
  const converted = toMirrorError(error, 'source', undefined, cluster)
  assert.equal(converted.code, 'MIRROR_AUTHENTICATION')
  assert.match(converted.message, /Access denied/)
  assert.match(converted.message, /kafka-cluster:Connect/)
  assert.doesNotMatch(converted.message + String((error as Error).stack), new RegExp(`${SECRET}|${TOKEN}`))
})

test('AWS_MSK_IAM with no credentials to be had: one authentication error naming the JAAS key and the profile, nothing sent', async t => {
  withEnvCredentials(t)
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) delete process.env[name]
  process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials'
  process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config'
  let authentications = 0
  const broker = new FakeSaslBroker('AWS_MSK_IAM', () => { authentications++; return { error: 'unexpected' } })
  await broker.start()
  t.after(async () => { await broker.stop() })
  const base = connection(broker.port)
  const cluster = { ...base, sasl: { ...(base.sasl as AwsMskIamSettings), profileName: 'mirror' } }
  const admin = createKafkaClient(cluster, undefined, { retries: 0 }).admin()
  const error = await admin.connect().then(() => undefined, (e: unknown) => e)
  await admin.disconnect()
  const converted = toMirrorError(error, 'source', undefined, cluster)
  assert.equal(converted.code, 'MIRROR_AUTHENTICATION')
  assert.match(converted.message, /c\.properties: sasl\.jaas\.config: no AWS credentials for AWS_MSK_IAM \(profile mirror\)/)
  assert.equal(authentications, 0)
})
