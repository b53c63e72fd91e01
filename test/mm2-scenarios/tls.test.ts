// MirrorMaker 2's MirrorConnectorsIntegrationSSLTest: testReplication with the backup cluster
// reached over TLS (`backup.security.protocol = SSL`, its truststore, and the same keys as
// `backup.producer.*`, as that test writes them), run against the mirror-sidecar process. The
// backup cluster here also requires a client certificate (mutual TLS), which MirrorMaker 2's test
// does not; primary is the default local source cluster.
import { test } from 'node:test'
import { sharedClusters } from '../helpers/kafka.js'
import { startSecuredCluster } from '../helpers/secured-cluster.js'
import { BACKUP, defaultRemoteTopic, plainWriter } from './mm2-scenario.js'
import { testReplication } from './replication-scenario.js'

test('testReplication: backup over TLS with a client certificate, both directions', { timeout: 300_000 }, async t => {
  const { source } = await sharedClusters()
  const secured = await startSecuredCluster(t, 'mm2-backup')
  const ssl = {
    'security.protocol': 'SSL',
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': secured.certificates.caPem,
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': secured.certificates.clientKeystorePem,
  }
  const mm2Properties = Object.fromEntries(Object.entries(ssl).flatMap(([key, value]) => [[`${BACKUP}.${key}`, value], [`${BACKUP}.producer.${key}`, value]]))
  await testReplication(t, {
    primary: { cluster: source, bootstrap: source.bootstrap },
    backup: { cluster: secured.cluster, bootstrap: secured.mtlsBootstrap, mm2Properties },
    twoWay: true,
    remoteTopicName: defaultRemoteTopic,
    write: plainWriter,
  })
})
