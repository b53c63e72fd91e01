// MirrorMaker 2's MirrorConnectorsIntegrationTransactionsTest: testReplication with every source
// record written in a transaction (the commit markers take offsets on the source the copies do not
// have), run against the mirror-sidecar process on the default local pair as `primary` and `backup`.
import { test } from 'node:test'
import { sharedClusters } from '../helpers/kafka.js'
import { defaultRemoteTopic, transactionalWriter } from './mm2-scenario.js'
import { testReplication } from './replication-scenario.js'

test(
  'testReplication: transactional sources, both directions: every committed record once, groups at the end offsets (after the markers) translated exactly',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    await testReplication(t, {
      primary: { cluster: source, bootstrap: source.bootstrap },
      backup: { cluster: target, bootstrap: target.bootstrap },
      twoWay: true,
      remoteTopicName: defaultRemoteTopic,
      write: transactionalWriter,
    })
  }
)
