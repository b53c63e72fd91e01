/**
 * MirrorMaker 2's offset-sync scenarios (Kafka 4.1's MirrorConnectorsIntegrationBaseTest), ported
 * as black-box tests of the `mirror-sidecar` process on an mm2.properties file, on the two shared
 * local clusters (MirrorMaker 2's `primary` and `backup`; each test takes its own aliases so the
 * internal topics they name are its own). Where the Java test reads with Kafka's client library,
 * so does this one: connect-mirror's `OffsetSyncStore`, the reader MirrorMaker 2's checkpoint task
 * translates with, through test/java/Mm2ClientProbe.java.
 * Where the sidecar does more than MirrorMaker 2 on purpose (it syncs group offsets with its exact
 * translation, not "sync + 1"), the test asserts the stronger result and says so.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { javaSyncStoreTranslate } from '../helpers/java-client.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { mm2File } from '../helpers/mm2-file.js'
import { commitAsAdmin, readToEnd, tagged } from '../helpers/offsets.js'
import { spawnSidecarArgs, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import { readInternalTopicBytes } from '../../src/kafka/internal-topic.js'
import { silentLogger } from '../../src/shared/logger.js'
import { decodeMm2Checkpoint, decodeMm2OffsetSync, type Mm2OffsetSyncRecord } from '../../src/mirror-topics/mm2-records.js'
import { mm2OffsetSyncs } from '../../src/check/translate/mm2-translation.js'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'

const { ConfigResourceTypes } = kafkajs

const PARTITIONS = 3
const RECORDS_PER_PARTITION = 40
/** Records already on each partition of the remote topic: target offsets differ from source offsets. */
const OLD_RECORDS = 5

interface Flow {
  readonly primary: LocalCluster
  readonly backup: LocalCluster
  readonly primaryAlias: string
  readonly backupAlias: string
  readonly group: string
}

async function newFlow (t: TestContext): Promise<Flow> {
  const { source: primary, target: backup } = await sharedClusters()
  const id = uniqueName('p').slice(2)
  const flow = { primary, backup, primaryAlias: `primary${id}`, backupAlias: `backup${id}`, group: `consumer-group-${id}` }
  t.after(async () => {
    for (const [cluster, topic] of [
      [primary, `mm2-offset-syncs.${flow.backupAlias}.internal`], [primary, `mm2-offset-syncs.${flow.primaryAlias}.internal`],
      [backup, `mm2-offset-syncs.${flow.primaryAlias}.internal`], [backup, `mirror-offset-syncs.${flow.primaryAlias}.internal`],
      [backup, `${flow.primaryAlias}.checkpoints.internal`],
    ] as const) await deleteTopicIfExists(cluster, topic)
  })
  return flow
}

/** Starts the sidecar on MirrorMaker 2's test configuration (basicMM2Config: one-way primary -> backup, intervals of 1 s) plus `extra`. */
function startSidecar (t: TestContext, flow: Flow, topics: string, extra: Record<string, string>): SidecarProcess {
  const { primaryAlias: p, backupAlias: b } = flow
  const config = mm2File({
    clusters: `${p}, ${b}`,
    [`${p}.bootstrap.servers`]: flow.primary.bootstrap,
    [`${b}.bootstrap.servers`]: flow.backup.bootstrap,
    [`${p}->${b}.enabled`]: 'true',
    [`${b}->${p}.enabled`]: 'false',
    [`${p}->${b}.topics`]: topics,
    groups: 'consumer-group-.*',
    [`${p}.consumer.auto.offset.reset`]: 'earliest',
    'emit.heartbeats.enabled': 'false',
    'sync.topic.acls.enabled': 'false',
    'emit.checkpoints.interval.seconds': '1',
    'refresh.topics.interval.seconds': '1',
    'offset.flush.interval.ms': '500',
    'replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    ...extra,
  })
  return spawnSidecarArgs(t, [config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
}

async function stopSidecar (sidecar: SidecarProcess): Promise<void> {
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
}

/** Every MirrorMaker 2 offset sync of `topic` in `syncsTopic`, in the order written, per partition. */
async function offsetSyncsOf (cluster: LocalCluster, syncsTopic: string, topic: string): Promise<Map<number, Mm2OffsetSyncRecord[]>> {
  const byPartition = new Map<number, Mm2OffsetSyncRecord[]>()
  await readInternalTopicBytes(cluster.connection('test-mm2-syncs'), syncsTopic, (key, value) => {
    const sync = decodeMm2OffsetSync(key, value)
    if (sync === undefined || sync.topic !== topic) return
    byPartition.set(sync.partition, [...byPartition.get(sync.partition) ?? [], sync])
  }, silentLogger)
  return byPartition
}

async function topicShape (cluster: LocalCluster, topic: string): Promise<{ partitions: number, cleanupPolicy: string | undefined }> {
  return await withAdmin(cluster, async admin => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['cleanup.policy'] }],
    })
    return {
      partitions: topics[0]?.partitions.length ?? 0,
      cleanupPolicy: described.resources[0]?.configEntries.find(e => e.configName === 'cleanup.policy')?.configValue,
    }
  })
}

