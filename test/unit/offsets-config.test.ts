import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import { ConfigError } from '../../src/shared/errors.js'
import { writeProperties } from '../helpers/sidecar.js'

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
