import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InternalTopicWriter, readInternalTopic } from '../../src/kafka/internal-topic.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../../src/check/translate/offset-sync-store.js'
import { silentLogger } from '../../src/shared/logger.js'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'
import { mm2File } from '../helpers/mm2-file.js'

/** kafkajs' `ConfigResourceTypes.TOPIC` (tests import kafkajs for types only). */
const TOPIC_RESOURCE = 2
const SIDECAR_FLAGS = ['--metrics.port', '0', '--metrics.host', '127.0.0.1']
const PARTITIONS = 60
const PER_PARTITION = 3

test(
  'offset syncs are split into requests the syncs topic accepts (max.message.bytes 4096): every partition is committed and translates',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    // A source alias of its own gives this test its own offset-syncs topic on the shared target.
    const alias = uniqueName('split').replace(/-/g, '')
    // The flow mirrors the source's heartbeats and checkpoints its groups under this alias.
    for (const name of [`${alias}.heartbeats`, `${alias}.checkpoints.internal`]) t.after(() => deleteTopicIfExists(target, name))
    const syncsTopic = offsetSyncsTopicName(alias)
    await createTopic(t, target, { name: syncsTopic, configs: { 'cleanup.policy': 'compact', 'max.message.bytes': '4096' } })
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    // Created here with its leaders: produce retries on a just-created topic are not what this test is about.
    await createTopic(t, target, { name: `${alias}.${topic}`, partitions: PARTITIONS })
    await produce(
      source,
      topic,
      Array.from({ length: PARTITIONS * PER_PARTITION }, (_, i) => ({ partition: i % PARTITIONS, key: `k${i}`, value: `v${i}` }))
    )
    const group = uniqueName('split-mirror')
    const config = mm2File({
      clusters: `${alias}, B`,
      [`${alias}.bootstrap.servers`]: source.bootstrap,
      'B.bootstrap.servers': target.bootstrap,
      [`${alias}->B.enabled`]: 'true',
      topics: topic,
      [`${alias}.consumer.group.id`]: group,
      'refresh.topics.interval.seconds': '1',
      'offset.flush.interval.ms': '500',
      'replication.factor': '1',
    })
    const ends = await endOffsets(source, topic)
    assert.equal([...ends.values()].filter(end => end > 0n).length, PARTITIONS, 'records on every source partition')
    const sidecar = spawnSidecarArgs(t, [config, ...SIDECAR_FLAGS])
    await waitMirroring(sidecar)
    // One flush carries a range and a position per partition, about 250 bytes each: some 30 KB, far above 4096.
    const unCommitted = async (): Promise<string[]> => {
      const committed = await committedOffsets(source, group, topic)
      return [...ends].filter(([partition, end]) => committed.get(partition) !== end).map(([partition]) => String(partition))
    }
    await waitUntil(async () => (await unCommitted()).length === 0, {
      timeoutMs: 60_000,
      message: `source offsets committed on all ${PARTITIONS} partitions`,
    }).catch(async error => {
      throw new Error(
        `${(error as Error).message}; not committed: ${(await unCommitted()).join(',')}; ${sidecar
          .stderr()
          .split('\n')
          .filter(line => line.includes('commit failed'))
          .slice(-1)
          .join('')}`
      )
    })
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
    assert.doesNotMatch(sidecar.stderr(), /commit failed/)

    const syncs = await loadOffsetSyncs(target.connection('test'), syncsTopic)
    for (const [partition, end] of ends) {
      assert.deepEqual(
        syncs.translate(topic, partition, end),
        { status: 'translated', targetTopic: `${alias}.${topic}`, targetOffset: end, basis: 'position' },
        `partition ${partition}`
      )
    }
    const batches = await withAdmin(target, admin => admin.fetchTopicOffsets(syncsTopic))
    assert.ok(Number(batches[0]?.high) >= PARTITIONS * 2, 'every range and position is on the syncs topic')
  }
)

