import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1 } from '../../../src/config/mm1-args.js'
import { targetTopicName, type FlowConfig } from '../../../src/config/mirror-config.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import type { SidecarSettings } from '../../../src/config/sidecar-settings.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { writeProperties } from '../../helpers/sidecar.js'

const settings: SidecarSettings = { metricsPort: 0, metricsHost: '127.0.0.1', logLevel: 'info', drainTimeoutMs: 1000 }
const base = () => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders',
})

test('MirrorMaker 1 flags fill the group offset sync: enabled, groups, exclusions, interval', () => {
  const flow = configFromMm1({
    ...base(),
    'sync.group.offsets.enabled': 'true',
    groups: 'app-.*, billing',
    'groups.exclude': 'app-test-.*',
    'sync.group.offsets.interval.seconds': '3',
  }).flows[0]
  assert.ok(flow)
  assert.equal(flow.groupSync.enabled, true)
  assert.equal(flow.groupSync.intervalMs, 3000)
  assert.deepEqual(['app-1', 'billing', 'billing-2', 'app-test-1'].map(g => flow.groupSync.groups.matches(g)), [true, true, false, false])
  assert.equal(flow.offsetSyncs.topic, 'mirror-offset-syncs.source.internal')
  assert.equal(flow.groupSync.checkpointsTopic, 'source.checkpoints.internal')
})

test('group sync is off by default and excludes MirrorMaker 2\'s default groups', () => {
  const flow = configFromMm1(base()).flows[0]
  assert.ok(flow)
  assert.equal(flow.groupSync.enabled, false)
  assert.equal(flow.groupSync.intervalMs, 10_000)
  assert.deepEqual(['app', 'console-consumer-1', 'connect-x', '__internal'].map(g => flow.groupSync.groups.matches(g)), [true, false, false, false])
})

test('bad group sync values are reported together, naming each flag', () => {
  assert.throws(
    () => configFromMm1({ ...base(), 'sync.group.offsets.enabled': 'yes', groups: 'app-[', 'sync.group.offsets.interval.seconds': '0' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError)
      assert.deepEqual(error.problems.map(p => p.key).sort(), ['--groups', '--sync.group.offsets.enabled', '--sync.group.offsets.interval.seconds'])
      return true
    }
  )
})

test('mm2.properties internal-topic replication factors apply to the syncs, checkpoints and heartbeats topics instead of being ignored', () => {
  const file = writeProperties({
    clusters: 'A, B',
    'A.bootstrap.servers': '127.0.0.1:1',
    'B.bootstrap.servers': '127.0.0.1:2',
    'A->B.enabled': 'true',
    'replication.factor': '2',
    'offset-syncs.topic.replication.factor': '3',
    'A->B.checkpoints.topic.replication.factor': '1',
    'offset-syncs.topic.location': 'target',
    'heartbeats.topic.replication.factor': '1',
  }, 'mm2.properties')
  const config = configFromMm2(file, { settings })
  const flow = config.flows[0]
  assert.ok(flow)
  assert.deepEqual(
    [flow.replicationFactor, flow.offsetSyncs.replicationFactor, flow.groupSync.checkpointsReplicationFactor, flow.heartbeats.replicationFactor],
    [2, 3, 1, 1]
  )
  assert.deepEqual(config.ignoredKeys, [])
})

test('without their own keys the internal topics take replication.factor, else the broker default (-1); MM1 flags always -1', () => {
  const mm2 = (extra: Record<string, string>): FlowConfig =>
    configFromMm2(
      writeProperties(
        { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
        'mm2.properties'
      ),
      { settings }
    ).flows[0] as FlowConfig
  assert.deepEqual([mm2({}).offsetSyncs.replicationFactor, mm2({}).groupSync.checkpointsReplicationFactor], [-1, -1])
  assert.deepEqual(
    [mm2({ 'replication.factor': '3' }).offsetSyncs.replicationFactor, mm2({ 'replication.factor': '3' }).groupSync.checkpointsReplicationFactor],
    [3, 3]
  )
  const mm1 = configFromMm1(base()).flows[0] as FlowConfig
  assert.deepEqual([mm1.offsetSyncs.replicationFactor, mm1.groupSync.checkpointsReplicationFactor], [-1, -1])
})

test('bad internal-topic replication factors and locations name their key', () => {
  const file = (extra: Record<string, string>): string =>
    writeProperties(
      { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
      'mm2.properties'
    )
  assert.throws(
    () =>
      configFromMm2(
        file({ 'offset-syncs.topic.replication.factor': '0', 'A->B.checkpoints.topic.replication.factor': 'three', 'offset-syncs.topic.location': 'nowhere' }),
        { settings }
      ),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError)
      assert.deepEqual(error.problems.map(p => p.key).sort(), [
        'A->B.checkpoints.topic.replication.factor',
        'offset-syncs.topic.location',
        'offset-syncs.topic.replication.factor',
      ])
      assert.match(error.message, /offset-syncs\.topic\.replication\.factor.*"?0"?.*expected a replication factor from 1 to 32767, or -1/)
      return true
    }
  )
  assert.throws(() => configFromMm2(file({ 'offset.lag.max': '-1' }), { settings }), /offset\.lag\.max/)
})

