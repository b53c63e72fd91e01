import assert from 'node:assert/strict'
import { test } from 'node:test'
import { saslCredentials, type ClusterConnection } from '../../../../src/config/cluster-connection.js'
import { wireClusterOptions } from '../../../../src/kafka/wire/wire-connection-options.js'

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
    const stop = async (token: Buffer): Promise<Buffer> => { firsts.push(token.toString('utf8')); throw new Error('stop after the first message') }
    await assert.rejects(scram!.authenticate(stop, { host: 'kafka-0', port: 9092 }))
  }
  assert.match(firsts[0]!, /^n,,n=alice,r=/)
  assert.notEqual(firsts[0], firsts[1])
  assert.equal(wireClusterOptions({ ...plain, sasl: saslCredentials('plain', 'alice', 'secret-1') })?.connection.sasl?.name, 'PLAIN')
  assert.equal(wireClusterOptions({ ...plain, sasl: saslCredentials('scram-sha-256', 'alice', 'secret-1') })?.connection.sasl?.name, 'SCRAM-SHA-256')
})
