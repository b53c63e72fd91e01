import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { javaMirrorClusters } from '../helpers/java-client.js'
import { auditKeys, committedOffsets, readAll, totalRecords, withAdmin } from '../helpers/kafka.js'
import { commitAsAdmin } from '../helpers/offsets.js'
import { waitUntil } from '../helpers/wait.js'
import {
  assertMonotonicCheckpoints,
  assertTranslatedToEnd,
  BACKUP,
  cleanUpScenarioTopics,
  createScenarioTopic,
  NUM_PARTITIONS,
  NUM_RECORDS_PER_PARTITION,
  NUM_RECORDS_PRODUCED,
  PRIMARY,
  recordsFrom,
  scenarioMm2Properties,
  scenarioRecords,
  ScenarioNames,
  startSidecar,
  stopSidecar,
  topicConfig,
  waitForCheckpointOnAllPartitions,
  waitForTopicCreated,
  type RecordWriter,
  type RemoteTopicName,
  type ScenarioCluster,
} from './mm2-scenario.js'

export interface ReplicationScenario {
  readonly primary: ScenarioCluster
  readonly backup: ScenarioCluster
  /** `replicateBackupToPrimary`: both flows (the base test) or `primary->backup` only (the identity test). */
  readonly twoWay: boolean
  readonly remoteTopicName: RemoteTopicName
  readonly write: RecordWriter
  /** mm2.properties lines of the variant (`replication.policy.class`, `<alias>.exactly.once.source.support`, ...). */
  readonly extraMm2?: Readonly<Record<string, string>>
}

/** What a reader finds on `topic`: every record of keys `k0..k<expected-1>` once, and the offset of each partition's last record. */
async function assertCopiedOnce (cluster: LocalCluster, topic: string, expected: number): Promise<Map<number, bigint>> {
  const records = await readAll(cluster, topic)
  assert.deepEqual(auditKeys(records, expected), { missing: 0, duplicates: 0 }, `${topic}: every record once`)
  const last = new Map<number, bigint>()
  for (const record of records) last.set(record.partition, BigInt(record.offset))
  return last
}

/** Waits until `topic` holds `count` records read_committed (a transactional copy's markers take offsets too). */
async function waitForRecords (cluster: LocalCluster, topic: string, count: number, timeoutMs = 60_000): Promise<void> {
  await waitUntil(async () => await totalRecords(cluster, topic) >= BigInt(count) && (await readAll(cluster, topic)).length >= count,
    { timeoutMs, intervalMs: 250, message: `${count} records in ${topic}` })
}

/** The group `group` commits the end offsets of `topic` on `cluster` (it read everything), as the Java test's warmed-up consumer does. */
async function commitEnd (cluster: LocalCluster, group: string, topic: string): Promise<void> {
  const ends = await withAdmin(cluster, admin => admin.fetchTopicOffsets(topic))
  await commitAsAdmin(cluster, group, topic, new Map(ends.map(p => [p.partition, BigInt(p.high)])))
}

/**
 * `MirrorConnectorsIntegrationBaseTest.testReplication`, run against the `mirror-sidecar` process:
 * records both ways, topic configs synced (and the `config.properties.exclude` filter), heartbeats
 * and `<alias>.heartbeats` on both clusters, `MirrorClient.upstreamClusters()` and
 * `replicationHops()`, checkpoints read by `MirrorClient.remoteConsumerOffsets` on every partition,
 * failover and failback of a group at the translated offsets, monotonic checkpoints, and topics
 * created later mirrored. Where MirrorMaker 2 accepts a failed-over position anywhere in
 * `(0, NUM_RECORDS_PRODUCED]`, the sidecar's translation is exact: one past the last record copied,
 * and a reader of the group on the other cluster reads nothing again.
 */
