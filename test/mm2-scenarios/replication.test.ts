// MirrorMaker 2's MirrorConnectorsIntegrationBaseTest, ported as black-box tests of the mirror-sidecar
// process: each test writes an mm2.properties for clusters `primary` and `backup` (the default
// local pair, shared by every test of the file) and runs the real sidecar on it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { javaRemoteConsumerOffsets } from '../helpers/java-client.js'
import { committedOffsets, endOffsets, readAll, sharedClusters, totalRecords } from '../helpers/kafka.js'
import { commitAsAdmin, consumeAndCommit } from '../helpers/offsets.js'
import { waitUntil } from '../helpers/wait.js'
import {
  assertMonotonicCheckpoints,
  byPartition,
  cleanUpScenarioTopics,
  createScenarioTopic,
  defaultRemoteTopic,
  NUM_PARTITIONS,
  NUM_RECORDS_PER_PARTITION,
  NUM_RECORDS_PRODUCED,
  plainWriter,
  PRIMARY,
  recordsFrom,
  scenarioMm2Properties,
  scenarioRecords,
  ScenarioNames,
  startSidecar,
  stopSidecar,
  waitForCheckpointOnAllPartitions,
  waitForTopicCreated,
  type ScenarioCluster,
} from './mm2-scenario.js'
import { testReplication } from './replication-scenario.js'

async function primaryAndBackup (): Promise<{ primary: ScenarioCluster, backup: ScenarioCluster }> {
  const { source, target } = await sharedClusters()
  return { primary: { cluster: source, bootstrap: source.bootstrap }, backup: { cluster: target, bootstrap: target.bootstrap } }
}

const allPartitions = (offset: bigint, partitions = NUM_PARTITIONS): Map<number, bigint> => new Map(Array.from({ length: partitions }, (_, p) => [p, offset]))

test(
  'testReplication: both directions, topic configs synced, heartbeats and upstream clusters, checkpoints on every partition, failover and failback at exact offsets, monotonic checkpoints, new topics mirrored',
  { timeout: 240_000 },
  async t => {
    const { primary, backup } = await primaryAndBackup()
    await testReplication(t, { primary, backup, twoWay: true, remoteTopicName: defaultRemoteTopic, write: plainWriter })
  }
)

test(
  "testReplicationWithEmptyPartition: the empty partition is mirrored empty; the others' group offsets are synced exactly, the empty one's is never invented",
  { timeout: 180_000 },
  async t => {
    const { primary, backup } = await primaryAndBackup()
    const names = new ScenarioNames()
    cleanUpScenarioTopics(t, names, [primary.cluster, backup.cluster])
    const topic = names.topic('test-topic-with-empty-partition')
    const group = names.group('testReplicationWithEmptyPartition')
    const last = NUM_PARTITIONS - 1
    await createScenarioTopic(primary.cluster, topic, NUM_PARTITIONS)
    await plainWriter(primary.cluster, topic, scenarioRecords('empty', NUM_PARTITIONS - 1))
    // The group read every record; the Java consumer's commitSync also commits position 0 of the empty partition.
    await commitAsAdmin(primary.cluster, group, topic, new Map([...allPartitions(BigInt(NUM_RECORDS_PER_PARTITION), last), [last, 0n]]))

    // MirrorMaker 2's test has a consumer of the group on backup read every record and commit its
    // positions, the empty partition's 0 among them: that offset is the consumer's own. What the
    // mirror owes is checked here instead, with sync.group.offsets.enabled: the empty partition
    // exists on backup, the other nine get the group's offsets exactly, and the empty one gets no
    // offset (no record of it was mirrored, so there is nothing to translate, as in
    // testNoCheckpointsIfNoRecordsAreMirrored): a consumer of the group starts it at the beginning.
    const { sidecar } = startSidecar(
      t,
      scenarioMm2Properties(names, primary, backup, {
        twoWay: false,
        extra: { 'sync.group.offsets.enabled': 'true', 'sync.group.offsets.interval.seconds': '1' },
      })
    )
    const backupTopic = defaultRemoteTopic(topic, PRIMARY)
    await waitUntil(async () => (await totalRecords(backup.cluster, backupTopic).catch(() => 0n)) === BigInt(NUM_RECORDS_PER_PARTITION * last), {
      timeoutMs: 60_000,
      message: 'the records on backup',
    })
    assert.equal((await endOffsets(backup.cluster, backupTopic)).size, NUM_PARTITIONS, 'every partition on backup, the empty one too')
    const expected = [...allPartitions(BigInt(NUM_RECORDS_PER_PARTITION), last).values(), -1n].map(String)
    await waitUntil(
      async () => JSON.stringify([...(await committedOffsets(backup.cluster, group, backupTopic)).values()].map(String)) === JSON.stringify(expected),
      { timeoutMs: 60_000, intervalMs: 500, message: `the group's offsets ${expected.join(',')} on backup` }
    )
    const translated = byPartition(await javaRemoteConsumerOffsets(backup.cluster.bootstrap, PRIMARY, group), backupTopic)
    assert.deepEqual(
      [...translated.keys()].sort((a, b) => a - b),
      Array.from({ length: last }, (_, p) => p),
      'checkpoints for the nine partitions with records, none for the empty one'
    )
    assert.deepEqual(
      await recordsFrom(backup.cluster, backupTopic, await committedOffsets(backup.cluster, group, backupTopic)),
      [],
      'the group on backup reads nothing again'
    )
    await stopSidecar(sidecar)
  }
)

