import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { projectRoot } from '../../scripts/local-kafka/paths.js'
import { commandLineFlags, javaPropertiesValue, mirrorMaker1Expectations, mirrorMaker2Expectations, sidecarExpectations } from '../contender-settings.js'
import { normaliseJavaValue, parseConfigBlocks, printConfigBlock } from '../resolved-config.js'
import { settingsSection } from '../report.js'
import { checkSettings, mismatchLines, requireSettings, SettingsMismatchError, type SettingsCheck } from '../settings-check.js'

/**
 * Excerpts of real logs of one `--scenario lz4-tuned` run on this kind of machine (tag
 * 118c9blz4tunedr1, no --commit-interval-ms): MirrorMaker 1 3.9.1's first 316 lines, MirrorMaker
 * 2 4.1.1's config blocks as printed, and the sidecar's --print-config for the same files.
 */
const fixture = (name: string): string => readFileSync(join(projectRoot(), 'bench', 'test', 'fixtures', name), 'utf8')
const MM1_LOG = fixture('mm1-lz4-tuned.log.txt')
const MM2_LOG = fixture('mm2-lz4-tuned.log.txt')
const SIDECAR_PRINT_CONFIG = fixture('sidecar-lz4-tuned.print-config.json')

const TUNED_LZ4 = { acks: 'all', 'compression.type': 'lz4', 'batch.size': '262144', 'linger.ms': '10' }
const MM1_CONSUMER = { 'bootstrap.servers': '127.0.0.1:19092', 'group.id': 'bench-118c9blz4tunedr1mm1', 'auto.offset.reset': 'earliest' }
const MM1_PRODUCER = { 'bootstrap.servers': '127.0.0.1:29092', ...TUNED_LZ4 }
const ALIASES = { source: 'bsrc118c9blz4tunedr1mm2', target: 'btgt118c9blz4tunedr1mm2' }

/** The mm2.properties of that run, as the bench wrote it. */
function mm2Written (extra: Record<string, string | number> = {}): Record<string, string | number> {
  const { source: s, target: t } = ALIASES
  return {
    clusters: `${s}, ${t}`,
    [`${s}.bootstrap.servers`]: '127.0.0.1:19092',
    [`${t}.bootstrap.servers`]: '127.0.0.1:29092',
    [`${s}->${t}.enabled`]: 'true',
    [`${t}->${s}.enabled`]: 'false',
    [`${s}->${t}.topics`]: 'bench-118c9b-lz4-tuned',
    'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
    'tasks.max': 2,
    'replication.factor': 1,
    'checkpoints.topic.replication.factor': 1,
    'heartbeats.topic.replication.factor': 1,
    'offset-syncs.topic.replication.factor': 1,
    'offset.storage.replication.factor': 1,
    'status.storage.replication.factor': 1,
    'config.storage.replication.factor': 1,
    'emit.heartbeats.enabled': 'false',
    'emit.checkpoints.enabled': 'false',
    'sync.group.offsets.enabled': 'false',
    'sync.topic.configs.enabled': 'false',
    'sync.topic.acls.enabled': 'false',
    'refresh.groups.enabled': 'false',
    [`${s}.consumer.auto.offset.reset`]: 'earliest',
    [`${t}.producer.acks`]: 'all',
    [`${t}.producer.compression.type`]: 'lz4',
    [`${t}.producer.batch.size`]: '262144',
    [`${t}.producer.linger.ms`]: '10',
    ...extra,
  }
}

const statusOf = (check: SettingsCheck, key: string): string | undefined => check.outcomes.find(o => o.key === key)?.status
const resolvedOf = (check: SettingsCheck, key: string): string | undefined => check.outcomes.find(o => o.key === key)?.resolved

test('Kafka config blocks are read whole from a real MirrorMaker 2 log, in order, each ending at its logger line', () => {
  const blocks = parseConfigBlocks(MM2_LOG)
  assert.deepEqual(
    blocks.map(b => b.kind),
    [
      'MirrorMakerConfig',
      'DistributedConfig',
      'ProducerConfig',
      'MirrorHeartbeatConfig',
      'MirrorSourceConfig',
      'TaskConfig',
      'ProducerConfig',
      'ProducerConfig',
      'ConsumerConfig',
      'ConsumerConfig',
    ]
  )
  const worker = blocks[1]!
  assert.equal(worker.values.get('offset.flush.interval.ms'), '60000')
  assert.equal(worker.values.get('exactly.once.source.support'), 'disabled')
  // An empty value (`access.control.allow.methods = `) is a setting, not the block's end.
  assert.equal(worker.values.get('access.control.allow.methods'), '')
  assert.equal(blocks[6]!.values.get('client.id'), 'connector-producer-MirrorSourceConnector-0')
  assert.equal(blocks[6]!.values.get('compression.type'), 'lz4')
})

