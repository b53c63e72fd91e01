import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TopicAdmin } from '../../src/kafka/topic-admin.js'
import { silentLogger } from '../../src/shared/logger.js'
import { createTopic, sharedClusters, withAdmin } from '../helpers/kafka.js'

/** The configs set on the topic itself (not defaults). */
async function topicConfigs (cluster: Awaited<ReturnType<typeof sharedClusters>>['target'], topic: string): Promise<Record<string, string>> {
  const described = await withAdmin(cluster, admin => admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic }] }))
  const set: Record<string, string> = {}
  for (const entry of described.resources[0]?.configEntries ?? []) {
    // configSource 1: DYNAMIC_TOPIC_CONFIG
    if ((entry as { configSource?: number }).configSource === 1 && entry.configValue !== null) set[entry.configName] = entry.configValue
  }
  return set
}

test('setTopicConfigs sets and deletes the keys it names and leaves every other config of the topic as it is; writers at the same time lose nothing', {
  timeout: 60_000,
}, async t => {
  const { target } = await sharedClusters()
  const topic = await createTopic(t, target, { configs: { 'retention.ms': '7200000', 'delete.retention.ms': '2000' } })
  const admin = new TopicAdmin(target.connection('topic-admin-test'), silentLogger)
  await admin.start()
  t.after(() => admin.stop())

  await admin.setTopicConfigs(topic, { 'segment.ms': '600000' }, ['retention.ms'])
  const afterOne = await topicConfigs(target, topic)
  assert.deepEqual(afterOne, { 'delete.retention.ms': '2000', 'segment.ms': '600000' }, 'retention.ms deleted, delete.retention.ms kept')

  // Six writers at once, each its own key: a write that replaced the topic's whole set (read, then
  // written back) would drop what the others wrote between its read and its write.
  const changes: Record<string, string> = {
    'retention.bytes': '1000000',
    'max.message.bytes': '2000000',
    'min.cleanable.dirty.ratio': '0.3',
    'flush.messages': '1000',
    'segment.bytes': '20000000',
    'min.compaction.lag.ms': '1000',
  }
  await Promise.all(Object.entries(changes).map(([key, value]) => admin.setTopicConfigs(topic, { [key]: value })))
  assert.deepEqual(await topicConfigs(target, topic), { 'delete.retention.ms': '2000', 'segment.ms': '600000', ...changes })

  await assert.rejects(
    admin.setTopicConfigs(topic, { 'cleanup.policy': 'no-such-policy' }),
    (error: Error) =>
      /setting configs of topic .* on the .* cluster failed/.test(error.message) && /no-such-policy|INVALID_CONFIG|Invalid/i.test(error.message),
    'a value the broker refuses fails with its reason'
  )
})

test('use.incremental.alter.configs = never: setTopicConfigs reads the topic\'s configs and writes them back whole with the change', {
  timeout: 60_000,
}, async t => {
  const { target } = await sharedClusters()
  const topic = await createTopic(t, target, { configs: { 'retention.ms': '7200000', 'delete.retention.ms': '2000' } })
  const admin = new TopicAdmin(target.connection('topic-admin-test'), silentLogger, 'never')
  await admin.start()
  t.after(() => admin.stop())
  await admin.setTopicConfigs(topic, { 'segment.ms': '600000' }, ['retention.ms'])
  assert.deepEqual(await topicConfigs(target, topic), { 'delete.retention.ms': '2000', 'segment.ms': '600000' })
})
