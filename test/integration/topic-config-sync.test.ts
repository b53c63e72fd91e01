import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { mm2File } from '../helpers/mm2-file.js'
import { spawnSidecar, spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

async function topicConfig (cluster: Awaited<ReturnType<typeof sharedClusters>>['source'], topic: string, name: string): Promise<string | undefined> {
  const described = await withAdmin(cluster, admin =>
    admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic, configNames: [name] }] })
  )
  return described.resources[0]?.configEntries.find(entry => entry.configName === name)?.configValue ?? undefined
}

test(
  'topic configs changed on the source after the target topic was created follow on the target; a target-only setting is kept',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('cfg'), configs: { 'retention.ms': '86400000' } })
    t.after(() => deleteTopicIfExists(target, topic))
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('cfg'), include: topic, args: ['--sync.topic.configs.interval.seconds', '1'] })
    await waitMirroring(sidecar)
    const port = await sidecarHttpPort(sidecar)
    await waitUntil(async () => (await topicConfig(target, topic, 'retention.ms').catch(() => undefined)) === '86400000', {
      timeoutMs: 30_000,
      message: 'the target topic created with the source retention',
    })
    // An operator sets something on the target only; then the source's retention and cleanup change.
    await withAdmin(target, admin =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: 2,
            name: topic,
            configEntries: [
              { name: 'retention.ms', value: '86400000' },
              { name: 'min.insync.replicas', value: '1' },
            ],
          },
        ],
      })
    )
    await withAdmin(source, admin =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: 2,
            name: topic,
            configEntries: [
              { name: 'retention.ms', value: '3600000' },
              { name: 'segment.ms', value: '600000' },
            ],
          },
        ],
      })
    )
    await waitUntil(
      async () => (await topicConfig(target, topic, 'retention.ms')) === '3600000' && (await topicConfig(target, topic, 'segment.ms')) === '600000',
      { timeoutMs: 30_000, message: 'the target topic configs to follow the source' }
    )
    assert.equal(await topicConfig(target, topic, 'min.insync.replicas'), '1', 'a config set on the target only is kept')
    assert.ok((sampleSum(await scrape(port), 'kafka_mirror_topic_configs_synced_total') ?? 0) >= 1)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

/** The configs set on `topic` itself (DescribeConfigs source DYNAMIC_TOPIC_CONFIG). */
async function topicLevelConfigs (cluster: Awaited<ReturnType<typeof sharedClusters>>['source'], topic: string): Promise<Record<string, string>> {
  const described = await withAdmin(cluster, admin => admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic }] }))
  return Object.fromEntries((described.resources[0]?.configEntries ?? [])
    .filter(entry => (entry as { configSource?: number }).configSource === 1 && entry.configValue !== null)
    .map(entry => [entry.configName, entry.configValue]))
}

test(
  "MirrorMaker 2's excluded keys and tiered-storage keys are not copied to a created target topic; retention and cleanup are, and record timestamps stay the source's",
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, {
      name: uniqueName('cfgx'),
      configs: {
        'message.timestamp.type': 'LogAppendTime',
        'min.insync.replicas': '1',
        'local.retention.ms': '3600000',
        'retention.ms': '86400000',
        'cleanup.policy': 'compact,delete',
      },
    })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(source, topic, [
      { key: 'k1', value: 'v1', timestamp: '1000' },
      { key: 'k2', value: 'v2', timestamp: '2000' },
    ])
    const sourceRecords = await readAll(source, topic)
    const file = mm2File({
      clusters: 'src, tgt',
      'src.bootstrap.servers': source.bootstrap,
      'tgt.bootstrap.servers': target.bootstrap,
      'src->tgt.enabled': 'true',
      'src->tgt.topics': topic,
      'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
      'offset.flush.interval.ms': '500',
      'refresh.topics.interval.seconds': '1',
      'src->tgt.consumer.group.id': uniqueName('cfgx'),
    })
    const sidecar = spawnSidecarArgs(t, [file, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
    await waitMirroring(sidecar)
    await waitUntil(async () => (await readAll(target, topic).catch(() => [])).length === 2, { timeoutMs: 60_000, message: 'both records on the target' })
    assert.deepEqual(await topicLevelConfigs(target, topic), { 'retention.ms': '86400000', 'cleanup.policy': 'compact,delete' })
    const targetRecords = await readAll(target, topic)
    assert.deepEqual(
      targetRecords.map(r => r.timestamp),
      sourceRecords.map(r => r.timestamp),
      "the target keeps the source's timestamps (CreateTime topic)"
    )
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  "use.defaults.from = source: a created target topic holds the source topic's default values too, except the excluded and tiered-storage keys",
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('cfgd'), configs: { 'retention.ms': '86400000' } })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(source, topic, [{ value: 'v' }])
    const file = mm2File({
      clusters: 'src, tgt',
      'src.bootstrap.servers': source.bootstrap,
      'tgt.bootstrap.servers': target.bootstrap,
      'src->tgt.enabled': 'true',
      'src->tgt.topics': topic,
      'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
      'use.defaults.from': 'source',
      'offset.flush.interval.ms': '500',
      'refresh.topics.interval.seconds': '1',
      'src->tgt.consumer.group.id': uniqueName('cfgd'),
    })
    const sidecar = spawnSidecarArgs(t, [file, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
    await waitMirroring(sidecar)
    await waitUntil(async () => (await readAll(target, topic).catch(() => [])).length === 1, { timeoutMs: 60_000, message: 'the record on the target' })
    const onTarget = await topicLevelConfigs(target, topic)
    assert.equal(onTarget['retention.ms'], '86400000')
    assert.equal(onTarget['segment.bytes'], await topicConfig(source, topic, 'segment.bytes'), 'a source default is set on the target topic')
    for (const key of [
      'message.timestamp.type',
      'min.insync.replicas',
      'unclean.leader.election.enable',
      'remote.storage.enable',
      'local.retention.ms',
      'local.retention.bytes',
    ]) {
      assert.equal(onTarget[key], undefined, `${key} is not copied`)
    }
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