test(
  "mm2.properties: MirrorMaker 2's offset syncs by its keys: on the source named after the target by default, on the target named after the source, offset.lag.max; none with emit.offset-syncs.enabled = false",
  () => {
    const file = (extra: Record<string, string>): string =>
      writeProperties(
        { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
        'mm2.properties'
      )
    const defaults = configFromMm2(file({ 'offset-syncs.topic.location': 'source' }), { settings })
    assert.deepEqual(defaults.ignoredKeys, [])
    assert.deepEqual(defaults.flows[0]?.offsetSyncs.mm2, {
      location: 'source',
      topic: 'mm2-offset-syncs.B.internal',
      maxOffsetLagRecords: 100,
      replicationFactor: -1,
    })
    const onTarget = configFromMm2(
      file({ 'A->B.offset-syncs.topic.location': 'target', 'offset.lag.max': '0', 'offset-syncs.topic.replication.factor': '1' }),
      {
        settings,
      }
    )
    assert.deepEqual(onTarget.flows[0]?.offsetSyncs.mm2, {
      location: 'target',
      topic: 'mm2-offset-syncs.A.internal',
      maxOffsetLagRecords: 0,
      replicationFactor: 1,
    })
    assert.deepEqual(onTarget.ignoredKeys, [])
    const off = configFromMm2(file({ 'emit.offset-syncs.enabled': 'false' }), { settings }).flows[0]
    assert.deepEqual([off?.offsetSyncs.enabled, off?.offsetSyncs.mm2], [false, undefined])
    assert.equal(configFromMm1(base()).flows[0]?.offsetSyncs.mm2, undefined, 'MirrorMaker 1 flags: only the exact syncs')
  }
)

const mm2Flow = (extra: Record<string, string>): FlowConfig =>
  configFromMm2(
    writeProperties(
      { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
      'mm2.properties'
    ),
    { settings }
  ).flows[0] as FlowConfig

test(
  "mm2.properties: checkpoints and heartbeats by MirrorMaker 2's defaults (checkpoints every 60 s into A.checkpoints.internal, heartbeats every 1 s), group offsets synced only when asked",
  () => {
    const flow = mm2Flow({})
    assert.deepEqual(
      [flow.groupSync.emitCheckpoints, flow.groupSync.enabled, flow.groupSync.checkpointIntervalMs, flow.groupSync.intervalMs, flow.groupSync.checkpointsTopic],
      [true, false, 60_000, 60_000, 'A.checkpoints.internal']
    )
    assert.deepEqual(flow.heartbeats, { enabled: true, intervalMs: 1000, topic: 'heartbeats', replicationFactor: -1 })
  }
)

test('mm2.properties: emit.checkpoints.*, sync.group.offsets.* and emit.heartbeats.* are read per flow, each interval on its own', () => {
  const flow = mm2Flow({
    'emit.checkpoints.interval.seconds': '5',
    'A->B.sync.group.offsets.enabled': 'true',
    'sync.group.offsets.interval.seconds': '30',
    'emit.heartbeats.interval.seconds': '3',
    'A->B.emit.heartbeats.enabled': 'false',
  })
  assert.deepEqual(
    [flow.groupSync.emitCheckpoints, flow.groupSync.enabled, flow.groupSync.checkpointIntervalMs, flow.groupSync.intervalMs],
    [true, true, 5_000, 30_000]
  )
  assert.deepEqual([flow.heartbeats.enabled, flow.heartbeats.intervalMs], [false, 3_000])
  const noCheckpoints = mm2Flow({ 'emit.checkpoints.enabled': 'false', 'sync.group.offsets.enabled': 'true' })
  assert.deepEqual(
    [noCheckpoints.groupSync.emitCheckpoints, noCheckpoints.groupSync.enabled],
    [false, false],
    'MirrorMaker 2 syncs group offsets from its checkpoints'
  )
  assert.equal(mm2Flow({ 'emit.offset-syncs.enabled': 'false' }).groupSync.emitCheckpoints, false, 'no offset syncs, no translation to checkpoint')
})

test(
  "mm2.properties: the source's heartbeats topic is mirrored whatever topics says, as <source>.heartbeats under both policies; MM1 flags emit no heartbeats",
  () => {
    assert.deepEqual(
      ['heartbeats', 'orders', 'other'].map(t => mm2Flow({ 'A->B.topics': 'orders' }).topics.matches(t)),
      [true, true, false]
    )
    assert.equal(mm2Flow({ 'A->B.topics': 'orders', 'topics.exclude': 'heart.*' }).topics.matches('heartbeats'), true)
    const identity = mm2Flow({ 'A->B.topics': 'orders', 'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy' })
    assert.deepEqual(
      ['heartbeats', 'orders'].map(t => [identity.topics.matches(t), targetTopicName(identity.replicationPolicy, 'A', t)]),
      [
        [true, 'A.heartbeats'],
        [true, 'orders'],
      ],
      "IdentityReplicationPolicy names the heartbeats topic as the default policy does, never the target's own heartbeats"
    )
    const mm1 = configFromMm1(base()).flows[0] as FlowConfig
    assert.deepEqual([mm1.heartbeats.enabled, mm1.topics.matches('heartbeats'), mm1.groupSync.emitCheckpoints], [false, false, false])
  }
)
