import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { ErrorCodes, MirrorError } from '../../src/shared/errors.js'
import { BrokerConnection, type BrokerConnectionOptions } from '../../src/kafka/wire/broker-connection.js'
import { plainMechanism, scramMechanism } from '../../src/kafka/wire/sasl-mechanism.js'
import { SCRAM_USERS, startSecuredCluster } from '../helpers/secured-cluster.js'

test('TLS with SCRAM-SHA-512 and TLS with a client certificate authenticate; a wrong password, mechanism, CA or a missing certificate are refused', async t => {
  const secured = await startSecuredCluster(t, 'wire-security')
  const endpoint = (bootstrap: string): { host: string, port: number } => ({ host: bootstrap.split(':')[0]!, port: Number(bootstrap.split(':')[1]) })
  const ca = readFileSync(secured.certificates.caPem)
  const attempt = async (options: Omit<BrokerConnectionOptions, 'clientId' | 'host' | 'port'>, bootstrap: string): Promise<BrokerConnection> => {
    const connection = new BrokerConnection({ ...endpoint(bootstrap), clientId: 'wire-security-test', connectTimeoutMs: 15_000, ...options })
    t.after(() => connection.stop())
    await connection.start()
    return connection
  }
  const saslSsl = secured.saslSslBootstrap

  const scram = await attempt({ tls: { ca }, sasl: scramMechanism('SCRAM-SHA-512', 'alice', SCRAM_USERS.alice) }, saslSsl)
  const described = await scram.send('Metadata', { topics: null, allowAutoTopicCreation: false })
  assert.deepEqual(described.brokers.map(broker => broker.port), [endpoint(saslSsl).port])
  assert.equal(scram.sessionLifetimeMs, 0n, 'the broker sets no connections.max.reauth.ms (KIP-368)')

  await assert.rejects(attempt({ tls: { ca }, sasl: scramMechanism('SCRAM-SHA-512', 'alice', 'not-the-password-9') }, saslSsl), (error: MirrorError) => {
    assert.equal(error.code, ErrorCodes.AUTHENTICATION)
    assert.match(error.message, /SASL SCRAM-SHA-512: authentication failed/)
    assert.doesNotMatch(error.message, /not-the-password-9/)
    return true
  })
  await assert.rejects(
    attempt({ tls: { ca }, sasl: plainMechanism('alice', SCRAM_USERS.alice) }, saslSsl),
    (error: MirrorError) => error.code === ErrorCodes.AUTHENTICATION && /SASL PLAIN: not enabled on this listener, which enables SCRAM-SHA-512/
      .test(error.message)
  )
  await assert.rejects(
    attempt({ tls: { ca: readFileSync(secured.certificates.otherCaPem) } }, saslSsl),
    (error: MirrorError) => error.code === ErrorCodes.CONNECTION && /cannot connect/.test(error.message)
  )

  const certificate = { cert: readFileSync(secured.certificates.clientCertPem), key: readFileSync(secured.certificates.clientKeyPem) }
  const mtls = await attempt({ tls: { ca, ...certificate } }, secured.mtlsBootstrap)
  assert.ok(mtls.versionOf('Produce') !== undefined)
  await assert.rejects(
    attempt({ tls: { ca } }, secured.mtlsBootstrap),
    (error: MirrorError) => error instanceof MirrorError && error.code === ErrorCodes.CONNECTION
  )
})