async function topicNames (cluster: LocalCluster): Promise<string[]> {
  return await withAdmin(cluster, admin => admin.listTopics())
}

/** MirrorMaker 2's assertMonotonicCheckpoints: per group and partition, no checkpoint's downstream offset is below the one before it. */
async function assertMonotonicCheckpoints (cluster: LocalCluster, checkpointsTopic: string): Promise<number> {
  const last = new Map<string, bigint>()
  let count = 0
  await readInternalTopicBytes(cluster.connection('test-checkpoints'), checkpointsTopic, (key, value) => {
    const checkpoint = decodeMm2Checkpoint(key, value)
    if (checkpoint === undefined) return
    count++
    const k = JSON.stringify([checkpoint.group, checkpoint.topic, checkpoint.partition])
    const before = last.get(k)
    assert.ok(
      before === undefined || checkpoint.downstreamOffset >= before,
      `checkpoint was non-monotonic for ${k}: ${checkpoint.downstreamOffset} after ${before}`
    )
    last.set(k, checkpoint.downstreamOffset)
  }, silentLogger)
  return count
}

/** MirrorMaker 2's waitForConsumerGroupFullSync, with the sidecar's exact translation: the target group is at the remote topic's end on every partition. */
async function waitForConsumerGroupFullSync (flow: Flow, remoteTopics: readonly string[]): Promise<void> {
  await waitUntil(async () => {
    for (const remote of remoteTopics) {
      const ends = await endOffsets(flow.backup, remote)
      const committed = await withAdmin(flow.backup, admin => admin.fetchOffsets({ groupId: flow.group, topics: [remote] }))
      const offsets = new Map((committed[0]?.partitions ?? []).map(p => [p.partition, BigInt(p.offset)]))
      for (const [partition, end] of ends) if (offsets.get(partition) !== end) return false
    }
    return true
  }, { timeoutMs: 60_000, intervalMs: 500, message: `${flow.group} synced to the end of ${remoteTopics.join(', ')} on the backup cluster` })
}

/** Per partition, (upstream offset, downstream offset) of each copied record, matched by their unique values: what a MirrorMaker 2 task would have seen. */
async function copyPairs (flow: Flow, topic: string, remote: string): Promise<Map<number, Array<[bigint, bigint]>>> {
  const downstream = new Map<string, bigint>()
  for (const r of await readToEnd(flow.backup, remote)) downstream.set(`${r.partition}:${r.value?.toString() ?? ''}`, BigInt(r.offset))
  const pairs = new Map<number, Array<[bigint, bigint]>>()
  for (const r of await readToEnd(flow.primary, topic)) {
    const down = downstream.get(`${r.partition}:${r.value?.toString() ?? ''}`)
    if (down !== undefined) pairs.set(r.partition, [...pairs.get(r.partition) ?? [], [BigInt(r.offset), down]])
  }
  return pairs
}