export async function testReplication (t: TestContext, scenario: ReplicationScenario): Promise<void> {
  const { primary, backup, twoWay, remoteTopicName, write } = scenario
  const names = new ScenarioNames()
  cleanUpScenarioTopics(t, names, [primary.cluster, backup.cluster])
  const topic1 = names.topic('test-topic-1')
  // MirrorMaker 2's createTopics: test-topic-1 compacted on primary (its config must reach backup), plain on backup.
  await createScenarioTopic(primary.cluster, topic1, NUM_PARTITIONS, { 'cleanup.policy': 'compact' })
  await createScenarioTopic(backup.cluster, topic1, NUM_PARTITIONS)
  await createScenarioTopic(primary.cluster, names.topic('test-topic-no-checkpoints'), 1)

  await write(primary.cluster, topic1, scenarioRecords('primary'))
  const backupTopic1 = remoteTopicName(topic1, PRIMARY)
  if (twoWay) await write(backup.cluster, topic1, scenarioRecords('backup'))
  const reverseTopic1 = remoteTopicName(topic1, BACKUP)
  const group = names.group('testReplication')
  // The group read everything on both clusters before the mirror started.
  await commitEnd(primary.cluster, group, topic1)
  if (twoWay) await commitEnd(backup.cluster, group, topic1)

  const { sidecar } = startSidecar(t, scenarioMm2Properties(names, primary, backup, { twoWay, extra: scenario.extraMm2 }))

  if (twoWay) {
    await waitForTopicCreated(primary.cluster, reverseTopic1)
    await waitForTopicCreated(backup.cluster, backupTopic1)
  }
  await waitUntil(async () => await topicConfig(backup.cluster, backupTopic1, 'cleanup.policy') === 'compact',
    { timeoutMs: 30_000, message: 'topic config was not synced' })

  await createAndTestNewTopicWithConfigFilter(names, primary.cluster, backup.cluster, remoteTopicName)

  // Records copied, each once (MirrorMaker 2 counts them; the sidecar is checked for duplicates too).
  const identity = backupTopic1 === topic1
  await waitForRecords(backup.cluster, backupTopic1, NUM_RECORDS_PRODUCED)
  const lastOnBackup = await assertCopiedOnce(backup.cluster, backupTopic1, NUM_RECORDS_PRODUCED)
  let lastOnPrimary = new Map<number, bigint>()
  if (twoWay) {
    assert.ok(!identity, 'two ways need the default policy')
    await waitForRecords(primary.cluster, reverseTopic1, NUM_RECORDS_PRODUCED)
    lastOnPrimary = await assertCopiedOnce(primary.cluster, reverseTopic1, NUM_RECORDS_PRODUCED)
    assert.equal((await readAll(backup.cluster, topic1)).length, NUM_RECORDS_PRODUCED, 'backup\'s own test-topic-1 untouched by the mirror')
  }

  const hasRecords = async (cluster: LocalCluster, topic: string): Promise<boolean> => await totalRecords(cluster, topic).catch(() => 0n) > 0n
  for (const [cluster, topic, message] of [
    [primary.cluster, 'heartbeats', 'Heartbeats were not emitted to primary cluster.'],
    [backup.cluster, 'heartbeats', 'Heartbeats were not emitted to backup cluster.'],
    [backup.cluster, `${PRIMARY}.heartbeats`, 'Heartbeats were not replicated downstream to backup cluster.'],
    ...(twoWay ? [[primary.cluster, `${BACKUP}.heartbeats`, 'Heartbeats were not replicated downstream to primary cluster.']] as const : []),
  ] as const) {
    await waitUntil(() => hasRecords(cluster, topic), { timeoutMs: 30_000, message })
  }

  const backupClient = await javaMirrorClusters(backup.cluster.bootstrap, PRIMARY)
  assert.ok(backupClient.upstreamClusters.includes(PRIMARY), `Did not find upstream primary cluster: ${JSON.stringify(backupClient)}`)
  assert.equal(backupClient.replicationHops, 1, 'Did not calculate replication hops correctly.')
  await waitUntil(() => hasRecords(backup.cluster, `${PRIMARY}.checkpoints.internal`), {
    timeoutMs: 30_000,
    message: 'Checkpoints were not emitted downstream to backup cluster.',
  })
  if (twoWay) {
    const primaryClient = await javaMirrorClusters(primary.cluster.bootstrap, BACKUP)
    assert.ok(primaryClient.upstreamClusters.includes(BACKUP), `Did not find upstream backup cluster: ${JSON.stringify(primaryClient)}`)
    assert.equal(primaryClient.replicationHops, 1, 'Did not calculate replication hops correctly.')
    await waitUntil(() => hasRecords(primary.cluster, `${BACKUP}.checkpoints.internal`), {
      timeoutMs: 30_000,
      message: 'Checkpoints were not emitted upstream to primary cluster.',
    })
  }

  // Failover of the group to backup at the translated offsets: exact, so nothing is read again.
  const backupOffsets = await waitForCheckpointOnAllPartitions(backup.cluster, group, PRIMARY, backupTopic1)
  await assertTranslatedToEnd(backup.cluster, backupTopic1, backupOffsets, lastOnBackup)
  await commitAsAdmin(backup.cluster, group, backupTopic1, new Map([...backupOffsets].map(([p, o]) => [p, BigInt(o)])))
  assert.deepEqual(
    await recordsFrom(backup.cluster, backupTopic1, await committedOffsets(backup.cluster, group, backupTopic1)),
    [],
    'the failed-over group reads no record again'
  )

  await assertMonotonicCheckpoints(backup.cluster, `${PRIMARY}.checkpoints.internal`, names)

  if (twoWay) {
    // Failback to primary: the group's offsets on backup's own test-topic-1, translated onto primary's backup.test-topic-1.
    const primaryOffsets = await waitForCheckpointOnAllPartitions(primary.cluster, group, BACKUP, reverseTopic1)
    await assertTranslatedToEnd(primary.cluster, reverseTopic1, primaryOffsets, lastOnPrimary)
    await commitAsAdmin(primary.cluster, group, reverseTopic1, new Map([...primaryOffsets].map(([p, o]) => [p, BigInt(o)])))
    assert.deepEqual(
      await recordsFrom(primary.cluster, reverseTopic1, await committedOffsets(primary.cluster, group, reverseTopic1)),
      [],
      'the failed-back group reads no record again'
    )
  }

  // More matching topics, created while the mirror runs; records in their first partition only.
  const topic2 = names.topic('test-topic-2')
  await createScenarioTopic(primary.cluster, topic2, NUM_PARTITIONS)
  const backupTopic2 = remoteTopicName(topic2, PRIMARY)
  await waitForTopicCreated(backup.cluster, backupTopic2)
  await write(primary.cluster, topic2, scenarioRecords('topic2', 1))
  await waitForRecords(backup.cluster, backupTopic2, NUM_RECORDS_PER_PARTITION)
  await assertCopiedOnce(backup.cluster, backupTopic2, NUM_RECORDS_PER_PARTITION)

  if (twoWay) {
    const topic3 = names.topic('test-topic-3')
    await createScenarioTopic(backup.cluster, topic3, NUM_PARTITIONS)
    const reverseTopic3 = remoteTopicName(topic3, BACKUP)
    await waitForTopicCreated(primary.cluster, reverseTopic3)
    await write(backup.cluster, topic3, scenarioRecords('topic3', 1))
    await waitForRecords(primary.cluster, reverseTopic3, NUM_RECORDS_PER_PARTITION)
    await assertCopiedOnce(primary.cluster, reverseTopic3, NUM_RECORDS_PER_PARTITION)
  }

  await stopSidecar(sidecar)
}

/**
 * `createAndTestNewTopicWithConfigFilter`: a topic created on primary with `delete.retention.ms`
 * (excluded by `config.properties.exclude`) and `retention.bytes` set reaches backup with the
 * second only.
 */
export async function createAndTestNewTopicWithConfigFilter (
  names: ScenarioNames,
  primary: LocalCluster,
  backup: LocalCluster,
  remoteTopicName: RemoteTopicName
): Promise<void> {
  const topic = names.topic('test-topic-with-config')
  const backupTopic = remoteTopicName(topic, PRIMARY)
  await createScenarioTopic(primary, topic, NUM_PARTITIONS, { 'delete.retention.ms': '1000', 'retention.bytes': '1000' })
  await waitForTopicCreated(backup, backupTopic)
  assert.notEqual(
    await topicConfig(backup, backupTopic, 'delete.retention.ms'),
    await topicConfig(primary, topic, 'delete.retention.ms'),
    "`delete.retention.ms` should be different, because it's in exclude filter!"
  )
  assert.equal(await topicConfig(backup, backupTopic, 'retention.bytes'), '1000', "`retention.bytes` should be the same, because it isn't in exclude filter!")
}