test(
  'offset-syncs.topic.replication.factor and checkpoints.topic.replication.factor create the internal topics; one the cluster cannot give stops the sidecar naming the key',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const alias = uniqueName('rf').replace(/-/g, '')
    const syncsTopic = offsetSyncsTopicName(alias)
    const checkpointsTopic = `${alias}.checkpoints.internal`
    for (const name of [syncsTopic, checkpointsTopic, `${alias}.heartbeats`]) t.after(() => deleteTopicIfExists(target, name))
    const topic = await createTopic(t, source)
    t.after(() => deleteTopicIfExists(target, `${alias}.${topic}`))
    const file = (extra: Record<string, string>): string =>
      mm2File({
        clusters: `${alias}, B`,
        [`${alias}.bootstrap.servers`]: source.bootstrap,
        'B.bootstrap.servers': target.bootstrap,
        [`${alias}->B.enabled`]: 'true',
        topics: topic,
        [`${alias}.consumer.group.id`]: uniqueName('rf-mirror'),
        'replication.factor': '1',
        'sync.group.offsets.enabled': 'true',
        ...extra,
      })

    const refused = spawnSidecarArgs(t, [file({ 'offset-syncs.topic.replication.factor': '3' }), ...SIDECAR_FLAGS])
    assert.equal(await refused.exited, 2, refused.stderr().slice(-2000))
    assert.match(
      refused.stderr(),
      /mirror-sidecar: offset-syncs\.topic\.replication\.factor 3: the B cluster cannot create mirror-offset-syncs\.rf[0-9a-f]+\.internal with it .*set offset-syncs\.topic\.replication\.factor to at most the number of brokers/
    )
    assert.equal((await withAdmin(target, admin => admin.listTopics())).includes(syncsTopic), false)

    const sidecar = spawnSidecarArgs(t, [file({ 'offset-syncs.topic.replication.factor': '1', 'checkpoints.topic.replication.factor': '1' }), ...SIDECAR_FLAGS])
    await waitMirroring(sidecar)
    assert.doesNotMatch(sidecar.stderr(), /configuration keys ignored/)
    await waitUntil(() => sidecar.stderr().includes('"msg":"writing checkpoints and syncing consumer group offsets"'), {
      message: 'the group offset sync to start (after creating the checkpoints topic)',
    })
    const metadata = await withAdmin(target, admin => admin.fetchTopicMetadata({ topics: [syncsTopic, checkpointsTopic] }))
    assert.deepEqual(
      metadata.topics.map(m => [m.name, m.partitions.length, m.partitions[0]?.replicas.length]).sort(),
      [
        [checkpointsTopic, 1, 1],
        [syncsTopic, 1, 1],
      ].sort()
    )
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)

test(
  'a topic whose max.message.bytes shrinks after the writer read it still takes every record, in order, in smaller requests',
  { timeout: 60_000 },
  async t => {
    const { target } = await sharedClusters()
    const topic = await createTopic(t, target, { configs: { 'cleanup.policy': 'compact', 'max.message.bytes': '8192' } })
    const writer = new InternalTopicWriter(target.connection('test-writer'), silentLogger)
    await writer.start()
    t.after(() => writer.stop())
    await writer.ensureCompactedTopic(topic, { replicationFactor: -1, key: 'offset-syncs.topic.replication.factor' })
    await withAdmin(target, admin =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: TOPIC_RESOURCE, name: topic, configEntries: [{ name: 'max.message.bytes', value: '1500' }] }],
      })
    )
    const records = Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `${i}:${'x'.repeat(200)}` }))
    await writer.write(topic, records)
    const read: string[] = []
    await readInternalTopic(
      target.connection('test-reader'),
      topic,
      (_key, value) => {
        read.push(value ?? '')
      },
      silentLogger
    )
    assert.deepEqual(
      read,
      records.map(r => r.value)
    )
  }
)

test(
  'a syncs topic that cannot take even one record: every commit fails with an error naming the topic, nothing is committed, and the commit age grows',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const alias = uniqueName('tiny').replace(/-/g, '')
    // The flow mirrors the source's heartbeats and checkpoints its groups under this alias.
    for (const name of [`${alias}.heartbeats`, `${alias}.checkpoints.internal`]) t.after(() => deleteTopicIfExists(target, name))
    const syncsTopic = offsetSyncsTopicName(alias)
    await createTopic(t, target, { name: syncsTopic, configs: { 'cleanup.policy': 'compact', 'max.message.bytes': '256' } })
    const topic = await createTopic(t, source, { partitions: 2 })
    await createTopic(t, target, { name: `${alias}.${topic}`, partitions: 2 })
    await produce(source, topic, [
      { partition: 0, value: 'a' },
      { partition: 1, value: 'b' },
    ])
    const group = uniqueName('tiny-mirror')
    const config = mm2File({
      clusters: `${alias}, B`,
      [`${alias}.bootstrap.servers`]: source.bootstrap,
      'B.bootstrap.servers': target.bootstrap,
      [`${alias}->B.enabled`]: 'true',
      topics: topic,
      [`${alias}.consumer.group.id`]: group,
      'offset.flush.interval.ms': '500',
      'replication.factor': '1',
    })
    const sidecar = spawnSidecarArgs(t, [config, ...SIDECAR_FLAGS])
    const port = await sidecarHttpPort(sidecar)
    await waitMirroring(sidecar)
    let exposition = ''
    await waitUntil(
      async () => {
        exposition = await scrape(port)
        return (sampleSum(exposition, 'kafka_mirror_commit_age_seconds') ?? 0) >= 3
      },
      { timeoutMs: 30_000, message: 'the commit age to reach 3 s' }
    )
    assert.ok(
      (sampleSum(
        exposition
          .split('\n')
          .filter(line => line.includes('result="error"'))
          .join('\n'),
        'kafka_mirror_commits_total'
      ) ?? 0) >= 2,
      'failed commits counted'
    )
    assert.equal(sampleSum(exposition, 'kafka_mirror_commit_interval_seconds'), 0.5)
    assert.match(
      sidecar.stderr(),
      new RegExp(
        `does not fit in one produce request to ${syncsTopic.replace(/\./g, '\\.')}, which takes \\d+ bytes of records: raise max\\.message\\.bytes of ${syncsTopic.replace(/\./g, '\\.')}`
      )
    )
    assert.deepEqual([...(await committedOffsets(source, group, topic)).values()], [-1n, -1n], 'no source offset is committed without its syncs')
    sidecar.child.kill('SIGTERM')
    await sidecar.exited
  }
)
