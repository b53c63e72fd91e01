import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { createKafkaClient } from '../../src/kafka/client.js'
import type { LocalCluster } from '../../scripts/local-kafka/local-cluster.js'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { dumpLogSegment } from '../helpers/log-segments.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
/** Offset, key, value (NULL shown as NULL), timestamp and headers of each record. */
const FORMAT = '%o|%k|%s|%T|%h\n'

/** Produces `lines` (key:value; an empty value is a null value) with kcat to partition 0, compressed with `codec`, in batches of up to 500. */
async function kcatProduce (bootstrap: string, topic: string, codec: string, lines: string[], batchRecords = 500): Promise<void> {
  const child = spawn(
    'kcat',
    [
      '-P',
      '-b',
      bootstrap,
      '-t',
      topic,
      '-p',
      '0',
      '-z',
      codec,
      '-K',
      ':',
      '-Z',
      '-H',
      `codec=${codec}`,
      '-H',
      'repeat=1',
      '-H',
      'repeat=2',
      '-X',
      'linger.ms=50',
      '-X',
      `batch.num.messages=${batchRecords}`,
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] }
  )
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += String(chunk) })
  child.stdin.end(lines.join('\n') + '\n')
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  assert.equal(code, 0, `kcat -P failed: ${stderr}`)
}

async function kcatRead (bootstrap: string, topic: string): Promise<string[]> {
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-Z', '-f', FORMAT], {
    maxBuffer: 256 * 1024 * 1024,
  })
  return stdout.split('\n').filter(line => line !== '')
}

/** The codecs of the batches of partition 0 of `topic` as Kafka's own DumpLogSegments reads them. */
async function segmentCodecs (cluster: LocalCluster, topic: string): Promise<string[]> {
  return [...new Set((await segmentBatches(cluster, topic)).map(line => (/compresscodec: (\w+)/.exec(line)?.[1] ?? '?').toLowerCase()))]
}

/** One line per batch of partition 0 of `topic`, from Kafka's own DumpLogSegments. */
async function segmentBatches (cluster: LocalCluster, topic: string): Promise<string[]> {
  return (await dumpLogSegment(cluster, topic)).split('\n').filter(line => line.startsWith('baseOffset:'))
}

/** `mirror-check verify` of `topic` (the same name on both clusters) against the mirror's offset syncs; asserts exit 0. */
async function assertVerifies (source: LocalCluster, target: LocalCluster, topic: string, group: string): Promise<void> {
  const result = await runMirrorCheck([
    'verify',
    '--source',
    source.bootstrap,
    '--target',
    target.bootstrap,
    '--topic',
    topic,
    '--group',
    group,
    '--format',
    'json',
  ])
  assert.equal(result.code, 0, `verify of ${topic}: ${result.stdout}${result.stderr}`)
}

/** `kafka_mirror_batches_total` by path (and reason for the deep path). */
function batchesByPath (exposition: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const match of exposition.matchAll(/^kafka_mirror_batches_total\{[^}]*path="(\w+)",reason="(\w*)"\} (\S+)$/gm)) {
    const key = match[2] === '' ? match[1] as string : `${match[1]}:${match[2]}`
    out.set(key, (out.get(key) ?? 0) + Number(match[3]))
  }
  return out
}

