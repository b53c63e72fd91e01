import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import { PartitionProgress } from '../../../../src/sidecar/pipeline/partition-progress.js'
import { checked } from '../../../helpers/checked.js'

function batch (offsets: number[], next = (offsets[offsets.length - 1] ?? 0) + 1, timestamp = 1_000): MirrorBatch {
  return {
    sourceTopic: 't',
    targetTopic: 't',
    partition: 0,
    bytes: 1,
    pollTimeMs: 0,
    records: offsets.map(o => ({ offset: String(o), key: null, value: null, timestamp: String(timestamp + o) })),
    firstOffset: BigInt(offsets[0] ?? 0),
    nextOffset: BigInt(next),
  }
}
const offsetsOf = (p: PartitionProgress): bigint[] => p.commitCandidates().map(c => c.offset)

test('commits move only over acknowledged batches, in offset order', () => {
  const progress = checked(new PartitionProgress())
  const a = batch([0, 1, 2]); const b = batch([3, 4]); const c = batch([5])
  for (const x of [a, b, c]) progress.admitted(x)
  assert.deepEqual(offsetsOf(progress), [0n], 'nothing acknowledged: the start position')
  progress.acknowledged(b, 1)
  assert.deepEqual(offsetsOf(progress), [0n], 'b is acknowledged but a is not: no move past a')
  progress.acknowledged(a, 2)
  assert.deepEqual(offsetsOf(progress), [5n])
  progress.committed(progress.commitCandidates())
  assert.deepEqual(offsetsOf(progress), [], 'nothing new to commit')
  progress.acknowledged(c, 3)
  assert.deepEqual(offsetsOf(progress), [6n])
})

test('offset gaps (compaction, transaction markers) are committed past once acknowledged', () => {
  const progress = checked(new PartitionProgress())
  const a = batch([10, 12, 15], 16)
  progress.admitted(a)
  progress.skipped('t', 0, 18n)
  assert.deepEqual(offsetsOf(progress), [10n], 'the skip waits for the batch in flight')
  progress.acknowledged(a, 1)
  assert.deepEqual(offsetsOf(progress), [18n], 'after the ack the control records at 16-17 are passed too')
})

test('records fetched again after a rebalance are not handed over twice', () => {
  const progress = checked(new PartitionProgress())
  progress.admitted(batch([0, 1, 2, 3]))
  assert.equal(progress.admitFrom('t', 0, ['2', '3', '4', '5'].map(offset => ({ offset }))), 2, 'offsets 2 and 3 were handed over already')
  assert.equal(progress.admitFrom('t', 0, [{ offset: '4' }]), 0)
})

test('a failed record stops commits at its offset; abandoned batches can be admitted again', () => {
  const progress = checked(new PartitionProgress())
  const a = batch([0, 1, 2, 3])
  progress.admitted(a)
  progress.acknowledgedPrefix(a, 2n, 5)
  assert.deepEqual(offsetsOf(progress), [2n])
  const b = batch([4, 5])
  progress.admitted(b)
  progress.abandoned(b)
  assert.equal(progress.admitFrom('t', 0, [{ offset: '4' }, { offset: '5' }]), 0, 'an abandoned batch is fetched and admitted again')
})

test('snapshot reports lag inputs and the oldest unacknowledged timestamp; a partition owned elsewhere drops out', () => {
  const progress = checked(new PartitionProgress())
  const a = batch([0, 1], 2, 5_000)
  progress.observeHighWatermark('t', 0, 10n, 0n)
  progress.admitted(a)
  assert.deepEqual(progress.snapshot().map(s => [s.highWatermark, s.nextOffsetToMirror, s.oldestUnackedTimestampMs]), [[10n, 0n, 5_000]])
  assert.equal(progress.commitCandidates()[0]?.lagRecords, 10n)
  progress.retain(new Set([partitionKey('other', 0)]))
  assert.equal(progress.snapshot().length, 0, 'no lag reported for a partition another member owns')
  progress.acknowledged(a, 9)
  assert.equal(progress.idle, true)
  assert.deepEqual(progress.commitCandidates(), [])
})

test(
  "a partition that comes back starts over where the source fetches it (the group's committed offset): the offset acknowledged here before it left is never committed",
  () => {
    const progress = checked(new PartitionProgress())
    const key = partitionKey('t', 0)
    progress.retain(new Set([key]))
    const early = batch([0, 1, 2], 3)
    progress.admitted(early)
    progress.acknowledged(early, 1)
    assert.deepEqual(
      progress.commitCandidates().map(c => c.offset),
      [3n]
    )
    // Revoked before that was committed; a batch fetched before the revocation is handed over after it.
    progress.retain(new Set())
    const straggler = batch([3, 4], 5)
    progress.observeHighWatermark('t', 0, 10n, 3n)
    progress.admitted(straggler)
    progress.acknowledged(straggler, 2)
    assert.deepEqual(progress.commitCandidates(new Set([key])), [], 'nothing of a partition this process does not own')
    // Another member moved the group to 5000; the partition comes back here.
    progress.retain(new Set([key]))
    assert.deepEqual(progress.commitCandidates(new Set([key])), [], 'no commit before the source fetched it again')
    assert.equal(progress.admitFrom('t', 0, [{ offset: '5000' }]), 0)
    const next = batch([5000, 5001], 5002)
    progress.observeHighWatermark('t', 0, 6000n, 5000n)
    assert.deepEqual(
      progress.commitCandidates(new Set([key])).map(c => c.offset),
      [5000n],
      "never below the group's committed offset"
    )
    progress.admitted(next)
    progress.acknowledged(next, 2)
    assert.deepEqual(
      progress.commitCandidates(new Set([key])).map(c => c.offset),
      [5002n]
    )
  }
)

test('whenIdle resolves once every batch in flight is acknowledged, abandoned, or its partition given away', async () => {
  const progress = checked(new PartitionProgress())
  await progress.whenIdle()
  const a = batch([0, 1]); const b = batch([2]); const c = batch([3])
  for (const x of [a, b, c]) progress.admitted(x)
  let idle = false
  const waiting = progress.whenIdle().then(() => { idle = true })
  progress.acknowledged(b, 1)
  progress.acknowledged(a, 1)
  await new Promise(setImmediate)
  assert.equal(idle, false, 'c is in flight')
  assert.equal(progress.idle, false)
  progress.abandoned(c)
  await waiting
  assert.equal(progress.idle, true)
  progress.admitted(batch([3]))
  const again = progress.whenIdle()
  progress.retain(new Set([partitionKey('other', 0)]))
  await again
  assert.equal(progress.idle, true, 'a partition given away takes what it had in flight with it')
})

test('whenLanded resolves once the batches in flight at the call left flight, whatever was admitted after', async () => {
  const progress = checked(new PartitionProgress())
  await progress.whenLanded()
  const a = batch([0, 1]); const b = batch([2]); const other = { ...batch([0]), sourceTopic: 'u', targetTopic: 'u' }
  for (const x of [a, b, other]) progress.admitted(x)
  let landed = false
  const waiting = progress.whenLanded().then(() => { landed = true })
  const later = batch([3])
  progress.admitted(later)
  progress.acknowledged(b, 1)
  progress.acknowledged(a, 1)
  await new Promise(setImmediate)
  assert.equal(landed, false, "partition u's batch is in flight")
  progress.retain(new Set([partitionKey('t', 0)]))
  await waiting
  assert.equal(progress.idle, false, 'the batch admitted after the call is still in flight')
  const again = progress.whenLanded()
  progress.abandoned(later)
  await again
})
