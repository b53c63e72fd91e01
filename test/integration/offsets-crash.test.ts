import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../../src/check/translate/offset-sync-store.js'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { commitAsAdmin, readToEnd, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test('after kill -9 and a re-copy, every source offset still translates to its own record (newest copy)', { timeout: 150_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('crash') })
  t.after(() => deleteTopicIfExists(target, topic))
  const mirrorGroup = uniqueName('mirror')
  const run = { source, target, groupId: mirrorGroup, include: topic, consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 } }
  const mirrored = async (count: bigint): Promise<void> => waitUntil(async () => (await committedOffsets(source, mirrorGroup, topic)).get(0) === count,
    { timeoutMs: 60_000, message: `the mirror to commit ${count}` })

  await produce(source, topic, tagged('a', 0, 300))
  const first = spawnSidecar(t, run)
  await waitMirroring(first)
  await mirrored(300n)
  await produce(source, topic, tagged('b', 0, 200))
  await waitUntil(async () => (await endOffsets(target, topic)).get(0) === 500n, { timeoutMs: 30_000, message: 'the second batch on the target' })
  first.child.kill('SIGKILL')
  assert.equal(await first.exited, 'SIGKILL')

  // The window a crash can hit: syncs durable, source commit lost. Rewind the mirror's commit to 150
  // (possible once the killed member's session expired) so records 150.. are copied a second time.
  await waitUntil(async () => { await commitAsAdmin(source, mirrorGroup, topic, new Map([[0, 150n]])); return true },
    { timeoutMs: 30_000, intervalMs: 1_000, message: 'the killed member to leave the mirror group' })
  const second = spawnSidecar(t, run)
  await waitMirroring(second)
  await mirrored(500n)
  second.child.kill('SIGTERM')
  assert.equal(await second.exited, 0, second.stderr().slice(-2000))

  const targetEnd = (await endOffsets(target, topic)).get(0) as bigint
  assert.equal(targetEnd, 850n, '350 records written twice')
  const syncs = await loadOffsetSyncs(target.connection('test'), offsetSyncsTopicName('source'))
  const sourceRecords = await readToEnd(source, topic)
  const targetValues = new Map((await readToEnd(target, topic)).map(r => [BigInt(r.offset), r.value?.toString()]))
  let secondCopies = 0
  for (const record of sourceRecords) {
    const translation = syncs.translate(topic, 0, BigInt(record.offset))
    assert.equal(translation.status, 'translated', `offset ${record.offset}`)
    if (translation.status !== 'translated') continue
    assert.equal(targetValues.get(translation.targetOffset), record.value?.toString(), `source offset ${record.offset} translates to a copy of itself`)
    if (translation.targetOffset >= 500n) secondCopies++
  }
  assert.equal(secondCopies, 350, 'records copied twice translate to their newest copy: no re-reads of the older copies')
  assert.deepEqual(
    syncs.translate(topic, 0, 500n),
    { status: 'translated', targetTopic: topic, targetOffset: targetEnd, basis: 'position' },
    'a caught-up group lands at the end'
  )
  assert.equal(syncs.translate(topic, 0, 501n).status, 'not-yet-mirrored')
})