test('testNoCheckpointsIfNoRecordsAreMirrored: no checkpoint for a partition until a record of it was mirrored', { timeout: 180_000 }, async t => {
  const { primary, backup } = await primaryAndBackup()
  const names = new ScenarioNames()
  cleanUpScenarioTopics(t, names, [primary.cluster, backup.cluster])
  const topic1 = names.topic('test-topic-1')
  const noCheckpoints = names.topic('test-topic-no-checkpoints')
  const group = names.group('no-checkpoints')
  await createScenarioTopic(primary.cluster, topic1, NUM_PARTITIONS)
  await createScenarioTopic(primary.cluster, noCheckpoints, 1)
  await plainWriter(primary.cluster, topic1, scenarioRecords('primary'))

  const { sidecar } = startSidecar(t, scenarioMm2Properties(names, primary, backup, { twoWay: false }))
  const remote1 = defaultRemoteTopic(topic1, PRIMARY)
  const remoteNoCheckpoints = defaultRemoteTopic(noCheckpoints, PRIMARY)
  await waitForTopicCreated(backup.cluster, remote1)
  await waitForTopicCreated(backup.cluster, remoteNoCheckpoints)
  await waitUntil(async () => (await totalRecords(backup.cluster, remote1)) === BigInt(NUM_RECORDS_PRODUCED), {
    timeoutMs: 60_000,
    message: 'the records on backup',
  })

  // The group commits the end offsets of both topics' partition 0: 10 and 0.
  const commitEnds = async (): Promise<void> => {
    await commitAsAdmin(primary.cluster, group, topic1, new Map([[0, (await endOffsets(primary.cluster, topic1)).get(0) as bigint]]))
    await commitAsAdmin(primary.cluster, group, noCheckpoints, new Map([[0, (await endOffsets(primary.cluster, noCheckpoints)).get(0) as bigint]]))
  }
  await commitEnds()
  let translated = new Map<string, number>()
  const translate = async (): Promise<Map<string, number>> => {
    const rows = await javaRemoteConsumerOffsets(backup.cluster.bootstrap, PRIMARY, group, 3000)
    translated = new Map(rows.filter(r => r.partition === 0).map(r => [r.topic, r.offset]))
    return translated
  }
  await waitUntil(async () => (await translate()).has(remote1) && !translated.has(remoteNoCheckpoints),
    { timeoutMs: 30_000, intervalMs: 500, message: 'Checkpoints were not emitted correctly to backup cluster' })
  assert.equal(translated.get(remote1), NUM_RECORDS_PER_PARTITION, 'exact: the end of partition 0 on backup')

  await plainWriter(primary.cluster, noCheckpoints, scenarioRecords('late', 1, NUM_RECORDS_PRODUCED))
  await commitEnds()
  await waitUntil(async () => (await translate()).has(remote1) && translated.get(remoteNoCheckpoints) === NUM_RECORDS_PRODUCED,
    { timeoutMs: 60_000, intervalMs: 500, message: 'Checkpoints were not emitted correctly to backup cluster' })
  await stopSidecar(sidecar)
})