test(
  'pass-through: batches in each of the five codecs written by kcat are forwarded undecoded; offsets, keys, null values, headers, timestamps and codec are identical on the target, and verify passes',
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const prefix = uniqueName('pt')
    const lines = Array.from({ length: 2_000 }, (_, i) => (i % 7 === 3 ? `key-${i}:` : `key-${i}:${'value-'.repeat(i % 20)}${i}`))
    for (const codec of CODECS) {
      const topic = await createTopic(t, source, { name: `${prefix}-${codec}` })
      t.after(() => deleteTopicIfExists(target, topic))
      // Uncompressed batches of 7 records: several go to the target as one (merged) batch.
      await kcatProduce(source.bootstrap, topic, codec, lines, codec === 'none' ? 7 : 500)
    }
    const group = uniqueName('pt')
    const sidecar = spawnSidecar(t, { source, target, groupId: group, include: `${prefix}-.*` })
    await waitMirroring(sidecar)
    const port = await sidecarHttpPort(sidecar)
    for (const codec of CODECS) {
      const topic = `${prefix}-${codec}`
      await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 2_000n, { timeoutMs: 60_000, message: `${topic} copied` })
      const [from, to] = await Promise.all([kcatRead(source.bootstrap, topic), kcatRead(target.bootstrap, topic)])
      assert.equal(from.length, 2_000)
      assert.ok(
        from.some(line => line.includes('|NULL|')),
        'some values are null'
      )
      assert.deepEqual(to, from, `${codec}: offset, key, value, headers and timestamp read back identical`)
      assert.deepEqual(await segmentCodecs(target, topic), [codec], `${codec}: the target keeps the batches' codec`)
    }
    const [sourceBatches, targetBatches] = await Promise.all([segmentBatches(source, `${prefix}-none`), segmentBatches(target, `${prefix}-none`)])
    assert.ok(
      targetBatches.length < sourceBatches.length,
      `small uncompressed batches were written together: ${sourceBatches.length} batches on the source, ${targetBatches.length} on the target`
    )
    const exposition = await scrape(port)
    const paths = batchesByPath(exposition)
    assert.ok((paths.get('pass_through') ?? 0) >= CODECS.length, `batches went through pass-through: ${JSON.stringify([...paths])}`)
    assert.deepEqual(
      [...paths.keys()].filter(key => key.startsWith('deep')),
      [],
      'no batch was decoded'
    )
    // The batches came in fetches the source answered: the fetch counter moved.
    const fetches = Number(/^kafka_mirror_fetch_requests_total\{[^}]*\} (\S+)$/m.exec(exposition)?.[1])
    assert.ok(fetches >= 1 && Number.isFinite(fetches), `fetch requests counted: ${fetches}`)
    await waitUntil(async () => (await committedOffsets(source, group, `${prefix}-zstd`)).get(0) === 2_000n, {
      timeoutMs: 30_000,
      message: 'the mirror to commit',
    })
    for (const codec of CODECS) {
      const result = await runMirrorCheck([
        'verify',
        '--source',
        source.bootstrap,
        '--target',
        target.bootstrap,
        '--topic',
        `${prefix}-${codec}`,
        '--group',
        group,
        '--format',
        'json',
      ])
      assert.equal(result.code, 0, `verify of the ${codec} copy: ${result.stdout}${result.stderr}`)
    }
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  'pass-through: a batch larger than the target topic accepts is written decoded, record by record if need be, never dropped; the reason is counted',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('pt-large') })
    await createTopic(t, target, { name: topic, configs: { 'max.message.bytes': '8192' } })
    const lines = Array.from({ length: 600 }, (_, i) => `key-${i}:${String(i).padStart(400, 'x')}`)
    await kcatProduce(source.bootstrap, topic, 'none', lines)
    const group = uniqueName('pt-large')
    const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic })
    await waitMirroring(sidecar)
    const port = await sidecarHttpPort(sidecar)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 600n, { timeoutMs: 90_000, message: `${topic} copied` })
    const [from, to] = await Promise.all([kcatRead(source.bootstrap, topic), kcatRead(target.bootstrap, topic)])
    assert.deepEqual(to, from, 'every record once, in order')
    const paths = batchesByPath(await scrape(port))
    assert.ok((paths.get('deep:refused_by_target') ?? 0) > 0, `the refused batches are counted: ${JSON.stringify([...paths])}`)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
    await assertVerifies(source, target, topic, group)
  }
)

