import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { LossFinding } from '../../src/sidecar/integrity/loss-detector.js'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import { GroupAdmin } from '../../src/kafka/group-admin.js'
import { MirrorSidecar } from '../../src/sidecar/mirror-sidecar.js'
import { createLogger, silentLogger } from '../../src/shared/logger.js'
import { createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { writeProperties } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'

interface Run {
  readonly sidecar: MirrorSidecar
  readonly findings: LossFinding[]
  readonly errorLines: string[]
  readonly group: string
}

function startSidecar (t: TestContext, source: LocalCluster, target: LocalCluster, topic: string, group: string, commitIntervalMs: number): Run {
  const config = configFromMm1({
    'consumer.config': [writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': group, 'auto.offset.reset': 'earliest' }, 'source.properties')],
    'producer.config': writeProperties({ 'bootstrap.servers': target.bootstrap }, 'target.properties'),
    whitelist: topic,
    'offset.commit.interval.ms': String(commitIntervalMs),
    'refresh.topics.interval.ms': '600000',
    'metrics.port': '0',
    'metrics.host': '127.0.0.1',
  })
  const findings: LossFinding[] = []
  const errorLines: string[] = []
  const logger = createLogger({
    level: 'warn',
    write: line => {
      if (process.env.LOSS_DEBUG !== undefined) process.stderr.write(line)
      if (line.includes('lost records')) errorLines.push(line)
    },
  })
  const sidecar = new MirrorSidecar(config, { logger, lossCheckIntervalMs: 100, lossObserver: { lost: (_, f) => findings.push(f) } })
  t.after(() => sidecar.stop())
  return { sidecar, findings, errorLines, group }
}

async function committed (source: LocalCluster, group: string, topic: string): Promise<bigint | undefined> {
  const admin = new GroupAdmin(source.connection('test'), silentLogger)
  await admin.start()
  try {
    return (await admin.committedOffsets(group, [topic])).find(o => o.partition === 0)?.offset
  } finally {
    await admin.stop()
  }
}

function records (from: number, count: number): Array<{ partition: number, key: string, value: string }> {
  return Array.from({ length: count }, (_, i) => ({ partition: 0, key: `k${from + i}`, value: `v${from + i}` }))
}

async function lostMetric (sidecar: MirrorSidecar): Promise<string> {
  return (await sidecar.observability.metrics.registry.getSingleMetricAsString('kafka_mirror_lost_records_total'))
}

test(
  "source retention past the mirror's committed offset while it was down: the 50 deleted records are counted, logged and the mirror goes on from the log start",
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 1, configs: { 'segment.bytes': '1048576', 'retention.ms': '-1' } })
    t.after(() => deleteTopicIfExists(target, topic))
    const group = uniqueName('loss-retention')
    await produce(source, topic, records(0, 100))

    const first = startSidecar(t, source, target, topic, group, 200)
    await first.sidecar.start()
    await waitUntil(async () => (await committed(source, group, topic)) === 100n, { timeoutMs: 60_000, message: 'first run committed 100' })
    await first.sidecar.stop()
    assert.deepEqual(first.findings, [])

    await produce(source, topic, records(100, 100))
    await withAdmin(source, async admin => {
      await admin.fetchTopicMetadata({ topics: [topic] })
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '150' }] })
    })

    // A long commit interval: the second run has not committed over the evidence when it checks.
    const second = startSidecar(t, source, target, topic, group, 60_000)
    await second.sidecar.start()
    await waitUntil(() => second.findings.length > 0, { timeoutMs: 60_000, message: 'a loss found' })
    await waitUntil(async () => (await endOffsets(target, topic)).get(0) === 150n, { timeoutMs: 60_000, message: 'target holds 100 + 50' })
    assert.deepEqual(
      second.findings.map(f => ({ reason: f.reason, topic: f.topic, partition: f.partition, from: f.fromOffset, to: f.toOffset, records: f.records })),
      [{ reason: 'source_retention', topic, partition: 0, from: 100n, to: 150n, records: 50n }]
    )
    assert.equal(second.errorLines.length, 1)
    const line = JSON.parse(second.errorLines[0]!) as { level: string, msg: string }
    assert.equal(line.level, 'error')
    assert.equal(
      line.msg,
      `flow source->target: lost records: source ${topic} partition 0 offsets 100-149 (50 records): deleted on the source (retention or deleteRecords) before the mirror copied them; the mirror goes on from the log start offset`
    )
    assert.match(
      await lostMetric(second.sidecar),
      new RegExp(`kafka_mirror_lost_records_total\\{flow="source->target",source="source",target="target",topic="${topic}",reason="source_retention"\\} 50`)
    )
    await second.sidecar.stop()
    assert.equal(await committed(source, group, topic), 200n, 'the mirror went on and committed the end')
  }
)

test('a source topic deleted and created again under the mirror: the flow stops without committing, naming the topic', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 1 })
  t.after(() => deleteTopicIfExists(target, topic))
  const group = uniqueName('loss-recreated')
  await produce(source, topic, records(0, 100))
  const run = startSidecar(t, source, target, topic, group, 200)
  await run.sidecar.start()
  await waitUntil(async () => await committed(source, group, topic) === 100n, { timeoutMs: 60_000, message: 'committed 100' })

  await withAdmin(source, admin => admin.deleteTopics({ topics: [topic] }))
  await withAdmin(source, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] }))
  await produce(source, topic, records(0, 10))

  await assert.rejects(run.sidecar.done, (error: Error) => {
    assert.match(
      error.message,
      new RegExp(`^flow source->target: lost records: source ${topic} partition 0 no offsets \\(0 records\\): the source topic was deleted`)
    )
    return true
  })
  assert.deepEqual(run.findings.map(f => f.reason), ['source_topic_recreated'])
  await run.sidecar.stop()
  const after = await committed(source, group, topic)
  assert.ok(after === undefined || after < 10n, `nothing past the new topic's records committed (got ${after})`)
})

test(
  'a target topic deleted and created again while the mirror runs: the 100 records it held are counted and the flow stops without committing',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 1 })
    t.after(() => deleteTopicIfExists(target, topic))
    const group = uniqueName('loss-target')
    await produce(source, topic, records(0, 100))
    const run = startSidecar(t, source, target, topic, group, 200)
    await run.sidecar.start()
    await waitUntil(async () => (await committed(source, group, topic)) === 100n, { timeoutMs: 60_000, message: 'committed 100' })

    await withAdmin(target, admin => admin.deleteTopics({ topics: [topic] }))
    await withAdmin(target, admin =>
      admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] }).catch(() => false)
    )
    await produce(source, topic, records(100, 5))

    await assert.rejects(run.sidecar.done, (error: Error) => {
      assert.match(
        error.message,
        new RegExp(
          `^flow source->target: lost records: target ${topic} partition 0 offsets 0-99 \\(100 records, copies of source ${topic}\\): the target topic was deleted or recreated`
        )
      )
      return true
    })
    assert.deepEqual(
      run.findings.map(f => [f.reason, f.records]),
      [['target_topic_recreated', 100n]]
    )
    assert.match(await lostMetric(run.sidecar), /reason="target_topic_recreated"\} 100/)
    await run.sidecar.stop()
    assert.equal(await committed(source, group, topic), 100n, 'nothing committed past the loss')
  }
)
