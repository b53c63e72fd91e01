import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createTopic, produce, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
const PARTITIONS = 2
const KEEP = { 'retention.ms': '-1' }

interface RpoJson {
  passed: boolean
  missingRecords: number
  topics: Array<{
    partitions: Array<{
      partition: number
      alignedBy: string
      missing: number
      ranges: Array<{ fromOffset: number, toOffset: number, records: number, keys: Array<{ offset: number, timestamp: string, key: string }> }>
    }>
  }>
}

/** Every record of `topic` as `partition offset key` lines, read with kcat (an independent reader). */
async function kcatRecords (bootstrap: string, topic: string): Promise<Array<{ partition: number, offset: number, key: string }>> {
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%p %o %k\n'], {
    maxBuffer: 64 * 1024 * 1024,
  })
  return stdout.split('\n').filter(line => line !== '').map(line => {
    const [partition, offset, key] = line.split(' ')
    return { partition: Number(partition), offset: Number(offset), key: key! }
  })
}

let produced = 0
/** `count` records with unique keys, spread over the partitions. */
const batch = (count: number) => Array.from({ length: count }, () => {
  const n = produced++
  return { partition: n % PARTITIONS, key: `key-${n}`, value: `value-${n}` }
})

const TITLE = 'rpo lists exactly the source records a kcat read-back finds missing from the target after the mirror was killed mid-stream'
test(TITLE, { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: PARTITIONS, configs: KEEP })
  await createTopic(t, target, { name: topic, partitions: PARTITIONS, configs: KEEP })
  const group = uniqueName('mirror')
  await produce(source, topic, batch(200))
  const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic })
  await waitMirroring(sidecar)
  // Records keep coming while the mirror is killed: the copy stops somewhere in this stream.
  let streaming = true
  const stream = (async () => { while (streaming) await produce(source, topic, batch(10)) })()
  await waitUntil(async () => (await totalRecords(target, topic)) >= 300n, { timeoutMs: 60_000, message: 'the copy to pass 300 records' })
  sidecar.child.kill('SIGKILL')
  await sidecar.exited
  streaming = false
  await stream
  await produce(source, topic, batch(40))

  const onSource = await kcatRecords(source.bootstrap, topic)
  const onTarget = new Set((await kcatRecords(target.bootstrap, topic)).map(r => `${r.partition} ${r.key}`))
  const expected = onSource.filter(r => !onTarget.has(`${r.partition} ${r.key}`)).map(r => `${r.partition}@${r.offset} ${r.key}`).sort()
  t.diagnostic(`kcat: ${onSource.length} records on the source, ${onTarget.size} on the target, ${expected.length} missing`)
  assert.ok(expected.length >= 40, 'records produced after the kill are missing')

  const clusters = ['--source', source.bootstrap, '--target', target.bootstrap]
  const result = await runMirrorCheck(['rpo', ...clusters, '--topic', topic, '--group', group, '--keys', '--format', 'json'])
  assert.equal(result.code, 1, result.stderr)
  const report = JSON.parse(result.stdout) as RpoJson
  const partitions = report.topics[0]!.partitions
  const listed = partitions.flatMap(p => p.ranges.flatMap(r => r.keys.map(k => `${p.partition}@${k.offset} ${k.key}`))).sort()
  assert.deepEqual(listed, expected)
  assert.equal(report.missingRecords, expected.length)
  assert.deepEqual(partitions.map(p => p.alignedBy), ['offset-syncs', 'offset-syncs'])
  for (const p of partitions) {
    assert.equal(p.ranges.reduce((n, r) => n + r.records, 0), p.missing)
    for (const r of p.ranges) assert.deepEqual([r.keys[0]!.offset, r.keys.at(-1)!.offset, r.keys.length], [r.fromOffset, r.toOffset, r.records])
  }

  const table = await runMirrorCheck(['rpo', ...clusters, '--topic', topic, '--group', group])
  t.diagnostic(table.stdout)
  assert.equal(table.code, 1)
  assert.match(table.stdout, new RegExp(`^MISSING: ${expected.length} source records in `, 'm'))

  // failover --rpo: the same records, beside the plan of a group reading the topic.
  const app = uniqueName('app')
  const partitionOffsets = Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, offset: '50' }))
  await withAdmin(source, admin => admin.setOffsets({ groupId: app, topic, partitions: partitionOffsets }))
  const failover = await runMirrorCheck(['failover', ...clusters, '--group', app, '--rpo', '--format', 'json'])
  assert.equal(failover.code, 0, failover.stderr)
  type RpoOfTopic = { topic: string, missingRecords: number, ranges: Array<{ partition: number, records: number }> }
  const plan = JSON.parse(failover.stdout) as { groups: unknown[], rpo: RpoOfTopic[] }
  assert.equal(plan.groups.length, 1)
  assert.deepEqual(plan.rpo.map(r => [r.topic, r.missingRecords, r.ranges.reduce((n, x) => n + x.records, 0)]), [[topic, expected.length, expected.length]])
  assert.match(failover.stderr, new RegExp(`^mirror-check: rpo: ${topic}: ${expected.length} source record\\(s\\) not on the target$`, 'm'))
})

test('rpo with --offset-syncs-topic and --no-offset-syncs is one usage line and exit 2, before connecting', async () => {
  const clusters = ['--source', '127.0.0.1:1', '--target', '127.0.0.1:1']
  const result = await runMirrorCheck(['rpo', ...clusters, '--topic', 't', '--offset-syncs-topic', 'x', '--no-offset-syncs'])
  assert.equal(result.code, 2)
  assert.equal(result.stderr, 'mirror-check: --offset-syncs-topic and --no-offset-syncs exclude each other; give one\n')
})