test('pass-through: kill -9 while batches are forwarded and a restart lose nothing', { timeout: 240_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('pt-kill'), partitions: 3 })
  t.after(() => deleteTopicIfExists(target, topic))
  const total = 60_000
  const lines = Array.from({ length: total }, (_, i) => `k${i}:${'payload-'.repeat(8)}${i}`)
  const child = spawn('kcat', ['-P', '-b', source.bootstrap, '-t', topic, '-z', 'lz4', '-K', ':', '-X', 'linger.ms=20'], { stdio: ['pipe', 'ignore', 'pipe'] })
  child.stdin.end(lines.join('\n') + '\n')
  assert.equal(await new Promise<number | null>(resolve => child.once('exit', resolve)), 0)
  const group = uniqueName('pt-kill')
  // A short session: the killed member leaves the group in 6 s, not the default 45 s, before the second joins.
  const consumer = { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 }
  const first = spawnSidecar(t, { source, target, groupId: group, include: topic, consumer, args: ['--offset.commit.interval.ms', '200'] })
  await waitMirroring(first)
  await waitUntil(async () => await totalRecords(target, topic).catch(() => 0n) >= 5_000n, { timeoutMs: 60_000, message: 'part of the topic copied' })
  first.child.kill('SIGKILL')
  await first.exited
  const second = spawnSidecar(t, { source, target, groupId: group, include: topic, consumer })
  await waitMirroring(second)
  // Done is when the group's commits reach the source's end: a total on the target proves nothing,
  // since the records replayed after the kill are counted in it too.
  await waitUntil(async () => {
    const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs: 120_000, message: 'the whole topic copied and committed' })
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', target.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k\n'], {
    maxBuffer: 64 * 1024 * 1024,
  })
  const keys = new Set(stdout.split('\n').filter(line => line !== ''))
  const missing = lines.filter(line => !keys.has(line.slice(0, line.indexOf(':')))).length
  assert.equal(missing, 0, 'no record is missing on the target')
  second.child.kill('SIGTERM')
  assert.equal(await second.exited, 0)
})

test(
  'pass-through: a topic whose batches mix codecs is forwarded batch by batch in each codec; a LogAppendTime source takes the deep path, counted',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const mixed = await createTopic(t, source, { name: uniqueName('pt-mixed') })
    const appendTime = await createTopic(t, source, { name: uniqueName('pt-append'), configs: { 'message.timestamp.type': 'LogAppendTime' } })
    for (const topic of [mixed, appendTime]) t.after(() => deleteTopicIfExists(target, topic))
    for (const [index, codec] of ['lz4', 'none', 'zstd', 'gzip', 'snappy', 'lz4'].entries()) {
      await kcatProduce(
        source.bootstrap,
        mixed,
        codec,
        Array.from({ length: 100 }, (_, i) => `m${index}-${i}:${codec}-${i}`)
      )
    }
    await kcatProduce(
      source.bootstrap,
      appendTime,
      'lz4',
      Array.from({ length: 300 }, (_, i) => `a${i}:v${i}`)
    )
    const mixedGroup = uniqueName('pt-mixed')
    const sidecar = spawnSidecar(t, { source, target, groupId: mixedGroup, include: `${mixed}|${appendTime}` })
    await waitMirroring(sidecar)
    const port = await sidecarHttpPort(sidecar)
    await waitUntil(
      async () => (await totalRecords(target, mixed).catch(() => 0n)) === 600n && (await totalRecords(target, appendTime).catch(() => 0n)) === 300n,
      { timeoutMs: 60_000, message: 'both topics copied' }
    )
    const [from, to] = await Promise.all([kcatRead(source.bootstrap, mixed), kcatRead(target.bootstrap, mixed)])
    assert.deepEqual(to, from, 'the mixed-codec topic reads back identical')
    // The target topic is created with the source's message.timestamp.type, so the target stamps its own append time.
    const withoutTimestamp = (lines: string[]): string[] =>
      lines.map(line =>
        line
          .split('|')
          .filter((_, i) => i !== 3)
          .join('|')
      )
    const [fromAppend, toAppend] = await Promise.all([kcatRead(source.bootstrap, appendTime), kcatRead(target.bootstrap, appendTime)])
    assert.deepEqual(withoutTimestamp(toAppend), withoutTimestamp(fromAppend), 'the LogAppendTime topic reads back identical but for the timestamps')
    assert.deepEqual(
      (await segmentBatches(target, mixed)).map(line => (/compresscodec: (\w+)/.exec(line)?.[1] ?? '?').toLowerCase()),
      ['lz4', 'none', 'zstd', 'gzip', 'snappy', 'lz4']
    )
    const paths = batchesByPath(await scrape(port))
    assert.ok((paths.get('deep:log_append_time') ?? 0) > 0, `LogAppendTime batches counted: ${JSON.stringify([...paths])}`)
    assert.ok((paths.get('pass_through') ?? 0) >= 6)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
    await assertVerifies(source, target, mixed, mixedGroup)
  }
)

