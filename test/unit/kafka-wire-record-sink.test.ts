import assert from 'node:assert/strict'
import { test } from 'node:test'
import { saslCredentials, type ClusterConnection } from '../../src/config/cluster-connection.js'
import { TARGET_PRODUCER_ENV, targetProducerOf, targetProducerSetting } from '../../src/kafka/target-producer.js'
import { wireClusterOptions, wireSpeaks } from '../../src/kafka/wire-connection-options.js'
import { partitionSends, sameParts } from '../../src/kafka/wire-record-sink.js'
import type { PartitionWrite } from '../../src/ports/ports.js'
import { ConfigError } from '../../src/shared/errors.js'
import { FakeForwardedBatch, fakeFlowConfig, records } from '../helpers/fake-ports.js'

test('a send is cut per target partition, in first-seen order, each partition\'s writes and parts in order', () => {
  const a = records(0, 2)
  const b = records(2, 3)
  const forwarded = new FakeForwardedBatch(records(5, 1))
  const writes: PartitionWrite[] = [
    { topic: 't', partition: 1, records: a },
    { topic: 'u', partition: 0, records: [], forwarded },
    { topic: 't', partition: 1, records: b },
  ]
  const sends = partitionSends(writes)
  assert.deepEqual(sends.map(send => [send.topic, send.partition, send.writes.length]), [['t', 1, 2], ['u', 0, 1]])
  assert.equal(sends[0]!.parts[0], a)
  assert.equal(sends[0]!.parts[1], b)
  assert.equal(sends[1]!.parts[0], forwarded)
})

test('Invariant R\'s match: a resend of the same record arrays and forwarded batches is the same batch; copies, other orders and subsets are not', () => {
  const a = records(0, 2)
  const b = records(2, 3)
  const forwarded = new FakeForwardedBatch(records(5, 1))
  assert.ok(sameParts([a, b], [a, b]))
  assert.ok(sameParts([forwarded], [forwarded]))
  assert.ok(!sameParts([a, b], [b, a]))
  assert.ok(!sameParts([a, b], [a]))
  assert.ok(!sameParts([a], [[...a]]), 'equal records in another array are other records (a half, a decoded copy)')
  assert.ok(!sameParts([forwarded], [new FakeForwardedBatch(records(5, 1))]))
})

const plain: ClusterConnection = {
  alias: 'target', brokers: ['kafka-0:9092', '[::1]:9093'], clientId: 'mirror', connectionTimeoutMs: 3_000, requestTimeoutMs: 15_000,
}

test('a ClusterConnection becomes the wire layer\'s options in one place: brokers, client id, TLS, timeouts, SASL PLAIN and SCRAM', async () => {
  assert.deepEqual(wireClusterOptions(plain), {
    bootstrap: [{ host: 'kafka-0', port: 9092 }, { host: '::1', port: 9093 }],
    connection: { clientId: 'mirror', connectTimeoutMs: 3_000, requestTimeoutMs: 15_000 },
  })
  const tls = { rejectUnauthorized: true }
  assert.equal(wireClusterOptions({ ...plain, tls })?.connection.tls, tls)
  const scram = wireClusterOptions({ ...plain, sasl: saslCredentials('scram-sha-512', 'alice', 'secret-1') })?.connection.sasl
  assert.equal(scram?.name, 'SCRAM-SHA-512')
  // Each authentication sends a client nonce of its own (RFC 5802).
  const firsts: string[] = []
  for (let i = 0; i < 2; i++) {
    await assert.rejects(scram!.authenticate(async token => { firsts.push(token.toString('utf8')); throw new Error('stop after the first message') }))
  }
  assert.match(firsts[0]!, /^n,,n=alice,r=/)
  assert.notEqual(firsts[0], firsts[1])
  assert.equal(wireClusterOptions({ ...plain, sasl: saslCredentials('plain', 'alice', 'secret-1') })?.connection.sasl?.name, 'PLAIN')
  assert.equal(wireClusterOptions({ ...plain, sasl: saslCredentials('scram-sha-256', 'alice', 'secret-1') })?.connection.sasl?.name, 'SCRAM-SHA-256')
})

test('the wire layer does not take OAUTHBEARER, AWS_MSK_IAM or GSSAPI targets', () => {
  const gssapi = { ...plain, sasl: { mechanism: 'gssapi', serviceName: 'kafka', credentials: 'ticket-cache', jaasKey: 'x' } } as ClusterConnection
  const iam = { ...plain, sasl: { mechanism: 'aws_msk_iam', debugCreds: false, jaasKey: 'x' } } as ClusterConnection
  const oauth = { ...plain, sasl: { mechanism: 'oauthbearer' } } as unknown as ClusterConnection
  for (const connection of [gssapi, iam, oauth]) {
    assert.equal(wireSpeaks(connection), false, connection.sasl?.mechanism)
    assert.equal(wireClusterOptions(connection), undefined)
  }
  assert.equal(wireSpeaks(plain), true)
})

test('MIRROR_TARGET_PRODUCER picks the producer: wire only when asked, idempotent, and the wire layer speaks the target\'s security', () => {
  const wire = { [TARGET_PRODUCER_ENV]: 'wire' }
  assert.equal(targetProducerSetting({}), undefined)
  assert.equal(targetProducerSetting({ [TARGET_PRODUCER_ENV]: '' }), undefined)
  assert.equal(targetProducerSetting({ [TARGET_PRODUCER_ENV]: 'kafkajs' }), 'kafkajs')
  assert.throws(() => targetProducerSetting({ [TARGET_PRODUCER_ENV]: 'Wire' }), (error: ConfigError) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, 'MIRROR_TARGET_PRODUCER "Wire": must be wire or kafkajs; unset it for the default (kafkajs)')
    return true
  })
  const flow = fakeFlowConfig()
  assert.equal(targetProducerOf(flow, {}), 'kafkajs')
  assert.equal(targetProducerOf(flow, wire), 'wire')
  assert.equal(targetProducerOf(fakeFlowConfig({ producer: { ...flow.producer, idempotent: false } }), wire), 'kafkajs')
  const gssapi = { ...flow.target, sasl: { mechanism: 'gssapi', serviceName: 'kafka', credentials: 'ticket-cache', jaasKey: 'x' } } as ClusterConnection
  assert.equal(targetProducerOf(fakeFlowConfig({ target: gssapi }), wire), 'kafkajs')
})
