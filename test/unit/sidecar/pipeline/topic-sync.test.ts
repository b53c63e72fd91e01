import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopicFilter } from '../../../../src/config/topic-filter.js'
import { TopicSettingsSync } from '../../../../src/sidecar/pipeline/topic-settings-sync.js'
import { TopicSync } from '../../../../src/sidecar/pipeline/topic-sync.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { FakeTopicCatalog, fakeFlowConfig } from '../../../helpers/fake-ports.js'

test(
  'a refresh asks each cluster for its topics once: creates missing targets, adds missing partitions, skips filtered, cyclic and partitionless topics',
  async () => {
    const source = new FakeTopicCatalog('source', { orders: 4, payments: 2, grown: 6, 'target.orders': 3, skipped: 1, empty: 0, __consumer_offsets: 50 })
    const target = new FakeTopicCatalog('target', { 'source.payments': 2, 'source.grown': 3, 'source.extra': 1 })
    const flow = fakeFlowConfig({
      topics: createTopicFilter(/^(?!skipped$).*$/u, undefined, '(?!skipped$).*', undefined),
      replicationPolicy: { kind: 'default', separator: '.' },
    })
    const sync = new TopicSync(source, target, flow, silentLogger)

    const topics = await sync.refresh()

    assert.deepEqual([...topics.values()].sort((a, b) => a.source.localeCompare(b.source)), [
      { source: 'grown', target: 'source.grown', partitions: 6 },
      { source: 'orders', target: 'source.orders', partitions: 4 },
      { source: 'payments', target: 'source.payments', partitions: 2 },
    ])
    assert.equal(source.describeCalls, 1, 'one Metadata request on the source')
    assert.equal(target.describeCalls, 1, 'one Metadata request on the target')
    assert.deepEqual(target.created.map(t => [t.name, t.partitions]), [['source.orders', 4]])
    assert.equal(target.topics.get('source.grown'), 6, 'partitions added on the source are added on the target')
    assert.equal(target.topics.get('source.payments'), 2)
    assert.equal(target.topics.get('source.extra'), 1, 'a target topic the flow does not mirror is left alone')
  }
)

test('a refresh that finds no topic to mirror does not ask the target', async () => {
  const source = new FakeTopicCatalog('source', { skipped: 1 })
  const target = new FakeTopicCatalog('target', {})
  const flow = fakeFlowConfig({ topics: createTopicFilter(/^orders$/u, undefined, 'orders', undefined) })
  const topics = await new TopicSync(source, target, flow, silentLogger).refresh()
  assert.equal(topics.size, 0)
  assert.equal(target.describeCalls, 0)
  assert.deepEqual(target.created, [])
})

test('the target topic\'s max.message.bytes is known where the sync created the topic with it or read it', async () => {
  const source = new FakeTopicCatalog('source', { big: 1, synced: 1, plain: 1 })
  source.configs.set('big', { 'max.message.bytes': '5242880' })
  source.configs.set('synced', { 'retention.ms': '1000' })
  const target = new FakeTopicCatalog('target', { synced: 1 })
  target.configs.set('synced', { 'max.message.bytes': '200000' })
  const sync = new TopicSync(source, target, fakeFlowConfig({ syncTopicConfigs: true, replicationPolicy: { kind: 'identity' } }), silentLogger)
  const topics = await sync.refresh()
  assert.equal(sync.maxMessageBytes('big'), 5_242_880)
  assert.equal(sync.maxMessageBytes('synced'), undefined)
  await sync.syncConfigs([...topics.values()])
  assert.equal(sync.maxMessageBytes('synced'), undefined, 'at its default on the source: taken off the target topic (use.defaults.from = target)')
  assert.deepEqual(
    target.configsSet.filter(set => set.topic === 'synced'),
    [{ topic: 'synced', configs: { 'retention.ms': '1000' }, removedKeys: ['max.message.bytes'] }]
  )
  assert.equal(sync.maxMessageBytes('plain'), undefined)

  // A key the filter does not copy keeps the target's value, which the sync reads.
  const keeping = new FakeTopicCatalog('target', { synced: 1 })
  keeping.configs.set('synced', { 'max.message.bytes': '200000' })
  const filter = { ...fakeFlowConfig().topicConfigFilter, copies: (key: string) => key !== 'max.message.bytes' }
  const kept = new TopicSync(
    source,
    keeping,
    fakeFlowConfig({ syncTopicConfigs: true, replicationPolicy: { kind: 'identity' }, topicConfigFilter: filter }),
    silentLogger
  )
  await kept.syncConfigs([...(await kept.refresh()).values()])
  assert.equal(kept.maxMessageBytes('synced'), 200_000)
  assert.deepEqual(keeping.configsSet.filter(set => set.topic === 'synced'), [{ topic: 'synced', configs: { 'retention.ms': '1000' } }])
})

