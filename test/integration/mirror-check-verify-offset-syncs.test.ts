import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { committedOffsets, createTopic, endOffsets, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface VerifyJson {
  passed: boolean
  total: { checked: number, missing: number, duplicated: number, extra: number, changed: number, outOfOrder: number }
  alignment: { offsetSyncsTopic: string | null, byPartition: Record<string, string> }
  partitions: Array<{
    partition: number
    alignment: { targetOffset: number, method: string }
    findings: Array<{ kind: string, sourceOffset?: number, targetOffset?: number }>
  }>
}

async function waitMirrored (source: LocalCluster, sidecar: SidecarProcess, group: string, topic: string): Promise<void> {
  const ends = await endOffsets(source, topic)
  await waitUntil(async () => {
    const committed = await committedOffsets(source, group, topic)
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs: 30_000, message: 'the mirror to commit the source end offsets' }).catch(error => {
    throw new Error(`${(error as Error).message}\nsidecar log:\n${sidecar.stderr().split('\n').filter(l => !l.includes('"level":"debug"')).slice(-20).join('\n')}`)
  })
}

test('verify aligns by the sidecar\'s offset syncs on a shifted target and still locates an extra record', { timeout: 90_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('verify-syncs'), partitions: 2 })
  // Records that were on the target before the mirror: target offsets are 37 and 11 ahead.
  await createTopic(t, target, { name: topic, partitions: 2 })
  await produce(target, topic, [...tagged('other', 0, 37), ...tagged('other', 1, 11)])
  await produce(source, topic, [...tagged('first', 0, 100), ...tagged('first', 1, 100)])

  const group = uniqueName('mirror')
  const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic })
  await waitMirroring(sidecar)
  await waitMirrored(source, sidecar, group, topic)

  const base = ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', group]
  const verify = async (extra: string[] = []): Promise<{ code: number, json: VerifyJson }> => {
    const result = await runMirrorCheck([...base, '--format', 'json', ...extra])
    assert.ok(result.stdout.startsWith('{'), `JSON on stdout, got: ${result.stdout}\nstderr: ${result.stderr}`)
    return { code: result.code, json: JSON.parse(result.stdout) as VerifyJson }
  }

  const faithful = await verify()
  assert.equal(faithful.code, 0)
  assert.deepEqual(faithful.json.total, { ...faithful.json.total, checked: 200, missing: 0, duplicated: 0, extra: 0, changed: 0, outOfOrder: 0 })
  assert.deepEqual(faithful.json.alignment, { offsetSyncsTopic: 'mirror-offset-syncs.source.internal', byPartition: { 0: 'offset-syncs', 1: 'offset-syncs' } })
  assert.deepEqual(faithful.json.partitions.map(p => [p.alignment.method, p.alignment.targetOffset]), [['offset sync', 37], ['offset sync', 11]])
  const table = await runMirrorCheck(base)
  assert.equal(table.code, 0, table.stderr)
  assert.match(table.stdout, /PASSED: 200 records checked/)
  assert.match(table.stdout, /^alignment: offset-syncs \(mirror-offset-syncs\.source\.internal\) on partitions 0,1$/m)

  const ordered = await verify(['--no-offset-syncs'])
  assert.equal(ordered.code, 0)
  assert.deepEqual(ordered.json.alignment, { offsetSyncsTopic: null, byPartition: { 0: 'order', 1: 'order' } })

  // Someone writes into the target partition between two mirrored batches.
  await produce(target, topic, [{ partition: 0, key: 'intruder', value: 'not from the source', timestamp: String(Date.now()) }])
  await produce(source, topic, [...tagged('second', 0, 50), ...tagged('second', 1, 50)])
  await waitMirrored(source, sidecar, group, topic)
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))

  const faulty = await verify()
  assert.equal(faulty.code, 1, 'exit code 1: the check failed')
  assert.deepEqual(faulty.json.total, { ...faulty.json.total, checked: 300, missing: 0, duplicated: 0, extra: 1, changed: 0, outOfOrder: 0 })
  assert.deepEqual(faulty.json.alignment.byPartition, { 0: 'offset-syncs', 1: 'offset-syncs' })
  // 37 records before the mirror, then 100 copies: the intruder is at target offset 137.
  assert.deepEqual(faulty.json.partitions.map(p => p.findings.map(f => [f.kind, f.targetOffset])), [[['extra', 137]], []])
})

test('verify --offset-syncs-topic names a topic that is not on the target: exit 2 naming the flag', { timeout: 30_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 1 })
  await createTopic(t, target, { name: topic, partitions: 1 })
  const missing = uniqueName('no-syncs')
  const result = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--offset-syncs-topic', missing])
  assert.equal(result.code, 2)
  assert.match(result.stderr, new RegExp(`^mirror-check: --offset-syncs-topic "${missing}": no such topic on the target cluster`, 'm'))
  assert.equal(result.stdout, '')
})
