// MirrorMaker 2's topic-config scenarios of MirrorConnectorsIntegrationBaseTest (testSyncTopicConfigs,
// testReplicateSourceDefault, testReplicateTargetDefault), ported as black-box tests of the
// mirror-sidecar process on the default local pair as `primary` and `backup`.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { sharedClusters, withAdmin } from '../helpers/kafka.js'
import { waitUntil } from '../helpers/wait.js'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import {
  cleanUpScenarioTopics, createScenarioTopic, defaultRemoteTopic, NUM_PARTITIONS, PRIMARY, scenarioMm2Properties, ScenarioNames, startSidecar, stopSidecar,
  topicConfig, waitForTopicCreated,
} from './mm2-scenario.js'

/** Sets the topic-level configs of `topic` to exactly `configs` (AlterConfigs replaces the topic's whole set: `{}` deletes every one). */
async function setTopicConfigs (cluster: LocalCluster, topic: string, configs: Readonly<Record<string, string>>): Promise<void> {
  await withAdmin(cluster, admin =>
    admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: 2, name: topic, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
    })
  )
}

/**
 * Waits until the broker describes the backup topic's `delete.retention.ms` as the test set it
 * (2000): a KRaft broker answers AlterConfigs once the controller committed the change and may
 * describe the old values a moment longer. The key is excluded from the sync, so once it shows,
 * the test's whole change (one request) is in effect and what the sync does next is what follows.
 */
async function changeSeen (backup: LocalCluster, backupTopic: string): Promise<void> {
  await waitUntil(async () => (await topicConfig(backup, backupTopic, 'delete.retention.ms')) === '2000', {
    timeoutMs: 10_000,
    message: 'the backup topic to describe the delete.retention.ms the test set',
  })
}

/**
 * One-way primary->backup with the scenario's mm2.properties (config sync every second,
 * `delete.retention.*` excluded); the topic `test-topic-with-config` created on primary and
 * mirrored.
 */
async function startWithTopic (
  t: TestContext,
  configs: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>> = {}
): Promise<{ primary: LocalCluster, backup: LocalCluster, topic: string, backupTopic: string, stop: () => Promise<void> }> {
  const { source: primary, target: backup } = await sharedClusters()
  const names = new ScenarioNames()
  cleanUpScenarioTopics(t, names, [primary, backup])
  const { sidecar } = startSidecar(
    t,
    scenarioMm2Properties(
      names,
      { cluster: primary, bootstrap: primary.bootstrap },
      { cluster: backup, bootstrap: backup.bootstrap },
      { twoWay: false, extra }
    )
  )
  const topic = names.topic('test-topic-with-config')
  const backupTopic = defaultRemoteTopic(topic, PRIMARY)
  await createScenarioTopic(primary, topic, NUM_PARTITIONS, configs)
  await waitForTopicCreated(backup, backupTopic)
  return { primary, backup, topic, backupTopic, stop: () => stopSidecar(sidecar) }
}

test(
  "testSyncTopicConfigs: a config changed on the backup topic is put back to the source's; an excluded one keeps the backup's value",
  { timeout: 120_000 },
  async t => {
    const { primary, backup, topic, backupTopic, stop } = await startWithTopic(t, { 'delete.retention.ms': '1000', 'retention.bytes': '1000' })
    await setTopicConfigs(backup, backupTopic, { 'delete.retention.ms': '2000', 'retention.bytes': '2000' })
    await changeSeen(backup, backupTopic)
    await waitUntil(async () => (await topicConfig(backup, backupTopic, 'retention.bytes')) === (await topicConfig(primary, topic, 'retention.bytes')), {
      timeoutMs: 30_000,
      message: "`retention.bytes` should be the same, because it isn't in exclude filter!",
    })
    assert.equal(await topicConfig(backup, backupTopic, 'retention.bytes'), '1000')
    assert.notEqual(
      await topicConfig(backup, backupTopic, 'delete.retention.ms'),
      await topicConfig(primary, topic, 'delete.retention.ms'),
      "`delete.retention.ms` should be different, because it's in exclude filter!"
    )
    assert.equal(
      await topicConfig(backup, backupTopic, 'delete.retention.ms'),
      '2000',
      "`delete.retention.ms` should be 2000, because it's explicitly defined on the target topic!"
    )
    await stop()
  }
)

test(
  "testReplicateSourceDefault: with use.defaults.from = source a config changed on the backup topic goes back to the source cluster's default; an excluded one is kept",
  { timeout: 120_000 },
  async t => {
    const { primary, backup, topic, backupTopic, stop } = await startWithTopic(t, {}, { 'use.defaults.from': 'source' })
    await setTopicConfigs(backup, backupTopic, { 'delete.retention.ms': '2000', 'retention.bytes': '2000' })
    await changeSeen(backup, backupTopic)
    await waitUntil(async () => (await topicConfig(backup, backupTopic, 'retention.bytes')) === '-1', {
      timeoutMs: 30_000,
      message: '`retention.bytes` should be synced with default value!',
    })
    assert.equal(
      await topicConfig(backup, backupTopic, 'retention.bytes'),
      await topicConfig(primary, topic, 'retention.bytes'),
      '`retention.bytes` should be the same, because the source cluster default is being used!'
    )
    assert.notEqual(
      await topicConfig(backup, backupTopic, 'delete.retention.ms'),
      await topicConfig(primary, topic, 'delete.retention.ms'),
      "`delete.retention.ms` should be different, because it's in exclude filter!"
    )
    assert.equal(
      await topicConfig(backup, backupTopic, 'delete.retention.ms'),
      '2000',
      "`delete.retention.ms` should be 2000, because it's explicitly defined on the target topic!"
    )
    await stop()
  }
)

test(
  "testReplicateTargetDefault: a config set on the source is copied; deleted on the source, the backup topic goes back to the target cluster's default",
  { timeout: 120_000 },
  async t => {
    const { primary, backup, topic, backupTopic, stop } = await startWithTopic(t, { 'retention.bytes': '1000' })
    await waitUntil(async () => (await topicConfig(backup, backupTopic, 'retention.bytes')) === '1000', {
      timeoutMs: 30_000,
      message: '`retention.bytes` should be the same',
    })
    assert.equal(await topicConfig(primary, topic, 'retention.bytes'), '1000')
    await setTopicConfigs(primary, topic, {})
    await waitUntil(async () => (await topicConfig(backup, backupTopic, 'retention.bytes')) === '-1', {
      timeoutMs: 30_000,
      message: "`retention.bytes` should be synced with target's default value!",
    })
    await stop()
  }
)
