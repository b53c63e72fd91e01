import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createTopic, deleteTopicIfExists, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { dumpLogSegment } from '../helpers/log-segments.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
const FORMAT = '%p|%k|%s|%T|%h\n'

/** Produces `lines` (key:value) with kcat, an independent librdkafka client, compressed with `codec`. */
async function kcatProduce (bootstrap: string, topic: string, codec: string, lines: string[]): Promise<void> {
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
      '-H',
      `codec=${codec}`,
      '-H',
      'repeat=1',
      '-H',
      'repeat=2',
      '-X',
      'linger.ms=50',
      '-X',
      'batch.num.messages=500',
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
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', FORMAT], {
    maxBuffer: 64 * 1024 * 1024,
  })
  return stdout.split('\n').filter(line => line !== '')
}

test(
  'each of the five codecs written by kcat is mirrored and reads back identical with kcat; the target is written in compression.type',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const prefix = uniqueName('codec')
    const lines = Array.from({ length: 300 }, (_, i) => `key-${i}:${'value-'.repeat(i % 20)}${i}`)
    for (const codec of CODECS) {
      const topic = await createTopic(t, source, { name: `${prefix}-${codec}` })
      t.after(() => deleteTopicIfExists(target, topic))
      await kcatProduce(source.bootstrap, topic, codec, lines)
    }
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('codec'), include: `${prefix}-.*`, producer: { 'compression.type': 'zstd' } })
    await waitMirroring(sidecar)
    for (const codec of CODECS) {
      const topic = `${prefix}-${codec}`
      await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 300n, { timeoutMs: 60_000, message: `${topic} copied` })
      const [from, to] = await Promise.all([kcatRead(source.bootstrap, topic), kcatRead(target.bootstrap, topic)])
      assert.equal(from.length, 300)
      assert.deepEqual(to, from, `${codec}: key, value, headers and timestamp read back identical`)
    }

    const stdout = await dumpLogSegment(target, `${prefix}-gzip`)
    const codecs = new Set([...stdout.matchAll(/compresscodec: (\w+)/g)].map(m => m[1]))
    assert.deepEqual([...codecs], ['zstd'], 'every batch on the target is written with compression.type=zstd')
  }
)

test('the target can be written in lz4, snappy and gzip: the broker accepts the batches and kcat reads them back identical', { timeout: 240_000 }, async t => {
  const { source, target } = await sharedClusters()
  const lines = Array.from({ length: 3_000 }, (_, i) => `key-${i}:${JSON.stringify({ id: i, customer: `customer-${i % 97}`, note: 'n'.repeat(i % 300) })}`)
  for (const codec of ['lz4', 'snappy', 'gzip'] as const) {
    const topic = await createTopic(t, source, { name: uniqueName(`out-${codec}`) })
    t.after(() => deleteTopicIfExists(target, topic))
    await kcatProduce(source.bootstrap, topic, 'none', lines)
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('codec-out'), include: topic, producer: { 'compression.type': codec } })
    await waitMirroring(sidecar)
    await waitUntil(async () => await totalRecords(target, topic).catch(() => 0n) === 3_000n, { timeoutMs: 60_000, message: `${topic} copied` })
    assert.deepEqual(await kcatRead(target.bootstrap, topic), await kcatRead(source.bootstrap, topic), `${codec}: read back identical`)
    const stdout = await dumpLogSegment(target, topic)
    assert.deepEqual([...new Set([...stdout.matchAll(/compresscodec: (\w+)/g)].map(m => m[1]?.toLowerCase()))], [codec])
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
})