test(
  "config sync as MirrorMaker 2 does it: a copied key at its default on the source is taken off the target topic with use.defaults.from = target, set from the source's default with source; an excluded key is left alone",
  async () => {
    const source = new FakeTopicCatalog('source', { orders: 1 })
    source.configs.set('orders', { 'cleanup.policy': 'compact' })
    source.defaults.set('orders', { 'retention.bytes': '-1', 'min.insync.replicas': '1' })
    const targetWith = (): FakeTopicCatalog => {
      const target = new FakeTopicCatalog('target', { orders: 1 })
      target.configs.set('orders', { 'cleanup.policy': 'compact', 'retention.bytes': '2000', 'min.insync.replicas': '2' })
      return target
    }
    const run = async (useDefaultsFrom: 'target' | 'source'): Promise<FakeTopicCatalog> => {
      const target = targetWith()
      const filter = { ...fakeFlowConfig().topicConfigFilter, useDefaultsFrom, copies: (key: string) => key !== 'min.insync.replicas' }
      const sync = new TopicSync(
        source,
        target,
        fakeFlowConfig({ syncTopicConfigs: true, replicationPolicy: { kind: 'identity' }, topicConfigFilter: filter }),
        silentLogger
      )
      assert.equal(await sync.syncConfigs([...(await sync.refresh()).values()]), 1)
      return target
    }
    assert.deepEqual((await run('target')).configsSet, [{ topic: 'orders', configs: {}, removedKeys: ['retention.bytes'] }])
    assert.deepEqual((await run('source')).configsSet, [{ topic: 'orders', configs: { 'retention.bytes': '-1' } }])
  }
)

test('topic configs and ACLs follow the source in the coordinating process only, once per their interval', async () => {
  const source = new FakeTopicCatalog('source', { orders: 1 })
  const target = new FakeTopicCatalog('target', { orders: 1 })
  source.configs.set('orders', { 'retention.ms': '3600000' })
  source.acls.push({ topic: 'orders', principal: 'User:alice', host: '*', operation: 'READ', permission: 'ALLOW' })
  const flow = fakeFlowConfig({ syncTopicConfigs: true, syncTopicAcls: true, syncTopicConfigsIntervalMs: 600_000, syncTopicAclsIntervalMs: 600_000 })
  const topicSync = new TopicSync(source, target, flow, silentLogger)
  const topics = await topicSync.refresh()
  let coordinating = false
  const synced: string[] = []
  const settings = new TopicSettingsSync(flow, {
    topicSync,
    topics: () => topics,
    isCoordinator: () => coordinating,
    labels: { flow: 'a->b', source: 'a', target: 'b' },
    logger: silentLogger,
    observer: {
      topicConfigsSynced: (_labels, changed) => synced.push(`configs ${changed}`),
      topicAclsSynced: (_labels, created) => synced.push(`acls ${created}`),
    },
  })
  await settings.sync()
  assert.deepEqual(synced, [], 'another process coordinates the flow: nothing synced here')
  coordinating = true
  await settings.sync()
  assert.deepEqual(synced, ['configs 1', 'acls 1'])
  assert.deepEqual(target.configsSet, [{ topic: 'orders', configs: { 'retention.ms': '3600000' } }])
  assert.deepEqual(target.acls.map(acl => `${acl.principal} ${acl.operation} ${acl.topic}`), ['User:alice READ orders'])
  await settings.sync()
  assert.deepEqual(synced, ['configs 1', 'acls 1'], 'within the intervals: not again')
  await settings.stop()
})
