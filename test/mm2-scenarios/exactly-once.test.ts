// MirrorMaker 2's MirrorConnectorsIntegrationExactlyOnceTest: testReplication with
// `<alias>.exactly.once.source.support = enabled` for both clusters (both flows write in
// transactions on their target), run against the mirror-sidecar process on the default local pair
// as `primary` and `backup`. Readers read committed; translated offsets may lie after the last
// record's transaction marker.
import { test } from 'node:test'
import { sharedClusters } from '../helpers/kafka.js'
import { BACKUP, defaultRemoteTopic, plainWriter, PRIMARY } from './mm2-scenario.js'
import { testReplication } from './replication-scenario.js'

test(
  'testReplication: exactly-once into both clusters: every record once read_committed, checkpoints and heartbeats, exact failover and failback, new topics mirrored',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    await testReplication(t, {
      primary: { cluster: source, bootstrap: source.bootstrap },
      backup: { cluster: target, bootstrap: target.bootstrap },
      twoWay: true,
      remoteTopicName: defaultRemoteTopic,
      write: plainWriter,
      extraMm2: { [`${PRIMARY}.exactly.once.source.support`]: 'enabled', [`${BACKUP}.exactly.once.source.support`]: 'enabled' },
    })
  }
)