test('Java values are compared in the form the bench passes them: classes, lists, brackets', () => {
  assert.equal(
    normaliseJavaValue('class org.apache.kafka.connect.mirror.IdentityReplicationPolicy'),
    'org.apache.kafka.connect.mirror.IdentityReplicationPolicy'
  )
  assert.equal(normaliseJavaValue('[127.0.0.1:29092]'), '127.0.0.1:29092')
  assert.equal(normaliseJavaValue('[a, b]'), 'a,b')
  assert.equal(normaliseJavaValue('[]'), '')
  assert.equal(normaliseJavaValue('-1'), '-1')
  assert.equal(javaPropertiesValue('bench\\\\.x'), 'bench\\.x')
})

test('MirrorMaker 1: every producer and consumer setting and --num.streams are found in effect in its log; its command line is listed unchecked', () => {
  const check = checkSettings(
    'mm1',
    'mm1.log',
    mirrorMaker1Expectations(MM1_CONSUMER, MM1_PRODUCER, { include: 'bench-118c9b-lz4-tuned', streams: 2, commitIntervalMs: 5000 }),
    parseConfigBlocks(MM1_LOG)
  )
  assert.deepEqual(mismatchLines(check), [])
  for (const key of ['acks', 'compression.type', 'batch.size', 'linger.ms', 'group.id', 'auto.offset.reset', '--num.streams']) {
    assert.equal(statusOf(check, key), 'ok', key)
  }
  assert.equal(statusOf(check, '--offset.commit.interval.ms'), 'unchecked')
  assert.equal(statusOf(check, '--include'), 'unchecked')
  assert.equal(requireSettings(check), check)
})

test('MirrorMaker 1: a producer setting it overrides, a thread count and an unknown key are mismatches, one line each', () => {
  const producer = { ...MM1_PRODUCER, 'linger.ms': '50', 'max.in.flight.requests.per.connection': '5', 'buffer.memroy': '1' }
  const check = checkSettings('mm1', 'w/mm1.log', mirrorMaker1Expectations(MM1_CONSUMER, producer, { include: 't', streams: 4 }), parseConfigBlocks(MM1_LOG))
  assert.deepEqual(mismatchLines(check), [
    'mm1: linger.ms passed 50, resolved 10 (ProducerConfig in w/mm1.log)',
    // Not given, MirrorMaker 1 sets one request in flight itself: the log of that run shows 1.
    'mm1: max.in.flight.requests.per.connection passed 5, resolved 1 (ProducerConfig in w/mm1.log)',
    'mm1: buffer.memroy passed 1, resolved (absent) (ProducerConfig in w/mm1.log)',
    'mm1: --num.streams passed 4, resolved 2 (ConsumerConfig of client.id ^bench-118c9blz4tunedr1mm1-\\d+$ blocks in w/mm1.log)',
  ])
  assert.throws(() => requireSettings(check), (error: unknown) => error instanceof SettingsMismatchError && error.message.split('\n').length === 4)
})

test('MirrorMaker 2: every passed key is found in effect where Connect prints it; the checkpoint connector\'s keys are unchecked', () => {
  const check = checkSettings('mm2', 'mm2.log', mirrorMaker2Expectations(mm2Written(), ALIASES), parseConfigBlocks(MM2_LOG))
  assert.deepEqual(mismatchLines(check), [])
  assert.equal(statusOf(check, 'tasks.max'), 'ok')
  assert.equal(statusOf(check, `${ALIASES.target}.producer.compression.type`), 'ok')
  assert.equal(statusOf(check, `${ALIASES.target}.producer.acks`), 'ok')
  assert.equal(statusOf(check, `${ALIASES.source}.consumer.auto.offset.reset`), 'ok')
  assert.equal(statusOf(check, 'replication.policy.class'), 'ok')
  assert.equal(statusOf(check, 'clusters'), 'ok')
  assert.deepEqual(
    check.outcomes
      .filter(o => o.status === 'unchecked')
      .map(o => o.key)
      .sort(),
    [
      'checkpoints.topic.replication.factor',
      'emit.checkpoints.enabled',
      `${ALIASES.target}->${ALIASES.source}.enabled`,
      'refresh.groups.enabled',
      'sync.group.offsets.enabled',
    ].sort()
  )
})

test('MirrorMaker 2: a commit interval its worker did not take (the run was started without one) fails with the worker\'s 60 s default', () => {
  // The fairness bug: a top-level key, or one the worker never received, leaves offset.flush.interval.ms at 60000.
  for (const key of [`${ALIASES.target}.offset.flush.interval.ms`, 'offset.flush.interval.ms']) {
    const check = checkSettings('mm2', 'mm2.log', mirrorMaker2Expectations(mm2Written({ [key]: 5000 }), ALIASES), parseConfigBlocks(MM2_LOG))
    const where = key === 'offset.flush.interval.ms' ? 'DistributedConfig' : 'DistributedConfig offset.flush.interval.ms'
    assert.deepEqual(mismatchLines(check), [`mm2: ${key} passed 5000, resolved 60000 (${where} in mm2.log)`])
  }
})

