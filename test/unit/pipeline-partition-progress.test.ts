import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MirrorBatch } from '../../src/pipeline/mirror-batch.js'
import { partitionKey } from '../../src/pipeline/partition-key.js'
import { PartitionProgress } from '../../src/pipeline/partition-progress.js'

function batch (offsets: number[], next = (offsets[offsets.length - 1] ?? 0) + 1, timestamp = 1_000): MirrorBatch {
  return {
    sourceTopic: 't', targetTopic: 't', partition: 0, bytes: 1, pollTimeMs: 0,
    records: offsets.map(o => ({ offset: String(o), key: null, value: null, timestamp: String(timestamp + o) })),
    firstOffset: BigInt(offsets[0] ?? 0), nextOffset: BigInt(next),
  }
}
const offsetsOf = (p: PartitionProgress): bigint[] => p.commitCandidates().map(c => c.offset)

test('commits move only over acknowledged batches, in offset order', () => {
  const progress = new PartitionProgress()
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
  const progress = new PartitionProgress()
  const a = batch([10, 12, 15], 16)
  progress.admitted(a)
  progress.skipped('t', 0, 18n)
  assert.deepEqual(offsetsOf(progress), [10n], 'the skip waits for the batch in flight')
  progress.acknowledged(a, 1)
  assert.deepEqual(offsetsOf(progress), [18n], 'after the ack the control records at 16-17 are passed too')
})

test('records fetched again after a rebalance are not handed over twice', () => {
  const progress = new PartitionProgress()
  progress.admitted(batch([0, 1, 2, 3]))
  assert.equal(progress.admitFrom('t', 0, ['2', '3', '4', '5'].map(offset => ({ offset }))), 2, 'offsets 2 and 3 were handed over already')
  assert.equal(progress.admitFrom('t', 0, [{ offset: '4' }]), 0)
})

test('a failed record stops commits at its offset; abandoned batches can be admitted again', () => {
  const progress = new PartitionProgress()
  const a = batch([0, 1, 2, 3])
  progress.admitted(a)
  progress.acknowledgedPrefix(a, 2n, 5)
  assert.deepEqual(offsetsOf(progress), [2n])
  const b = batch([4, 5])
  progress.admitted(b)
  progress.abandoned(b)
  assert.equal(progress.admitFrom('t', 0, [{ offset: '4' }, { offset: '5' }]), 0, 'an abandoned batch is fetched and admitted again')
})

test('snapshot reports lag inputs and the oldest unacknowledged timestamp; partitions owned elsewhere drop out but are remembered', () => {
  const progress = new PartitionProgress()
  const a = batch([0, 1], 2, 5_000)
  progress.observeHighWatermark('t', 0, 10n, 0n)
  progress.admitted(a)
  assert.deepEqual(progress.snapshot().map(s => [s.highWatermark, s.nextOffsetToMirror, s.oldestUnackedTimestampMs]), [[10n, 0n, 5_000]])
  assert.equal(progress.commitCandidates()[0]?.lagRecords, 10n)
  progress.retain(new Set())
  assert.equal(progress.snapshot().length, 1, 'a partition with records in flight is kept')
  progress.acknowledged(a, 9)
  assert.equal(progress.idle, true)
  progress.retain(new Set([partitionKey('other', 0)]))
  assert.equal(progress.snapshot().length, 0, 'no lag reported for a partition another member owns')
  assert.equal(progress.admitFrom('t', 0, [{ offset: '0' }, { offset: '1' }, { offset: '2' }]), 2, 'when it comes back, what was copied is not copied again')
})