test(
  'testRestartReplication: group offsets synced exactly before and after a restart of the sidecar; checkpoints monotonic across it',
  { timeout: 240_000 },
  async t => {
    const { primary, backup } = await primaryAndBackup()
    const names = new ScenarioNames()
    cleanUpScenarioTopics(t, names, [primary.cluster, backup.cluster])
    const topic1 = names.topic('test-topic-1')
    const group = names.group('restart')
    const remoteTopic = defaultRemoteTopic(topic1, PRIMARY)
    await createScenarioTopic(primary.cluster, topic1, NUM_PARTITIONS)
    const properties = scenarioMm2Properties(names, primary, backup, {
      twoWay: false,
      extra: { 'sync.group.offsets.enabled': 'true', 'sync.group.offsets.interval.seconds': '1', 'offset.lag.max': '10' },
    })
    const perPartition = (n: number): Map<number, number> => new Map(Array.from({ length: NUM_PARTITIONS }, (_, p) => [p, n]))

    // waitForConsumerGroupFullSync: MirrorMaker 2 accepts a synced offset within offset.lag.max of the
    // last record; the sidecar's is the exact end, so the group on backup reads nothing again.
    const waitForConsumerGroupFullSync = async (records: number): Promise<void> => {
      await waitUntil(async () => (await totalRecords(backup.cluster, remoteTopic).catch(() => 0n)) === BigInt(records), {
        timeoutMs: 60_000,
        message: `${records} records on backup`,
      })
      await waitUntil(
        async () => [...(await committedOffsets(backup.cluster, group, remoteTopic)).values()].every(o => o === BigInt(records / NUM_PARTITIONS)),
        { timeoutMs: 60_000, intervalMs: 500, message: `the group's offsets on backup at ${records / NUM_PARTITIONS} on every partition` }
      )
      assert.deepEqual(
        await recordsFrom(backup.cluster, remoteTopic, await committedOffsets(backup.cluster, group, remoteTopic)),
        [],
        'the synced group reads nothing again'
      )
    }

    const first = startSidecar(t, properties)
    await plainWriter(primary.cluster, topic1, scenarioRecords('first'))
    await consumeAndCommit(primary.cluster, topic1, group, perPartition(NUM_RECORDS_PER_PARTITION))
    await waitForConsumerGroupFullSync(NUM_RECORDS_PRODUCED)
    await stopSidecar(first.sidecar)

    const second = startSidecar(t, properties)
    await assertMonotonicCheckpoints(backup.cluster, `${PRIMARY}.checkpoints.internal`, names)
    await plainWriter(primary.cluster, topic1, scenarioRecords('second'))
    // The group resumes from its committed offsets: 10 more records per partition.
    await consumeAndCommit(primary.cluster, topic1, group, perPartition(NUM_RECORDS_PER_PARTITION))
    await waitForConsumerGroupFullSync(2 * NUM_RECORDS_PRODUCED)
    await assertMonotonicCheckpoints(backup.cluster, `${PRIMARY}.checkpoints.internal`, names)
    await stopSidecar(second.sidecar)
  }
)