async function produceAndConsume (flow: Flow, topic: string, tag: string): Promise<void> {
  await produce(flow.primary, topic, Array.from({ length: PARTITIONS }, (_, p) => tagged(`${tag}-${p}`, p, RECORDS_PER_PARTITION)).flat())
  // The Java test consumes every record with the group and commits: the same committed offsets.
  await commitAsAdmin(flow.primary, flow.group, topic, await endOffsets(flow.primary, topic))
}

/**
 * testOneWayReplicationWithOffsetSyncs(offsetLagMax): one-way replication with group offset sync;
 * the syncs on the source cluster follow MirrorMaker 2's rules, MirrorMaker 2's own reader
 * translates from them, and a second topic created later is synced too.
 */
async function oneWayReplicationWithOffsetSyncs (t: TestContext, offsetLagMax: number): Promise<void> {
  const flow = await newFlow(t)
  const base = uniqueName('test-topic')
  const topic1 = await createTopic(t, flow.primary, { name: `${base}-1`, partitions: PARTITIONS })
  const remote1 = `${flow.primaryAlias}.${topic1}`
  await createTopic(t, flow.backup, { name: remote1, partitions: PARTITIONS })
  await produce(flow.backup, remote1, Array.from({ length: PARTITIONS }, (_, p) => tagged('old', p, OLD_RECORDS)).flat())
  await produceAndConsume(flow, topic1, 'one')
  t.after(() => deleteTopicIfExists(flow.backup, `${flow.primaryAlias}.${base}-2`))

  const sidecar = startSidecar(t, flow, `${base}-.*`, {
    'sync.group.offsets.enabled': 'true',
    'sync.group.offsets.interval.seconds': '1',
    'offset.lag.max': String(offsetLagMax),
  })
  await waitMirroring(sidecar)
  await waitUntil(async () => (await totalRecords(flow.backup, remote1)) === BigInt(PARTITIONS * (OLD_RECORDS + RECORDS_PER_PARTITION)), {
    timeoutMs: 60_000,
    message: 'the records copied',
  })
  // The sidecar commits its exact translation, where MirrorMaker 2's test accepts up to offset.lag.max behind.
  await waitForConsumerGroupFullSync(flow, [remote1])

  // The default location: MirrorMaker 2's topic on the source, named after the target, as MirrorMaker 2 creates it.
  const syncsTopic = `mm2-offset-syncs.${flow.backupAlias}.internal`
  assert.deepEqual(await topicShape(flow.primary, syncsTopic), { partitions: 1, cleanupPolicy: 'compact' })
  // This flow's names only: other scenarios on the same clusters run their own flows both ways.
  const flowSyncsTopics = [`mm2-offset-syncs.${flow.primaryAlias}.internal`, `mm2-offset-syncs.${flow.backupAlias}.internal`]
  assert.ok(!(await topicNames(flow.backup)).some(name => flowSyncsTopics.includes(name)), 'no MirrorMaker 2 syncs topic of this flow on the target')
  await waitUntil(async () => (await offsetSyncsOf(flow.primary, syncsTopic, topic1)).size === PARTITIONS, {
    timeoutMs: 30_000,
    message: 'the syncs of every partition',
  })
  const syncs = await offsetSyncsOf(flow.primary, syncsTopic, topic1)
  const copies = await copyPairs(flow, topic1, remote1)
  for (let p = 0; p < PARTITIONS; p++) {
    const written = (syncs.get(p) ?? []).map((s): [number, number] => [Number(s.upstreamOffset), Number(s.downstreamOffset)])
    const pairs = copies.get(p) ?? []
    const copied = new Map(pairs.map(([up, down]) => [Number(up), Number(down)]))
    for (const [up, down] of written) assert.equal(down, copied.get(up), `partition ${p}: sync ${up} -> ${down} names where the record is`)
    // Every sync MirrorMaker 2's rules ask for is written, in order; the others are its delayed syncs (the last record at a flush).
    const asked = mm2OffsetSyncs(pairs, BigInt(offsetLagMax)).map((s): [number, number] => [Number(s.upstream), Number(s.downstream)])
    assert.deepEqual(
      written.filter(([up]) => asked.some(([u]) => u === up)),
      asked,
      `partition ${p}: the syncs of MirrorMaker 2's rules (offset.lag.max ${offsetLagMax})`
    )
    assert.deepEqual(written.at(-1), [RECORDS_PER_PARTITION - 1, OLD_RECORDS + RECORDS_PER_PARTITION - 1], `partition ${p}: the last record is synced`)
    if (offsetLagMax === 0) assert.equal(written.length, RECORDS_PER_PARTITION, `partition ${p}: offset.lag.max 0 syncs every record`)
  }

  // MirrorMaker 2's checkpoint task reads them with OffsetSyncStore (which, started on a written
  // topic, keeps each partition's newest sync: it translates from there on): the group's committed offsets translate exactly.
  const atEnd = [...Array(PARTITIONS).keys()].map(p => [p, BigInt(RECORDS_PER_PARTITION)] as [number, bigint])
  const store = await javaSyncStoreTranslate(
    {
      sourceBootstrap: flow.primary.bootstrap,
      targetBootstrap: flow.backup.bootstrap,
      sourceAlias: flow.primaryAlias,
      targetAlias: flow.backupAlias,
      location: 'source',
    },
    topic1,
    atEnd
  )
  assert.deepEqual(store.map(r => r.downstreamOffset), Array(PARTITIONS).fill(OLD_RECORDS + RECORDS_PER_PARTITION), JSON.stringify(store))

  // mirror-check translate --mm2 reads the same syncs with MirrorMaker 2's rule: the same answers as its own reader for the
  // group; for a group behind (assertDownstreamRedeliveriesBoundedByMaxLag), at or before the exact offset, at most offset.lag.max re-read.
  const behind = `behind-${flow.group}`
  await commitAsAdmin(flow.primary, behind, topic1, new Map([...Array(PARTITIONS).keys()].map(p => [p, 20n])))
  const translate = async (group: string): Promise<Array<[number, number | null]>> => {
    const cli = await runMirrorCheck([
      'translate',
      '--mm2',
      '--source',
      flow.primary.bootstrap,
      '--target',
      flow.backup.bootstrap,
      '--group',
      group,
      '--topic',
      topic1,
      '--source-alias',
      flow.primaryAlias,
      '--target-alias',
      flow.backupAlias,
      '--format',
      'json',
    ])
    assert.equal(cli.code, 0, cli.stderr)
    return (JSON.parse(cli.stdout) as Array<{ partition: number, targetOffset: number | null }>).map(r => [r.partition, r.targetOffset])
  }
  assert.deepEqual(await translate(flow.group), store.map(r => [r.partition, r.downstreamOffset]))
  for (const [partition, translated] of await translate(behind)) {
    const exact = OLD_RECORDS + 20
    assert.ok(
      translated !== null && translated <= exact && translated >= exact - offsetLagMax,
      `partition ${partition}: ${translated} at most offset.lag.max ${offsetLagMax} before ${exact}`
    )
    if (offsetLagMax === 0) assert.equal(translated, exact, 'a sync at every record: exact')
  }

  // A topic created while the mirror runs: found, copied, its syncs start at its first record, its group offsets synced.
  const topic2 = await createTopic(t, flow.primary, { name: `${base}-2`, partitions: PARTITIONS })
  const remote2 = `${flow.primaryAlias}.${topic2}`
  await waitUntil(async () => (await topicNames(flow.backup)).includes(remote2), { timeoutMs: 30_000, message: `${remote2} created on the backup cluster` })
  await produceAndConsume(flow, topic2, 'two')
  await waitForConsumerGroupFullSync(flow, [remote1, remote2])
  await waitUntil(
    async () =>
      [...(await offsetSyncsOf(flow.primary, syncsTopic, topic2)).values()].filter(list => list[0]?.upstreamOffset === 0n && list[0].downstreamOffset === 0n)
        .length === PARTITIONS,
    { timeoutMs: 30_000, message: `the first syncs of ${topic2}` }
  )
  assert.ok(await assertMonotonicCheckpoints(flow.backup, `${flow.primaryAlias}.checkpoints.internal`) > 0, 'checkpoints were written')
  await stopSidecar(sidecar)
}