test(
  'pass-through: a transactional source with aborted transactions: whole committed batches are forwarded, nothing aborted is copied (target read uncommitted)',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('pt-txn'), partitions: 2 })
    t.after(() => deleteTopicIfExists(target, topic))
    const producer = createKafkaClient(source.connection('test-tx')).producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const committed: string[] = []
    try {
      for (let round = 0; round < 12; round++) {
        const tx = await producer.transaction()
        const messages = Array.from({ length: 40 }, (_, i) => ({
          partition: i % 2,
          key: `r${round}-${i}`,
          value: `${round % 3 === 1 ? 'aborted' : 'committed'}-${round}-${i}`,
        }))
        await tx.send({ topic, acks: -1, compression: kafkajs.CompressionTypes.GZIP, messages })
        if (round % 3 === 1) await tx.abort()
        else {
          await tx.commit()
          committed.push(...messages.map(m => m.value))
        }
      }
    } finally {
      await producer.disconnect()
    }
    const txnGroup = uniqueName('pt-txn')
    const sidecar = spawnSidecar(t, { source, target, groupId: txnGroup, include: topic })
    await waitMirroring(sidecar)
    const port = await sidecarHttpPort(sidecar)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= BigInt(committed.length), {
      timeoutMs: 60_000,
      message: 'the committed records copied',
    })
    const { stdout } = await execFileAsync(
      'kcat',
      ['-C', '-b', target.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_uncommitted', '-f', '%s\n'],
      { maxBuffer: 16 * 1024 * 1024 }
    )
    const copied = stdout.split('\n').filter(line => line !== '')
    assert.deepEqual([...copied].sort(), [...committed].sort(), 'exactly the committed records, each once, nothing aborted')
    const paths = batchesByPath(await scrape(port))
    assert.ok((paths.get('pass_through') ?? 0) > 0, `committed batches were forwarded: ${JSON.stringify([...paths])}`)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
    await assertVerifies(source, target, topic, txnGroup)
  }
)

test(
  'a transactional source where one transaction began before another and was aborted after it (the broker lists aborted transactions by when they ended): nothing aborted is copied, on either path',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const connect = async (name: string): Promise<kafkajs.Producer> => {
      const producer = createKafkaClient(source.connection(name)).producer({ transactionalId: uniqueName(name), idempotent: true, maxInFlightRequests: 1 })
      await producer.connect()
      t.after(() => producer.disconnect())
      return producer
    }
    const [early, late, plain] = await Promise.all([connect('tx-early'), connect('tx-late'), connect('tx-plain')])
    for (const [run, args] of [
      ['pass-through', []],
      ['deep path', ['--pass.through', 'off']],
    ] as const) {
      const topic = await createTopic(t, source, { name: uniqueName('pt-txn-order'), partitions: 1 })
      t.after(() => deleteTopicIfExists(target, topic))
      const send = async (tx: kafkajs.Transaction, values: string[]): Promise<void> => {
        await tx.send({ topic, acks: -1, messages: values.map(value => ({ partition: 0, key: value, value })) })
      }
      const committed: string[] = []
      for (let round = 0; round < 3; round++) {
        // `early` begins first and is aborted last: the broker lists it after `late` although its records come first.
        const a = await early.transaction()
        await send(a, [`aborted-early-${round}-0`, `aborted-early-${round}-1`])
        const b = await late.transaction()
        await send(b, [`aborted-late-${round}`])
        await b.abort()
        await send(a, [`aborted-early-${round}-2`])
        await a.abort()
        const c = await plain.transaction()
        const values = [`committed-${round}-0`, `committed-${round}-1`]
        await send(c, values)
        await c.commit()
        committed.push(...values)
      }
      const group = uniqueName('pt-txn-order')
      const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic, args })
      await waitMirroring(sidecar)
      const ends = await endOffsets(source, topic)
      await waitUntil(async () => (await committedOffsets(source, group, topic)).get(0) === ends.get(0), {
        timeoutMs: 60_000,
        message: `${run}: the source committed to its end`,
      })
      const { stdout } = await execFileAsync(
        'kcat',
        ['-C', '-b', target.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_uncommitted', '-f', '%s\n'],
        { maxBuffer: 16 * 1024 * 1024 }
      )
      assert.deepEqual(
        stdout.split('\n').filter(line => line !== ''),
        committed,
        `${run}: exactly the committed records, in order, nothing aborted`
      )
      sidecar.child.kill('SIGTERM')
      assert.equal(await sidecar.exited, 0)
      await assertVerifies(source, target, topic, group)
    }
  }
)