test('MirrorMaker 2: exactly-once and producer settings are read from the worker and from the task producers only', () => {
  const { target: t } = ALIASES
  const check = checkSettings(
    'mm2-eos',
    'mm2.log',
    mirrorMaker2Expectations(mm2Written({ [`${t}.exactly.once.source.support`]: 'enabled', [`${t}.producer.linger.ms`]: '5' }), ALIASES),
    parseConfigBlocks(MM2_LOG)
  )
  assert.equal(resolvedOf(check, `${t}.exactly.once.source.support`), 'disabled')
  // The worker's own offsets producer has linger.ms=5; the two task producers have 10.
  assert.equal(resolvedOf(check, `${t}.producer.linger.ms`), '10')
  assert.equal(mismatchLines(check).length, 2)
})

test('MirrorMaker 2: no config block in the log (it never started) is a mismatch naming the block, not a pass', () => {
  const check = checkSettings('mm2', 'mm2.log', mirrorMaker2Expectations(mm2Written(), ALIASES), [])
  assert.ok(check.outcomes.every(o => o.status !== 'ok'))
  assert.match(mismatchLines(check).find(line => line.includes('tasks.max')) ?? '', /^mm2: tasks\.max passed 2, resolved \(no MirrorSourceConfig block\)/)
})

test('sidecar: the files and flags it was given are found in its --print-config; flags the bench does not map are unchecked', () => {
  const argv = [
    '--consumer.config',
    's.properties',
    '--producer.config',
    't.properties',
    '--whitelist',
    'bench-118c9b-lz4-tuned',
    '--num.streams',
    '2',
    '--metrics.port',
    '0',
    '--metrics.host',
    '127.0.0.1',
    '--pass.through=off',
    '--scrape.something',
    '1',
  ]
  const consumer = { ...MM1_CONSUMER, 'group.id': 'bench-118c9blz4tunedr1sidecar' }
  const check = checkSettings('sidecar', 'p.json', sidecarExpectations(consumer, MM1_PRODUCER, argv), [printConfigBlock(SIDECAR_PRINT_CONFIG)])
  assert.deepEqual(mismatchLines(check), [])
  for (const key of [
    'acks',
    'compression.type',
    'batch.size',
    'linger.ms',
    'bootstrap.servers',
    'group.id',
    'auto.offset.reset',
    '--whitelist',
    '--num.streams',
    '--pass.through',
  ]) { assert.equal(statusOf(check, key), 'ok', key) }
  assert.equal(statusOf(check, '--scrape.something'), 'unchecked')
})

test('sidecar: a value it resolved differently, a key it ignores and exactly-once it did not turn on are mismatches', () => {
  const argv = ['--num.streams', '3', '--exactly.once', 'true']
  const check = checkSettings('sidecar', 'p.json', sidecarExpectations({}, { 'compression.type': 'zstd', 'buffer.memory': '1' }, argv), [
    printConfigBlock(SIDECAR_PRINT_CONFIG),
  ])
  assert.deepEqual(mismatchLines(check), [
    'sidecar: compression.type passed zstd, resolved lz4 (print-config flows.0.producer.compression in p.json)',
    'sidecar: buffer.memory passed 1, resolved (absent) (print-config flows.0.producer.buffer.memory in p.json)',
    'sidecar: --num.streams passed 3, resolved 2 (print-config flows.0.numStreams in p.json)',
    'sidecar: --exactly.once passed true, resolved (absent) (print-config flows.0.exactlyOnce.key in p.json)',
  ])
})

test('command-line flags are read in both forms; a flag followed by another flag is true', () => {
  assert.deepEqual(commandLineFlags(['--a', '1', '--b=2', '--c', '--d', 'x', 'stray']), [
    { name: 'a', value: '1' },
    { name: 'b', value: '2' },
    { name: 'c', value: 'true' },
    { name: 'd', value: 'x' },
  ])
})

test('the results list, per contender, the settings shown in effect and those not printed', () => {
  const check = checkSettings(
    'mm1',
    'mm1.log',
    mirrorMaker1Expectations(MM1_CONSUMER, MM1_PRODUCER, { include: 't', streams: 2, commitIntervalMs: 5000 }),
    parseConfigBlocks(MM1_LOG)
  )
  const lines = settingsSection([{ contender: 'mm1', settings: check }, { contender: 'mm1', settings: check }], () => 'MirrorMaker 1').join('\n')
  assert.match(lines, /## Settings checked/)
  assert.match(
    lines,
    /\| MirrorMaker 1 \| 9 \| bootstrap\.servers=127\.0\.0\.1:19092, .*linger\.ms=10.*--num\.streams=2 \| --include=t \(MirrorMaker 1 does not print its command-line options\); --offset\.commit\.interval\.ms=5000 \(/
  )
  assert.equal(lines.match(/\| MirrorMaker 1 \|/g)?.length, 1)
  assert.deepEqual(settingsSection([{ contender: 'direct' }], name => name), [])
})