test(
  'testOffsetTranslationBehindReplicationFlow: checkpoints advance when the group advances and rewind when it rewinds, exactly',
  { timeout: 240_000 },
  async t => {
    const { primary, backup } = await primaryAndBackup()
    const names = new ScenarioNames()
    cleanUpScenarioTopics(t, names, [primary.cluster, backup.cluster])
    const topic1 = names.topic('test-topic-1')
    const group = names.group('lagging-behind')
    const remoteTopic = defaultRemoteTopic(topic1, PRIMARY)
    await createScenarioTopic(primary.cluster, topic1, NUM_PARTITIONS)
    const { sidecar } = startSidecar(
      t,
      scenarioMm2Properties(names, primary, backup, {
        twoWay: false,
        extra: { 'sync.group.offsets.enabled': 'true', 'sync.group.offsets.interval.seconds': '1', 'offset.lag.max': '10' },
      })
    )

    // An initial batch, read by the group, establishes a checkpoint on every partition.
    await plainWriter(primary.cluster, topic1, scenarioRecords('initial'))
    await commitAsAdmin(primary.cluster, group, topic1, allPartitions(BigInt(NUM_RECORDS_PER_PARTITION)))
    const initial = await waitForCheckpointOnAllPartitions(backup.cluster, group, PRIMARY, remoteTopic)

    // Many more records, all mirrored in one sidecar lifetime (MirrorMaker 2 writes 99 more batches; 9 keep the file short).
    const iterations = 10
    for (let i = 1; i < iterations; i++) await plainWriter(primary.cluster, topic1, scenarioRecords(`more-${i}`))
    const total = iterations * NUM_RECORDS_PER_PARTITION
    await waitUntil(async () => (await totalRecords(backup.cluster, remoteTopic)) === BigInt(iterations * NUM_RECORDS_PRODUCED), {
      timeoutMs: 60_000,
      message: 'Records were not replicated to backup cluster.',
    })

    // partialOffsets(0.9), then partialOffsets(0.1): the offset of the record at that fraction of each partition.
    const fraction = (f: number): Map<number, bigint> => allPartitions(BigInt(Math.floor(total * f)))
    await commitAsAdmin(primary.cluster, group, topic1, fraction(0.9))
    const partial = await waitForCheckpointOnAllPartitions(backup.cluster, group, PRIMARY, remoteTopic, initial)
    for (const [p, offset] of initial) assert.ok(offset < (partial.get(p) as number), 'Checkpoints should advance when the upstream consumer group advances')
    // The target topic holds exactly the source's records: the exact translation is the same offset.
    assert.deepEqual([...partial.values()], [...fraction(0.9).values()].map(Number), 'exact translations')
    await assertMonotonicCheckpoints(backup.cluster, `${PRIMARY}.checkpoints.internal`, names)

    await commitAsAdmin(primary.cluster, group, topic1, fraction(0.1))
    const final = await waitForCheckpointOnAllPartitions(backup.cluster, group, PRIMARY, remoteTopic, partial)
    for (const [p, offset] of partial) assert.ok((final.get(p) as number) < offset, 'Checkpoints should rewind when the upstream consumer group rewinds')
    assert.deepEqual([...final.values()], [...fraction(0.1).values()].map(Number), 'exact translations')
    await stopSidecar(sidecar)
  }
)

test(
  'testReplicateFromLatest: with primary.consumer.auto.offset.reset = latest only the records written after the start are mirrored',
  { timeout: 180_000 },
  async t => {
    const { primary, backup } = await primaryAndBackup()
    const names = new ScenarioNames()
    cleanUpScenarioTopics(t, names, [primary.cluster, backup.cluster])
    const topic = names.topic('test-topic-1')
    const sentinel = names.topic('test-topic-sentinel')
    await createScenarioTopic(primary.cluster, topic, NUM_PARTITIONS)
    await createScenarioTopic(primary.cluster, sentinel, 1)
    await plainWriter(primary.cluster, topic, scenarioRecords('before'))

    const { sidecar } = startSidecar(
      t,
      scenarioMm2Properties(names, primary, backup, { twoWay: false, extra: { [`${PRIMARY}.consumer.auto.offset.reset`]: 'latest' } })
    )
    const backupSentinel = defaultRemoteTopic(sentinel, PRIMARY)
    await waitForTopicCreated(backup.cluster, backupSentinel)
    // Proof that the sidecar has fetched: a sentinel record written now reaches backup.
    await waitUntil(
      async () => {
        await plainWriter(primary.cluster, sentinel, [{ value: 'sentinel-value' }])
        return (await totalRecords(backup.cluster, backupSentinel)) > 0n
      },
      { timeoutMs: 30_000, intervalMs: 1000, message: 'Records were not produced to sentinel topic in time' }
    )

    await plainWriter(primary.cluster, topic, scenarioRecords('after'))
    const backupTopic = defaultRemoteTopic(topic, PRIMARY)
    await waitUntil(async () => (await totalRecords(backup.cluster, backupTopic).catch(() => 0n)) >= BigInt(NUM_RECORDS_PRODUCED), {
      timeoutMs: 60_000,
      message: 'the records written after the start',
    })
    const replicated = await readAll(backup.cluster, backupTopic)
    for (let p = 0; p < NUM_PARTITIONS; p++) {
      const values = replicated.filter(r => r.partition === p).map(r => r.value?.toString() ?? '')
      assert.equal(values.length, NUM_RECORDS_PER_PARTITION, `Unexpected number of replicated records for partition ${p}`)
      assert.ok(
        values.every(v => v.startsWith('after-')),
        `partition ${p}: only records written after the start: ${values.join(',')}`
      )
    }
    await stopSidecar(sidecar)
  }
)
