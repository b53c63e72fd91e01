// MirrorMaker 2's IdentityReplicationIntegrationTest: testReplication with
// replication.policy.class = IdentityReplicationPolicy, primary -> backup only (as there), run
// against the mirror-sidecar process on the default local pair as `primary` and `backup`.
import { test } from 'node:test'
import { sharedClusters } from '../helpers/kafka.js'
import { identityRemoteTopic, plainWriter } from './mm2-scenario.js'
import { testReplication } from './replication-scenario.js'

test(
  "testReplication: identity policy, one way: topics keep their names (the existing backup topic gets the source's configs), heartbeats as primary.heartbeats, exact failover, new topics mirrored",
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    await testReplication(t, {
      primary: { cluster: source, bootstrap: source.bootstrap },
      backup: { cluster: target, bootstrap: target.bootstrap },
      twoWay: false,
      remoteTopicName: identityRemoteTopic,
      write: plainWriter,
      extraMm2: { 'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy' },
    })
  }
)
