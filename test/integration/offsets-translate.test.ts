import assert from 'node:assert/strict'
import { test } from 'node:test'
import { translateOutput } from '../../src/check/commands/translate.js'
import { translateGroupOffsets } from '../../src/check/translate/translate-group.js'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { consumeAndCommit, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test('translate: exact where mirrored, "not yet mirrored" for a partition where the group is ahead of the mirror', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('tr'), partitions: 2 })
  t.after(() => deleteTopicIfExists(target, topic))
  await produce(source, topic, [...tagged('m', 0, 50), ...tagged('m', 1, 50)])
  const mirrorGroup = uniqueName('mirror')
  const sidecar = spawnSidecar(t, { source, target, groupId: mirrorGroup, include: topic })
  await waitMirroring(sidecar)
  await waitUntil(async () => {
    const committed = await committedOffsets(source, mirrorGroup, topic)
    return committed.get(0) === 50n && committed.get(1) === 50n
  }, { timeoutMs: 60_000, message: 'the mirror to commit 50 on both partitions' })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0)

  await produce(source, topic, tagged('late', 1, 10)) // the mirror is down: partition 1 goes beyond it
  const group = uniqueName('app')
  await consumeAndCommit(source, topic, group, new Map([[0, 50], [1, 60]]))

  const rows = await translateGroupOffsets({
    source: source.connection('test'),
    target: target.connection('test'),
    group,
    offsetSyncsTopic: 'mirror-offset-syncs.source.internal',
  })
  assert.deepEqual(rows.map(r => [r.partition, r.sourceOffset, r.status, r.targetOffset, r.mirroredUpTo]), [
    [0, 50n, 'translated', 50n, undefined],
    [1, 60n, 'not-yet-mirrored', undefined, 50n],
  ])

  const args = {
    source: source.bootstrap,
    target: target.bootstrap,
    group,
    'source-alias': 'source',
    format: 'table' as const,
    verbose: false,
    'timeout-ms': 3000,
  }
  const table = await translateOutput(args)
  assert.equal(table.exitCode, 1, 'exit 1: a partition is not translatable yet')
  const lines = table.text.trim().split('\n').map(line => line.trim().split(/\s+/))
  assert.deepEqual(lines[0], ['GROUP', 'TOPIC', 'PARTITION', 'SOURCE-OFFSET', 'TARGET-TOPIC', 'TARGET-OFFSET', 'STATUS'])
  assert.deepEqual(lines[1], [group, topic, '0', '50', topic, '50', 'ok'])
  assert.deepEqual(lines[2], [group, topic, '1', '60', '-', '-', 'not', 'yet', 'mirrored', '(mirrored', 'up', 'to', '50)'])

  const json = JSON.parse((await translateOutput({ ...args, topic, format: 'json' })).text) as Array<Record<string, unknown>>
  assert.deepEqual(
    json.map(r => [r.partition, r.sourceOffset, r.targetOffset, r.status]),
    [
      [0, 50, 50, 'ok'],
      [1, 60, null, 'not yet mirrored (mirrored up to 50)'],
    ]
  )

  const nobody = await translateOutput({ ...args, group: uniqueName('nobody') })
  assert.equal(nobody.exitCode, 1)
  assert.match(nobody.notes.join('\n'), /has no committed offsets on the source cluster; check --group/)
})
