import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import type { FlowConfig } from '../../src/config/mirror-config.js'
import { configFromMm2 } from '../../src/config/mm2-config.js'
import type { SidecarSettings } from '../../src/config/sidecar-settings.js'
import { ConfigError } from '../../src/shared/errors.js'
import { writeProperties } from '../helpers/sidecar.js'

const settings: SidecarSettings = { metricsPort: 0, metricsHost: '127.0.0.1', logLevel: 'info', drainTimeoutMs: 1000 }
const base = () => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders',
})

test('MirrorMaker 1 flags fill the group offset sync: enabled, groups, exclusions, interval', () => {
  const flow = configFromMm1({ ...base(), 'sync.group.offsets.enabled': 'true', groups: 'app-.*, billing', 'groups.exclude': 'app-test-.*', 'sync.group.offsets.interval.seconds': '3' }).flows[0]
  assert.ok(flow)
  assert.equal(flow.groupSync.enabled, true)
  assert.equal(flow.groupSync.intervalMs, 3000)
  assert.deepEqual(['app-1', 'billing', 'billing-2', 'app-test-1'].map(g => flow.groupSync.groups.matches(g)), [true, true, false, false])
  assert.equal(flow.offsetSyncs.topic, 'mirror-offset-syncs.source.internal')
  assert.equal(flow.groupSync.checkpointsTopic, 'mirror-checkpoints.source.internal')
})

test('group sync is off by default and excludes MirrorMaker 2\'s default groups', () => {
  const flow = configFromMm1(base()).flows[0]
  assert.ok(flow)
  assert.equal(flow.groupSync.enabled, false)
  assert.equal(flow.groupSync.intervalMs, 10_000)
  assert.deepEqual(['app', 'console-consumer-1', 'connect-x', '__internal'].map(g => flow.groupSync.groups.matches(g)), [true, false, false, false])
})

test('bad group sync values are reported together, naming each flag', () => {
  assert.throws(() => configFromMm1({ ...base(), 'sync.group.offsets.enabled': 'yes', groups: 'app-[', 'sync.group.offsets.interval.seconds': '0' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.deepEqual(error.problems.map(p => p.key).sort(), ['--groups', '--sync.group.offsets.enabled', '--sync.group.offsets.interval.seconds'])
    return true
  })
})

test('mm2.properties internal-topic replication factors apply to the syncs and checkpoints topics instead of being ignored', () => {
  const file = writeProperties({
    clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true',
    'replication.factor': '2', 'offset-syncs.topic.replication.factor': '3', 'A->B.checkpoints.topic.replication.factor': '1',
    'offset-syncs.topic.location': 'target', 'heartbeats.topic.replication.factor': '1',
  }, 'mm2.properties')
  const config = configFromMm2(file, { settings })
  const flow = config.flows[0]
  assert.ok(flow)
  assert.deepEqual([flow.replicationFactor, flow.offsetSyncs.replicationFactor, flow.groupSync.checkpointsReplicationFactor], [2, 3, 1])
  assert.deepEqual(config.ignoredKeys, ['heartbeats.topic.replication.factor'])
})

test('without their own keys the internal topics take replication.factor, else the broker default (-1); MM1 flags always -1', () => {
  const mm2 = (extra: Record<string, string>): FlowConfig => configFromMm2(writeProperties({ clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra }, 'mm2.properties'), { settings }).flows[0] as FlowConfig
  assert.deepEqual([mm2({}).offsetSyncs.replicationFactor, mm2({}).groupSync.checkpointsReplicationFactor], [-1, -1])
  assert.deepEqual([mm2({ 'replication.factor': '3' }).offsetSyncs.replicationFactor, mm2({ 'replication.factor': '3' }).groupSync.checkpointsReplicationFactor], [3, 3])
  const mm1 = configFromMm1(base()).flows[0] as FlowConfig
  assert.deepEqual([mm1.offsetSyncs.replicationFactor, mm1.groupSync.checkpointsReplicationFactor], [-1, -1])
})

test('bad internal-topic replication factors and locations name their key; offset-syncs.topic.location = source is reported as ignored', () => {
  const file = (extra: Record<string, string>): string => writeProperties({ clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra }, 'mm2.properties')
  assert.throws(() => configFromMm2(file({ 'offset-syncs.topic.replication.factor': '0', 'A->B.checkpoints.topic.replication.factor': 'three', 'offset-syncs.topic.location': 'nowhere' }), { settings }), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.deepEqual(error.problems.map(p => p.key).sort(), ['A->B.checkpoints.topic.replication.factor', 'offset-syncs.topic.location', 'offset-syncs.topic.replication.factor'])
    assert.match(error.message, /offset-syncs\.topic\.replication\.factor.*"?0"?.*expected a replication factor from 1 to 32767, or -1/)
    return true
  })
  assert.deepEqual(configFromMm2(file({ 'offset-syncs.topic.location': 'source' }), { settings }).ignoredKeys, ['offset-syncs.topic.location'])
})
