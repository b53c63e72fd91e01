import assert from 'node:assert/strict'
import { test } from 'node:test'
import { committedOffsets, createTopic, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck, type CliResult } from '../helpers/mirror-check.js'
import { commitAsAdmin, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface DrillJson {
  result: string
  rto: { objectiveSeconds: number | null, seconds: number, met: boolean }
  rpo: { objectiveRecords: number | null, records: number, met: boolean }
  failover: { outcome: string, blocker: string | null, exact: boolean, offsetSyncsTopic: string }
  failback: { exact: boolean, error: string | null }
  unmirrored: Array<{ partition: number, sourceEndOffset: number, mirroredUpTo: number, records: number }>
}

function json (result: CliResult): DrillJson {
  try {
    return JSON.parse(result.stdout) as DrillJson
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`)
  }
}

test('mirror-check drill: over and back exactly, RPO the records not yet mirrored; exit 1 when an objective is missed', { timeout: 180_000 }, async t => {
  const { source, target } = await sharedClusters()
  const prefix = uniqueName('drill')
  const topic = await createTopic(t, source, { name: `${prefix}-t`, partitions: 2 })
  await createTopic(t, target, { name: topic, partitions: 2 })
  await produce(target, topic, tagged('other', 0, 3)) // target partition 0 is shifted by 3
  await produce(source, topic, [...tagged('d', 0, 40), ...tagged('d', 1, 40)])
  const group = `${prefix}-app`
  await commitAsAdmin(source, group, topic, new Map([[0, 12n], [1, 25n]]))
  const mirrorGroup = uniqueName('mirror')
  const sidecar = spawnSidecar(t, { source, target, groupId: mirrorGroup, include: topic })
  await waitMirroring(sidecar)
  await waitUntil(async () => [...(await committedOffsets(source, mirrorGroup, topic)).values()].every(o => o === 40n), {
    timeoutMs: 60_000,
    message: 'the mirror to commit the end offsets',
  })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  await produce(source, topic, [...tagged('late', 0, 4), ...tagged('late', 1, 6)]) // 10 records the target does not have

  const base = ['drill', '--source', source.bootstrap, '--target', target.bootstrap, '--group', group, '--format', 'json']
  const met = await runMirrorCheck([...base, '--rpo-records', '10', '--rto-seconds', '60'])
  assert.equal(met.code, 0, met.stderr)
  const report = json(met)
  t.diagnostic(`drill: RTO ${report.rto.seconds} s, RPO ${report.rpo.records} records`)
  assert.deepEqual(
    { result: report.result, rpo: report.rpo, failover: report.failover, failback: report.failback },
    {
      result: 'passed',
      rpo: { objectiveRecords: 10, records: 10, met: true },
      failover: { outcome: 'written', blocker: null, exact: true, offsetSyncsTopic: 'mirror-offset-syncs.source.internal' },
      failback: { exact: true, error: null },
    }
  )
  assert.deepEqual(report.unmirrored.map(p => [p.partition, p.sourceEndOffset, p.mirroredUpTo, p.records]), [[0, 44, 40, 4], [1, 46, 40, 6]])
  assert.ok(report.rto.met && report.rto.seconds > 0)
  assert.deepEqual([...(await committedOffsets(target, group, topic))].sort(), [[0, 15n], [1, 25n]], 'the exact translation on the target')
  assert.deepEqual([...(await committedOffsets(source, group, topic))].sort(), [[0, 12n], [1, 25n]], 'the offsets before the drill on the source')
  assert.equal((await withAdmin(source, admin => admin.describeGroups([group]))).groups[0]?.members.length, 0)

  const missed = await runMirrorCheck([...base, '--rpo-records', '0'])
  assert.equal(missed.code, 1, missed.stderr)
  assert.deepEqual(json(missed).rpo, { objectiveRecords: 0, records: 10, met: false })
  assert.match(missed.stderr, /RPO 10 record\(s\) on the source not yet on the target \(objective 0: missed\)/)
  assert.deepEqual([...(await committedOffsets(target, group, topic))].sort(), [[0, 15n], [1, 25n]])
  assert.deepEqual([...(await committedOffsets(source, group, topic))].sort(), [[0, 12n], [1, 25n]])

  const bad = await runMirrorCheck(['drill', '--source', '127.0.0.1:1', '--target', '127.0.0.1:1', '--group', group, '--rpo-records', '-1'])
  assert.equal(bad.code, 2, bad.stderr)
  assert.match(bad.stderr, /--rpo-records "-1": expected a non-negative integer/)
})