test(
  "testOneWayReplicationWithAutoOffsetSync: offset.lag.max 10, syncs on the source by MirrorMaker 2's rules, read by its own OffsetSyncStore",
  { timeout: 180_000 },
  async t => {
    await oneWayReplicationWithOffsetSyncs(t, 10)
  }
)

test(
  "testOneWayReplicationWithFrequentOffsetSyncs: offset.lag.max 0 syncs every record; a group anywhere translates exactly by MirrorMaker 2's rule",
  { timeout: 180_000 },
  async t => {
    await oneWayReplicationWithOffsetSyncs(t, 0)
  }
)

test(
  'testReplicationWithoutOffsetSyncWillNotCreateOffsetSyncsTopic: emit.offset-syncs.enabled = false copies the records and creates no offset-syncs topic',
  { timeout: 120_000 },
  async t => {
    const flow = await newFlow(t)
    const topic = await createTopic(t, flow.primary, { name: uniqueName('test-topic-1'), partitions: PARTITIONS })
    const remote = `${flow.primaryAlias}.${topic}`
    t.after(() => deleteTopicIfExists(flow.backup, remote))
    await produceAndConsume(flow, topic, 'off')
    const sidecar = startSidecar(t, flow, topic, { 'emit.offset-syncs.enabled': 'false' })
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(flow.backup, remote).catch(() => 0n)) === BigInt(PARTITIONS * RECORDS_PER_PARTITION), {
      timeoutMs: 60_000,
      message: 'the records copied',
    })
    // The commit after the copy: by then a syncs topic would have been created and written.
    await waitUntil(
      async () => {
        const committed = await withAdmin(flow.primary, admin =>
          admin.fetchOffsets({ groupId: `mirror-sidecar.${flow.primaryAlias}-to-${flow.backupAlias}`, topics: [topic] })
        )
        return (committed[0]?.partitions ?? []).every(p => p.offset === String(RECORDS_PER_PARTITION))
      },
      { timeoutMs: 30_000, message: "the mirror's commit" }
    )
    for (const [cluster, name] of [
      [flow.primary, 'primary'],
      [flow.backup, 'backup'],
    ] as const) {
      const found = (await topicNames(cluster)).filter(n => n.includes(flow.primaryAlias) && n.includes('offset-syncs'))
      assert.deepEqual(
        found.concat((await topicNames(cluster)).filter(n => n.includes(flow.backupAlias) && n.includes('offset-syncs'))),
        [],
        `no offset-syncs topic on the ${name} cluster (neither MirrorMaker 2's nor the sidecar's exact one)`
      )
    }
    await stopSidecar(sidecar)
  }
)

