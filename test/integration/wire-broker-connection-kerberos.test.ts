import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClusterConnection } from '../../src/config/cluster-connection.js'
import { securityFromProperties } from '../../src/config/client-security.js'
import { parseProperties } from '../../src/config/java-properties.js'
import { ProblemList } from '../../src/config/values.js'
import { BrokerConnection } from '../../src/kafka/wire/broker-connection.js'
import { wireConnectionOptions } from '../../src/kafka/wire/wire-connection-options.js'
import { ErrorCodes, MirrorError } from '../../src/shared/errors.js'
import { MitKdc, REALM } from '../helpers/kdc.js'
import { startKerberosCluster } from '../helpers/secured-cluster.js'
import { requestsAcrossRenewals } from '../helpers/wire-renewals.js'

const KRB5_LOGIN_MODULE = 'com.sun.security.auth.module.Krb5LoginModule'
/** The broker's longest GSSAPI session (KIP-368): Kerberos gives the broker no credential lifetime, so this alone ends sessions. */
const MAX_REAUTH_MS = 3_000

test(
  'GSSAPI on a BrokerConnection with a real MIT KDC: a keytab principal authenticates to the broker\'s GSSAPI listener, ApiVersions and Metadata ' +
    `answered; with connections.max.reauth.ms=${MAX_REAUTH_MS} the session is renewed (KIP-368) with a new Kerberos context while requests flow; ` +
    'an unknown service name is refused naming sasl.kerberos.service.name',
  { timeout: 240_000 },
  async t => {
    const kdc = await MitKdc.start(t)
    const { kerberosBootstrap } = await startKerberosCluster(t, kdc, 'wire-kerberos', {
      'listener.name.kerberos.gssapi.connections.max.reauth.ms': String(MAX_REAUTH_MS),
    })
    // The system's Kerberos library reads the KDC's krb5.conf from the environment when a context is made.
    const savedConfig = process.env.KRB5_CONFIG
    process.env.KRB5_CONFIG = kdc.krb5Conf
    t.after(() => {
      if (savedConfig === undefined) delete process.env.KRB5_CONFIG
      else process.env.KRB5_CONFIG = savedConfig
    })
    const principal = `mirror-wire@${REALM}`
    const keytab = await kdc.principalWithKeytab(principal)
    const [host, port] = [kerberosBootstrap.split(':')[0]!, Number(kerberosBootstrap.split(':')[1])]
    const clusterOf = (serviceName: string): ClusterConnection => {
      const text = [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=GSSAPI',
        `sasl.kerberos.service.name=${serviceName}`,
        `sasl.jaas.config=${KRB5_LOGIN_MODULE} required useKeyTab=true storeKey=true keyTab="${keytab}" principal="${principal}";`,
      ].join('\n') + '\n'
      const problems = new ProblemList()
      const security = securityFromProperties(parseProperties(text), 'wire.properties: ', problems)
      assert.deepEqual(problems.problems, [])
      return { alias: 'kerberos', brokers: [kerberosBootstrap], clientId: 'wire-kerberos-test', connectionTimeoutMs: 15_000, ...security }
    }
    const connect = async (cluster: ClusterConnection): Promise<BrokerConnection> => {
      const connection = new BrokerConnection(wireConnectionOptions(cluster, { host, port }))
      t.after(() => connection.stop())
      await connection.start()
      return connection
    }

    const connection = await connect(clusterOf('kafka'))
    assert.ok(connection.versionOf('Metadata') !== undefined, 'ApiVersions answered: Metadata negotiated')
    assert.equal(connection.sessionLifetimeMs, BigInt(MAX_REAUTH_MS))
    const described = await connection.send('Metadata', { topics: null, allowAutoTopicCreation: false })
    assert.deepEqual(described.brokers.map(broker => broker.port), [port])

    const { answered, failures } = await requestsAcrossRenewals(connection, 2, () => [0, 1, 2].map(async () =>
      await connection.send('Metadata', { topics: null, allowAutoTopicCreation: false })))
    t.diagnostic(`${answered} Metadata requests answered across ${connection.reauthentications} renewals`)
    assert.deepEqual(failures, [])
    assert.ok(answered > 2 * 3)

    // The KDC knows no principal other/127.0.0.1: the error says which key to fix.
    await assert.rejects(connect(clusterOf('other')), (error: MirrorError) => {
      t.diagnostic(error.message)
      assert.equal(error.code, ErrorCodes.AUTHENTICATION)
      assert.match(error.message, /^wire\.properties: sasl\.jaas\.config: the KDC has no service principal for the broker 127\.0\.0\.1:\d+ /)
      assert.match(error.message, /sasl\.kerberos\.service\.name must be the primary of the brokers' principals \(other\)/)
      return true
    })
  }
)
