import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { DEFAULT_TOPIC_CONFIG_FILTER } from '../../../src/config/topic-config-filter.js'
import { ProblemList } from '../../../src/config/values.js'
import { TopicSync } from '../../../src/sidecar/pipeline/topic-sync.js'
import { silentLogger } from '../../../src/shared/logger.js'
import { FakeTopicCatalog, fakeFlowConfig } from '../../helpers/fake-ports.js'
import { writeProperties } from '../../helpers/sidecar.js'

const settings = sidecarSettingsFromFlags({}, new ProblemList())
const mm2 = (extra: Record<string, string>): string =>
  writeProperties(
    { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
    'mm2.properties'
  )

const sourceTopicConfigs = {
  'retention.ms': '86400000',
  'cleanup.policy': 'compact',
  'max.message.bytes': '2000000',
  'message.timestamp.type': 'LogAppendTime',
  'message.timestamp.difference.max.ms': '1000',
  'min.insync.replicas': '1',
  'unclean.leader.election.enable': 'true',
  'leader.replication.throttled.replicas': '*',
  'follower.replication.throttled.replicas': '*',
  'remote.storage.enable': 'true',
  'local.retention.ms': '3600000',
  'local.retention.bytes': '1000000',
  'remote.log.copy.disable': 'false',
}

test('MirrorMaker 2\'s default filter copies retention and cleanup but not its excluded keys, and never tiered-storage keys', () => {
  const copied = Object.keys(sourceTopicConfigs).filter(key => DEFAULT_TOPIC_CONFIG_FILTER.copies(key))
  assert.deepEqual(copied, ['retention.ms', 'cleanup.policy', 'max.message.bytes'])
})

test('a created target topic gets the copied configs only; a config sync sets only those', async () => {
  const source = new FakeTopicCatalog('source', { orders: 2, events: 1 })
  source.configs.set('orders', sourceTopicConfigs)
  source.configs.set('events', sourceTopicConfigs)
  const target = new FakeTopicCatalog('target', { events: 1 })
  target.configs.set('events', { 'retention.ms': '1000', 'min.insync.replicas': '2' })
  const sync = new TopicSync(source, target, fakeFlowConfig({ syncTopicConfigs: true }), silentLogger)
  const topics = await sync.refresh()
  assert.deepEqual(
    target.created.map(t => [t.name, t.configs]),
    [['orders', { 'retention.ms': '86400000', 'cleanup.policy': 'compact', 'max.message.bytes': '2000000' }]]
  )
  await sync.syncConfigs([...topics.values()].filter(t => t.source === 'events'))
  assert.deepEqual(target.configsSet, [
    { topic: 'events', configs: { 'retention.ms': '86400000', 'cleanup.policy': 'compact', 'max.message.bytes': '2000000' } },
  ])
})

test('mm2.properties config.properties.exclude replaces the default list; empty excludes nothing but tiered-storage keys', () => {
  const custom = configFromMm2(mm2({ 'config.properties.exclude': 'retention\\..*, cleanup\\.policy' }), { settings }).flows[0]?.topicConfigFilter
  assert.equal(custom?.copies('retention.ms'), false)
  assert.equal(custom?.copies('cleanup.policy'), false)
  assert.equal(custom?.copies('min.insync.replicas'), true, 'the default list no longer applies')
  assert.equal(custom?.copies('local.retention.ms'), false)
  const perFlow = configFromMm2(mm2({ 'A->B.config.properties.exclude': '' }), { settings }).flows[0]?.topicConfigFilter
  assert.equal(perFlow?.copies('message.timestamp.type'), true)
  assert.equal(perFlow?.copies('remote.log.delete.on.disable'), false)
  assert.equal(configFromMm2(mm2({}), { settings }).flows[0]?.topicConfigFilter.copies('message.timestamp.type'), false)
})

test('config.property.filter.class takes only the default class; use.defaults.from takes target or source', () => {
  const named = configFromMm2(
    mm2({ 'config.property.filter.class': 'org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter', 'use.defaults.from': 'target' }),
    { settings }
  )
  assert.deepEqual(named.ignoredKeys, [])
  assert.equal(named.flows[0]?.topicConfigFilter.copies('min.insync.replicas'), false)
  assert.throws(
    () => configFromMm2(mm2({ 'config.property.filter.class': 'com.example.MyFilter' }), { settings }),
    /config\.property\.filter\.class "com\.example\.MyFilter": custom config filters \(Java classes\) cannot run here/
  )
  assert.equal(named.flows[0]?.topicConfigFilter.useDefaultsFrom, 'target')
  const fromSource = configFromMm2(mm2({ 'A->B.use.defaults.from': 'source' }), { settings }).flows[0]?.topicConfigFilter
  assert.equal(fromSource?.useDefaultsFrom, 'source')
  assert.equal(fromSource?.copies('min.insync.replicas'), false, 'the default exclude list still applies')
  assert.throws(() => configFromMm2(mm2({ 'use.defaults.from': 'both' }), { settings }), /use\.defaults\.from "both": expected one of target, source/)
  assert.throws(
    () => configFromMm2(mm2({ 'config.properties.exclude': 'retention\\.(ms' }), { settings }),
    /config\.properties\.exclude "retention\.\(ms": not a valid regex/
  )
})

test('a target topic with message.timestamp.type=LogAppendTime is warned about once: its broker re-stamps every copied record', async () => {
  const warnings: Array<{ message: string, topic: unknown }> = []
  const logger = { ...silentLogger, warn: (message: string, fields?: Record<string, unknown>) => { warnings.push({ message, topic: fields?.topic }) } }
  const source = new FakeTopicCatalog('source', { stamped: 1 })
  const target = new FakeTopicCatalog('target', { stamped: 1 })
  target.configs.set('stamped', { 'message.timestamp.type': 'LogAppendTime' })
  const sync = new TopicSync(source, target, fakeFlowConfig({ syncTopicConfigs: true }), logger)
  const topics = [...(await sync.refresh()).values()]
  await sync.syncConfigs(topics)
  await sync.syncConfigs(topics)
  assert.equal(warnings.length, 1)
  assert.match(warnings[0]?.message ?? '', /LogAppendTime: the target broker re-stamps every copied record/)
  assert.equal(warnings[0]?.topic, 'stamped')
  assert.deepEqual(target.configsSet, [], 'message.timestamp.type is not the sync\'s to change')
})

test('use.incremental.alter.configs takes requested, required or never (MirrorMaker 2\'s values), per flow; absent: requested', () => {
  const absent = configFromMm2(mm2({}), { settings })
  assert.equal(absent.flows[0]?.incrementalAlterConfigs, undefined)
  const never = configFromMm2(mm2({ 'A->B.use.incremental.alter.configs': 'never' }), { settings })
  assert.deepEqual(never.ignoredKeys, [])
  assert.equal(never.flows[0]?.incrementalAlterConfigs, 'never')
  assert.equal(configFromMm2(mm2({ 'use.incremental.alter.configs': 'required' }), { settings }).flows[0]?.incrementalAlterConfigs, 'required')
  assert.throws(
    () => configFromMm2(mm2({ 'use.incremental.alter.configs': 'always' }), { settings }),
    /use\.incremental\.alter\.configs "always": expected one of requested, required, never/
  )
})

test('use.defaults.from=source also copies the source topic\'s default values (not the excluded keys); target copies only what is set', async () => {
  for (const [from, expected] of [
    ['target', { 'retention.ms': '1000' }],
    ['source', { 'segment.ms': '604800000', 'retention.ms': '1000' }],
  ] as const) {
    const source = new FakeTopicCatalog('source', { orders: 1 })
    source.configs.set('orders', { 'retention.ms': '1000' })
    source.defaults.set('orders', { 'segment.ms': '604800000', 'min.insync.replicas': '1', 'local.retention.ms': '-2' })
    const target = new FakeTopicCatalog('target', {})
    const filter = configFromMm2(mm2({ 'use.defaults.from': from }), { settings }).flows[0]?.topicConfigFilter
    assert.ok(filter !== undefined)
    await new TopicSync(source, target, fakeFlowConfig({ syncTopicConfigs: true, topicConfigFilter: filter }), silentLogger).refresh()
    assert.deepEqual(target.created[0]?.configs, expected, from)
  }
})