for (const exactlyOnce of [false, true]) {
  const mode = exactlyOnce ? ', exactly-once (as MirrorConnectorsIntegrationExactlyOnceTest runs it): the syncs in the lane transactions' : ''
  test(
    `testOffsetSyncsTopicsOnTarget: offset-syncs.topic.location = target puts mm2-offset-syncs.<source>.internal on the target and none on the source; checkpoints follow${mode}`,
    { timeout: 150_000 },
    async t => {
      const flow = await newFlow(t)
      const topic = await createTopic(t, flow.primary, { name: uniqueName('test-topic-1'), partitions: PARTITIONS })
      const remote = `${flow.primaryAlias}.${topic}`
      t.after(() => deleteTopicIfExists(flow.backup, remote))
      const sidecar = startSidecar(t, flow, topic, {
        [`${flow.primaryAlias}->${flow.backupAlias}.offset-syncs.topic.location`]: 'target',
        'offset.lag.max': '10',
        ...(exactlyOnce ? { [`${flow.backupAlias}.exactly.once.source.support`]: 'enabled' } : {}),
      })
      await waitMirroring(sidecar)
      const syncsTopic = `mm2-offset-syncs.${flow.primaryAlias}.internal`
      assert.deepEqual(await topicShape(flow.backup, syncsTopic), { partitions: 1, cleanupPolicy: 'compact' }, 'created on the target before the flow copies')

      await produceAndConsume(flow, topic, 'target')
      await waitUntil(
        async () => {
          let found = false
          await readInternalTopicBytes(
            flow.backup.connection('test-checkpoints'),
            `${flow.primaryAlias}.checkpoints.internal`,
            (key, value) => {
              if (decodeMm2Checkpoint(key, value)?.topic === remote) found = true
            },
            silentLogger
          ).catch(() => undefined)
          return found
        },
        { timeoutMs: 60_000, intervalMs: 1000, message: `checkpoints for ${remote}` }
      )
      assert.ok((await assertMonotonicCheckpoints(flow.backup, `${flow.primaryAlias}.checkpoints.internal`)) > 0)
      const onPrimary = await topicNames(flow.primary)
      assert.ok(
        !onPrimary.includes(`mm2-offset-syncs.${flow.primaryAlias}.internal`) && !onPrimary.includes(`mm2-offset-syncs.${flow.backupAlias}.internal`),
        'no offset-syncs topic on the source'
      )

      if (exactlyOnce) {
        // Written in the lane transactions: the topic holds their commit markers besides its records.
        let records = 0
        await readInternalTopicBytes(
          flow.backup.connection('test-mm2-syncs'),
          syncsTopic,
          () => {
            records++
          },
          silentLogger
        )
        const end = (await endOffsets(flow.backup, syncsTopic)).get(0) ?? 0n
        assert.ok(records > 0 && end > BigInt(records), `${records} syncs below end offset ${end}: transaction markers among them`)
      }
      // MirrorMaker 2's checkpoint task, told the syncs are on the target, finds them: the group's offsets translate exactly.
      const store = await javaSyncStoreTranslate(
        {
          sourceBootstrap: flow.primary.bootstrap,
          targetBootstrap: flow.backup.bootstrap,
          sourceAlias: flow.primaryAlias,
          targetAlias: flow.backupAlias,
          location: 'target',
        },
        topic,
        [...Array(PARTITIONS).keys()].map(p => [p, BigInt(RECORDS_PER_PARTITION)] as [number, bigint])
      )
      assert.deepEqual(
        store.map(r => r.downstreamOffset),
        Array(PARTITIONS).fill(RECORDS_PER_PARTITION),
        JSON.stringify(store)
      )
      // mirror-check failover --mm2 finds MirrorMaker 2's topic on the target under its name there, and plans the same offsets.
      const cli = await runMirrorCheck([
        'failover',
        '--mm2',
        '--source',
        flow.primary.bootstrap,
        '--target',
        flow.backup.bootstrap,
        '--group',
        flow.group,
        '--source-alias',
        flow.primaryAlias,
        '--target-alias',
        flow.backupAlias,
        '--format',
        'json',
      ])
      const plan = JSON.parse(cli.stdout) as {
        to: { offsetSyncsTopic: string }
        groups: Array<{ partitions: Array<{ partition: number, translatedOffset: number | null }> }>
      }
      assert.equal(plan.to.offsetSyncsTopic, syncsTopic, cli.stderr)
      assert.deepEqual(
        plan.groups[0]?.partitions.map(p => p.translatedOffset),
        Array(PARTITIONS).fill(RECORDS_PER_PARTITION),
        cli.stdout
      )
      await stopSidecar(sidecar)
    }
  )
}
