import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { GroupAdmin } from '../../src/kafka/group-admin.js'
import { silentLogger } from '../../src/shared/logger.js'
import { committedOffsets, createTopic, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck, type CliResult } from '../helpers/mirror-check.js'
import { tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface Board { totals: Record<string, number>, board: Array<{ group: string, status: string, toMembers: number, writes: number }> }

function json<T> (result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`)
  }
}

/** Runs a mirror of `topic` until it committed the source end offsets, then stops it. */
async function mirrorOnce (t: TestContext, source: LocalCluster, target: LocalCluster, topic: string): Promise<void> {
  const mirrorGroup = uniqueName('mirror')
  const sidecar = spawnSidecar(t, { source, target, groupId: mirrorGroup, include: topic })
  await waitMirroring(sidecar)
  const ends = await withAdmin(source, admin => admin.fetchTopicOffsets(topic))
  await waitUntil(async () => {
    const committed = await committedOffsets(source, mirrorGroup, topic)
    return ends.every(e => committed.get(e.partition) === BigInt(e.high))
  }, { timeoutMs: 60_000, message: 'the mirror to commit the end offsets' })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
}

test('failover --group-regex moves 200 idle groups exactly in one command; a group active on the target is skipped', { timeout: 240_000 }, async t => {
  const { source, target } = await sharedClusters()
  const prefix = uniqueName('many')
  const topic = await createTopic(t, source, { name: `${prefix}-t`, partitions: 2 })
  await createTopic(t, target, { name: topic, partitions: 2 })
  const shift = [7n, 3n] // records the target held before the copy: the exact translation is the source offset + shift
  await produce(target, topic, [...tagged('other', 0, 7), ...tagged('other', 1, 3)])
  await produce(source, topic, [...tagged('m', 0, 50), ...tagged('m', 1, 50)])
  const groups = Array.from({ length: 200 }, (_, i) => `${prefix}-g${String(i).padStart(3, '0')}`)
  const committedOf = (i: number): bigint[] => [BigInt(i % 51), BigInt((i * 7) % 51)]
  const sourceAdmin = new GroupAdmin(source.connection('test-groups'), silentLogger)
  await sourceAdmin.start()
  try {
    for (const [i, group] of groups.entries()) {
      await sourceAdmin.commitOffsets(group, committedOf(i).map((offset, partition) => ({ topic, partition, offset })))
    }
  } finally {
    await sourceAdmin.stop()
  }
  await mirrorOnce(t, source, target, topic)

  const active = groups[0] as string
  const member = createKafkaClient(target.connection('test-active')).consumer({ groupId: active, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 })
  await member.connect()
  t.after(() => member.disconnect())
  await member.subscribe({ topics: [topic], fromBeginning: false })
  await member.run({ autoCommit: false, eachBatch: async () => {} })
  await waitUntil(async () => (await withAdmin(target, admin => admin.describeGroups([active]))).groups[0]?.state === 'Stable', {
    timeoutMs: 30_000,
    message: 'the target member to join',
  })

  const base = ['--source', source.bootstrap, '--target', target.bootstrap, '--group-regex', `${prefix}-g.*`, '--format', 'json']
  const before = await runMirrorCheck(['groups', ...base])
  assert.equal(before.code, 1, before.stderr) // one group cannot move
  assert.deepEqual(json<Board>(before).totals, { moved: 0, 'to-move': 199, written: 0, active: 1, refused: 0, untranslatable: 0, 'no-offsets': 0, failed: 0 })
  assert.deepEqual((await committedOffsets(target, groups[1] as string, topic)).get(0), -1n, 'groups writes nothing')

  const moved = await runMirrorCheck(['failover', ...base, '--execute'])
  t.diagnostic(`failover --execute of ${groups.length} groups: ${moved.ms} ms`)
  assert.equal(moved.code, 1, moved.stderr) // the active group was skipped
  const board = json<Board>(moved)
  assert.deepEqual(board.totals, { moved: 0, 'to-move': 0, written: 199, active: 1, refused: 0, untranslatable: 0, 'no-offsets': 0, failed: 0 })
  assert.deepEqual(board.board.find(r => r.group === active), { ...board.board.find(r => r.group === active), status: 'active', toMembers: 1, writes: 2 })
  assert.match(moved.stderr, new RegExp(`group '${active}' has 1 active member\\(s\\) on the target cluster .*: refused, nothing written`))

  const targetAdmin = new GroupAdmin(target.connection('test-groups'), silentLogger)
  await targetAdmin.start()
  try {
    const onTarget = await targetAdmin.committedOffsetsOfGroups(groups, [topic])
    assert.deepEqual(onTarget.get(active), [], 'the group active on the target is never written')
    for (const [i, group] of groups.entries()) {
      if (group === active) continue
      const expected = committedOf(i).map((offset, partition) => ({ topic, partition, offset: offset + (shift[partition] as bigint) }))
      assert.deepEqual(onTarget.get(group), expected, `${group}: the exact translation of its source offsets`)
    }
  } finally {
    await targetAdmin.stop()
  }

  const after = await runMirrorCheck(['groups', ...base])
  assert.deepEqual(json<Board>(after).totals, { moved: 199, 'to-move': 0, written: 0, active: 1, refused: 0, untranslatable: 0, 'no-offsets': 0, failed: 0 })
  const translated = await runMirrorCheck(['translate', ...base])
  assert.equal(translated.code, 0, translated.stderr)
  const rows = json<Array<{ group: string, partition: number, targetOffset: number }>>(translated)
  assert.deepEqual(
    rows.map(r => [r.group, r.partition, r.targetOffset]),
    groups.flatMap((group, i) => committedOf(i).map((offset, partition) => [group, partition, Number(offset + (shift[partition] as bigint))])),
    'translate --group-regex: every group, every partition, exactly'
  )
})
