import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { configFromMm1 } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { pastedFlagProblems } from '../../../src/config/pasted-flags.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { ConfigError } from '../../../src/shared/errors.js'

const SIDECAR_BIN = fileURLToPath(new URL('../../../src/bin/mirror-sidecar.js', import.meta.url))

/** The single-file example of the MirrorMaker 2 article in /work/shared/seeds, hosts made local. */
const ARTICLE_ONE_FILE = `# MirrorMaker 基本配置
bootstrap.servers=127.0.0.1:19092
target.bootstrap.servers=127.0.0.1:29092
group.id=mirror-maker-group
# 消费者配置
consumer.auto.offset.reset=earliest
# 生产者配置
producer.acks=all
producer.retries=3
# 偏移量主题配置
offset.topic.replication.factor=2
# 过滤配置
whitelist=.*
`

/** The MirrorMaker 1 article's consumer and producer files (MirrorMaker 0.7: ZooKeeper, `Groupid` as pasted). */
const ARTICLE_CONSUMER = 'zk.connect=szk0:2181,szk1:2181,szk2:2181\nGroupid=test-mirror-consumer-group\n'
const ARTICLE_PRODUCER = 'zk.connect=tzk0:2181,tzk1:2181\n'

function tempDir (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-seed-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function write (dir: string, name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

function mm2 (path: string, clusters?: string[]): ReturnType<typeof configFromMm2> {
  const settings = sidecarSettingsFromFlags({}, new ProblemList())
  return configFromMm2(path, { settings, ...(clusters === undefined ? {} : { clusters }) })
}

function problemsOf (run: () => unknown): string[] {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error.message.split('\n')
    throw error
  }
  assert.fail('expected a ConfigError')
}

function sidecar (args: string[]): { status: number | null, stderr: string, stdout: string } {
  // Without MIRROR_* variables: they set flags.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_')))
  const run = spawnSync(process.execPath, [SIDECAR_BIN, ...args], { encoding: 'utf8', timeout: 20_000, env })
  return { status: run.status, stderr: run.stderr, stdout: run.stdout }
}

test('the MirrorMaker 2 article\'s one-file example becomes one flow source->target', t => {
  const path = write(tempDir(t), 'mirror.properties', ARTICLE_ONE_FILE)
  const config = mm2(path)
  assert.equal(config.flows.length, 1)
  const flow = config.flows[0]!
  assert.equal(flow.name, 'source->target')
  assert.deepEqual([...flow.source.brokers], ['127.0.0.1:19092'])
  assert.deepEqual([...flow.target.brokers], ['127.0.0.1:29092'])
  assert.equal(flow.consumer.groupId, 'mirror-maker-group')
  assert.equal(flow.consumer.autoOffsetReset, 'earliest')
  assert.equal(flow.producer.acks, -1)
  assert.equal(flow.topics.include, '.*')
  assert.ok(flow.topics.matches('orders'))
  assert.deepEqual(flow.replicationPolicy, { kind: 'identity' }, 'target topics keep their names, as MirrorMaker 1 does')
  assert.equal(flow.offsetSyncs.topic, 'mirror-offset-syncs.source.internal')
  assert.deepEqual(config.ignoredKeys, ['offset.topic.replication.factor', 'producer.retries'])
})

test('one-file form: consumer.* wins over top-level keys, producer.* over target.*, MirrorMaker 1 flag names are keys', t => {
  const path = write(tempDir(t), 'mirror.properties', [
    'bootstrap.servers=127.0.0.1:19092', 'group.id=plain', 'consumer.group.id=from-consumer',
    'target.bootstrap.servers=127.0.0.1:29092', 'target.compression.type=gzip', 'producer.compression.type=zstd',
    'whitelist=orders.*', 'blacklist=orders\\.tmp', 'num.streams=3', 'num.producers=2',
  ].join('\n'))
  const flow = mm2(path).flows[0]!
  assert.equal(flow.consumer.groupId, 'from-consumer')
  assert.equal(flow.producer.compression, 'zstd')
  assert.ok(flow.topics.matches('orders.a'))
  assert.ok(!flow.topics.matches('orders.tmp'))
  assert.equal(flow.numStreams, 3)
  assert.equal(flow.numProducers, 2)
})

test('one-file form: problems name the file and the key as written there', t => {
  const dir = tempDir(t)
  const path = write(dir, 'mirror.properties', 'bootstrap.servers=127.0.0.1:19092\ntarget.bootstrap.servers=localhost\nwhitelist=(\nnum.streams=abc\n')
  assert.deepEqual(problemsOf(() => mm2(path)), [
    `${path}: whitelist "(": not a valid regex (/^(?:()$/u: Unterminated group); check brackets and escapes`,
    `${path}: num.streams "abc": expected a positive integer`,
    `${path}: target.bootstrap.servers "localhost": expected host:port[,host:port...]`,
  ])
  const noTopics = write(dir, 'no-topics.properties', 'bootstrap.servers=127.0.0.1:19092\ntarget.bootstrap.servers=127.0.0.1:29092\n')
  assert.deepEqual(problemsOf(() => mm2(noTopics)), [`${noTopics}: whitelist: missing; name the topics to mirror, e.g. whitelist=orders.*,payments`])
  assert.match(problemsOf(() => mm2(path, ['B']))[0] ?? '', /^--clusters "B": .* names no clusters .*drop --clusters$/)
})

test('a file with bootstrap.servers but neither target nor clusters says how to write either form', t => {
  const path = write(tempDir(t), 'mirror.properties', 'bootstrap.servers=127.0.0.1:19092\ngroup.id=g\nwhitelist=.*\n')
  const [line, ...more] = problemsOf(() => mm2(path))
  assert.deepEqual(more, [])
  assert.match(
    line ?? '',
    /^clusters: missing in .*mirror\.properties, which has bootstrap\.servers but no target: for one source and one target add target\.bootstrap\.servers=<target brokers>; for the MirrorMaker 2 form write clusters = A, B/
  )
})

test('the one-file form given as --consumer.config: one line saying to pass it as the file', t => {
  const path = write(tempDir(t), 'mirror.properties', ARTICLE_ONE_FILE)
  assert.deepEqual(problemsOf(() => configFromMm1({ 'consumer.config': [path], whitelist: '.*' })), [
    `--consumer.config "${path}": holds target.bootstrap.servers, the one-file form (source and target in one file); run it as mirror-sidecar ${path}, without --consumer.config and --producer.config`,
  ])
})

test('MirrorMaker 0.7/0.8 client files: zk.connect and groupid each get one line saying what to write', t => {
  const dir = tempDir(t)
  const consumer = write(dir, 'sourceClusterConsumer.config', ARTICLE_CONSUMER)
  const producer = write(dir, 'targetClusterProducer.config', ARTICLE_PRODUCER)
  assert.deepEqual(problemsOf(() => configFromMm1({ 'consumer.config': [consumer], 'producer.config': producer, whitelist: '.*' })), [
    `${producer}: bootstrap.servers: missing; zk.connect=tzk0:2181,tzk1:2181 is a ZooKeeper address (MirrorMaker 0.7/0.8) and Kafka 4 has no ZooKeeper: replace it with bootstrap.servers=<the target cluster's brokers, host:port,...>`,
    `${consumer}: bootstrap.servers: missing; zk.connect=szk0:2181,szk1:2181,szk2:2181 is a ZooKeeper address (MirrorMaker 0.7/0.8) and Kafka 4 has no ZooKeeper: replace it with bootstrap.servers=<the source cluster's brokers, host:port,...>`,
    `${consumer}: Groupid "test-mirror-consumer-group": is the MirrorMaker 0.7 name of group.id; write group.id=test-mirror-consumer-group`,
  ])
  const zookeeper = write(dir, 'zookeeper.properties', 'zookeeper.connect=zk:2181\ngroup.id=g\n')
  const brokerList = write(dir, 'broker-list.properties', 'metadata.broker.list=k1:9092,k2:9092\n')
  assert.deepEqual(problemsOf(() => configFromMm1({ 'consumer.config': [zookeeper], 'producer.config': brokerList, whitelist: '.*' })), [
    `${brokerList}: bootstrap.servers: missing; metadata.broker.list is the MirrorMaker 0.8 name: write bootstrap.servers=k1:9092,k2:9092`,
    `${zookeeper}: bootstrap.servers: missing; zookeeper.connect=zk:2181 is a ZooKeeper address (MirrorMaker 0.7/0.8) and Kafka 4 has no ZooKeeper: replace it with bootstrap.servers=<the source cluster's brokers, host:port,...>`,
  ])
})

test('old keys beside the current ones are only listed as ignored', t => {
  const dir = tempDir(t)
  const consumer = write(dir, 'source.properties', 'bootstrap.servers=127.0.0.1:19092\nzk.connect=zk:2181\ngroup.id=new\ngroupid=old\n')
  const producer = write(dir, 'target.properties', 'bootstrap.servers=127.0.0.1:29092\n')
  const config = configFromMm1({ 'consumer.config': [consumer], 'producer.config': producer, whitelist: '.*' })
  assert.equal(config.flows[0]?.consumer.groupId, 'new')
  assert.deepEqual(config.ignoredKeys, [`${consumer}: groupid`, `${consumer}: zk.connect`])
})

test('flags pasted with an en dash, em dash or one hyphen: did you mean --flag', () => {
  const flags = ['consumer.config', 'producer.config', 'num.streams', 'whitelist']
  const lines = pastedFlagProblems(
    ['–num.streams', '2', '—whitelist=.*', 'mirrormaker–consumer.config', 'a.config', '-num.streams', '−unknown.flag', '--whitelist', 'a–b', '-5'],
    flags
  ).map(p => `${p.key}: ${p.message}`)
  assert.deepEqual(lines, [
    '–num.streams: "–" is not "--" (U+2013, as pasted from a web page); did you mean --num.streams',
    '—whitelist=.*: "—" is not "--" (U+2014, as pasted from a web page); did you mean --whitelist=.*',
    'mirrormaker–consumer.config: "–" is not "--" (U+2013, as pasted from a web page); did you mean mirrormaker --consumer.config',
    '-num.streams: long flags take two hyphens; did you mean --num.streams',
    '−unknown.flag: "−" is not "--" (U+2212, as pasted from a web page); did you mean --unknown.flag',
  ])
  assert.deepEqual(pastedFlagProblems(['--', '–num.streams'], flags), [], 'nothing after --')
})

test('the built bin: seed forms exit 2 with one line each before connecting, the one-file form runs', t => {
  const dir = tempDir(t)
  const pasted = sidecar(['–consumer.config', 'source.config', '–num.streams', '2', '--producer.config', 'target.config', '--whitelist', '.*'])
  assert.equal(pasted.status, 2, pasted.stderr)
  assert.deepEqual(pasted.stderr.trimEnd().split('\n'), [
    'mirror-sidecar: 2 problems in the command line:',
    '  –consumer.config: "–" is not "--" (U+2013, as pasted from a web page); did you mean --consumer.config',
    '  –num.streams: "–" is not "--" (U+2013, as pasted from a web page); did you mean --num.streams',
  ])
  const one = sidecar(['–num.streams', '2'])
  assert.equal(one.status, 2)
  assert.equal(one.stderr, 'mirror-sidecar: –num.streams: "–" is not "--" (U+2013, as pasted from a web page); did you mean --num.streams\n')

  const consumer = write(dir, 'sourceClusterConsumer.config', ARTICLE_CONSUMER)
  const producer = write(dir, 'targetClusterProducer.config', ARTICLE_PRODUCER)
  const legacy = sidecar(['--consumer.config', consumer, '--producer.config', producer, '--whitelist', '.*'])
  assert.equal(legacy.status, 2, legacy.stderr)
  const lines = legacy.stderr.trimEnd().split('\n')
  assert.equal(lines[0], 'mirror-sidecar: 3 problems in the configuration:')
  assert.equal(lines.filter(line => line.includes('Kafka 4 has no ZooKeeper')).length, 2)
  assert.ok(lines.some(line => line.endsWith('write group.id=test-mirror-consumer-group')))
  assert.doesNotMatch(legacy.stderr, /\n\s+at /, 'no stack trace')

  const oneFile = sidecar([write(dir, 'mirror.properties', ARTICLE_ONE_FILE), '--print-config'])
  assert.equal(oneFile.status, 0, oneFile.stderr)
  const printed = JSON.parse(oneFile.stdout) as { flows: Array<{ name: string, consumer: { groupId: string } }> }
  assert.deepEqual(printed.flows.map(f => [f.name, f.consumer.groupId]), [['source->target', 'mirror-maker-group']])
})
