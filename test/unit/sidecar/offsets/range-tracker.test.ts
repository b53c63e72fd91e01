import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OffsetSyncIndex, translateOffset } from '../../../../src/mirror-topics/offset-sync-index.js'
import { decodeOffsetSync, encodePosition, encodeRange, type MirrorPosition, type OffsetRange } from '../../../../src/mirror-topics/offset-sync-record.js'
import { RangeTracker } from '../../../../src/sidecar/offsets/range-tracker.js'
import { mm2OffsetSyncs, mm2Translate } from '../../../../src/check/translate/mm2-translation.js'
import { OffsetSyncAligner } from '../../../../src/check/verify/offset-sync-aligner.js'
import { checked } from '../../../helpers/checked.js'

const offsets = (...values: number[]): bigint[] => values.map(BigInt)
const range = (sourceStart: number, targetStart: number, length: number): OffsetRange =>
  ({ sourceTopic: 'orders', targetTopic: 'orders', partition: 0, sourceStart: BigInt(sourceStart), targetStart: BigInt(targetStart), length: BigInt(length) })
const position = (sourceNext: number, targetNext: number): MirrorPosition =>
  ({ sourceTopic: 'orders', targetTopic: 'orders', partition: 0, sourceNext: BigInt(sourceNext), targetNext: BigInt(targetNext) })
const short = (r: OffsetRange): [number, number, number] => [Number(r.sourceStart), Number(r.targetStart), Number(r.length)]

test('contiguous acknowledgements extend one range across batches', () => {
  const tracker = checked(new RangeTracker())
  tracker.record('orders', 'orders', 0, offsets(0, 1, 2), 10n)
  tracker.record('orders', 'orders', 0, offsets(3, 4), 13n)
  assert.deepEqual(tracker.unwritten().map(short), [[0, 10, 5]])
})

test('a new range opens where source offsets jump or target offsets do not follow on', () => {
  const tracker = checked(new RangeTracker())
  tracker.record('orders', 'orders', 0, offsets(0, 1, 2, 5, 6, 9), 100n) // gaps at 3-4 and 7-8 (markers, compaction)
  tracker.record('orders', 'orders', 0, offsets(10, 11), 120n) // someone else wrote 106..119 on the target
  assert.deepEqual(tracker.unwritten().map(short), [[0, 100, 3], [5, 103, 2], [9, 105, 1], [10, 120, 2]])
})

test('written ranges are forgotten unless they grew meanwhile; the open one is still extended under its key', () => {
  const tracker = checked(new RangeTracker())
  tracker.record('orders', 'orders', 0, offsets(0, 1), 0n)
  tracker.record('orders', 'orders', 1, offsets(7), 3n)
  const first = tracker.unwritten()
  tracker.record('orders', 'orders', 0, offsets(2), 2n) // grows while the first flush is in flight
  tracker.markWritten(first)
  assert.deepEqual(tracker.unwritten().map(short), [[0, 0, 3]], 'partition 0 grew: rewritten; partition 1 is durable')
  tracker.markWritten(tracker.unwritten())
  assert.deepEqual(tracker.unwritten(), [])
  tracker.record('orders', 'orders', 0, offsets(3), 3n)
  assert.deepEqual(tracker.unwritten().map(short), [[0, 0, 4]])
})

test('a run of consecutive offsets (a forwarded batch) gives the ranges and the position that its offsets one by one give', () => {
  const runs: Array<[partition: number, sourceStart: number, count: number, targetBase: number, targetTopic?: string]> = [
    [0, 0, 3, 10], [0, 3, 2, 13], // extends
    [0, 9, 4, 15], // source jumps
    [0, 13, 1, 30], // target jumps
    [1, 7, 5, 0], [0, 14, 2, 31], [1, 12, 1, 5],
    [0, 16, 2, 33, 'orders.renamed'], // another target topic opens a new range
  ]
  const byRun = checked(new RangeTracker())
  const byOffset = checked(new RangeTracker())
  for (const [partition, sourceStart, count, targetBase, targetTopic = 'orders'] of runs) {
    byRun.recordRun('orders', targetTopic, partition, BigInt(sourceStart), count, BigInt(targetBase))
    byOffset.record('orders', targetTopic, partition, Array.from({ length: count }, (_, i) => BigInt(sourceStart + i)), BigInt(targetBase))
  }
  assert.deepEqual(byRun.unwritten(), byOffset.unwritten())
  assert.deepEqual(byRun.unwritten().map(short), [[0, 10, 5], [9, 15, 4], [13, 30, 3], [16, 33, 2], [7, 0, 6]])
  for (const partition of [0, 1]) assert.deepEqual(byRun.position('orders', partition, 18n), byOffset.position('orders', partition, 18n))
  const durable = checked(new RangeTracker())
  durable.recordRun('orders', 'orders', 0, 0n, 4, 0n, true)
  assert.deepEqual(durable.unwritten(), [], 'exactly-once: nothing to write, the position still moves')
  assert.equal(durable.position('orders', 0, 4n)?.targetNext, 4n)
})

test('the position pairs the committed source offset with the target offset after the last acknowledged record', () => {
  const tracker = checked(new RangeTracker())
  assert.equal(tracker.position('orders', 0, 5n), undefined, 'nothing written here: unknown')
  tracker.record('orders', 'orders.copy', 0, offsets(0, 1, 2), 40n)
  assert.deepEqual(tracker.position('orders', 0, 4n), { sourceTopic: 'orders', targetTopic: 'orders.copy', partition: 0, sourceNext: 4n, targetNext: 43n })
})

test('translation gives the target offset of the next record, gaps included', () => {
  const ranges = [range(0, 100, 3), range(5, 103, 2), range(9, 105, 1)]
  const at = (o: number): unknown => {
    const t = translateOffset(ranges, position(12, 106), BigInt(o))
    return t.status === 'translated' ? Number(t.targetOffset) : t.status
  }
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(at), [100, 101, 102, 103, 103, 103, 104, 105, 105, 105])
  assert.equal(at(10), 106, 'caught up with the mirror: where the next mirrored record goes')
  assert.equal(at(12), 106)
  assert.equal(at(13), 'not-yet-mirrored')
})

test('after a re-copy the newest copy wins, so the reader skips the older copies', () => {
  // First run copied 0..99 to 0..99 and crashed after syncing but before committing 50..99;
  // the second run copied 50..149 to 100..199.
  const ranges = [range(0, 0, 100), range(50, 100, 100)]
  const t = (o: number): unknown => {
    const r = translateOffset(ranges, position(150, 200), BigInt(o))
    return r.status === 'translated' ? Number(r.targetOffset) : r.status
  }
  assert.equal(t(10), 10, 'only the first copy exists')
  assert.equal(t(50), 100)
  assert.equal(t(99), 149)
  assert.equal(t(120), 170)
  assert.equal(t(150), 200)
})

test('beyond the mirror says not yet mirrored and how far it got; no syncs says so', () => {
  assert.deepEqual(translateOffset([range(0, 0, 10)], undefined, 10n), { status: 'not-yet-mirrored', mirroredUpTo: 10n })
  assert.deepEqual(translateOffset([range(0, 0, 10)], position(12, 10), 13n), { status: 'not-yet-mirrored', mirroredUpTo: 12n })
  assert.deepEqual(translateOffset([], undefined, 0n), { status: 'no-syncs' })
  assert.deepEqual(
    translateOffset([range(20, 0, 10)], undefined, 0n),
    { status: 'translated', targetTopic: 'orders', targetOffset: 0n, basis: 'range' },
    'before the first mirrored record: the first copy'
  )
})

test('the index replays the topic: a rewrite replaces its key, a tombstone removes it, the last position wins', () => {
  const index = checked(new OffsetSyncIndex())
  const apply = (record: { key: string, value: string | null }): void => {
    const entry = decodeOffsetSync(record.key, record.value)
    assert.ok(entry)
    index.apply(entry)
  }
  apply(encodeRange(range(0, 0, 5)))
  apply(encodeRange(range(0, 0, 8)))
  apply(encodeRange(range(8, 20, 2)))
  apply(encodePosition(position(10, 22)))
  assert.deepEqual(index.ranges('orders', 0).map(short), [[0, 0, 8], [8, 20, 2]])
  apply({ key: encodeRange(range(8, 20, 2)).key, value: null })
  assert.deepEqual(index.ranges('orders', 0).map(short), [[0, 0, 8]])
  apply(encodePosition(position(11, 23)))
  assert.deepEqual(index.position('orders', 0), position(11, 23))
  assert.deepEqual(index.partitions(), [{ sourceTopic: 'orders', partition: 0 }])
})

test('records the reader does not understand are skipped, not guessed', () => {
  assert.equal(decodeOffsetSync(null, '{}'), undefined)
  assert.equal(decodeOffsetSync('not json', '{}'), undefined)
  assert.equal(decodeOffsetSync('["other"]', '{}'), undefined)
  const good = encodeRange(range(1, 2, 3)) as { key: string, value: string }
  assert.equal(decodeOffsetSync(good.key, good.value.replace('"v":1', '"v":2')), undefined, 'newer format')
  assert.equal(decodeOffsetSync(good.key, good.value.replace('"length":"3"', '"length":"-3"')), undefined)
  assert.deepEqual(decodeOffsetSync(good.key, good.value), { kind: 'range', range: range(1, 2, 3) })
})

test('MirrorMaker 2 syncs every offset.lag.max records and translates to the newest sync at or below + 1', () => {
  const copies: Array<[bigint, bigint]> = []
  for (let i = 0; i < 350; i++) copies.push([BigInt(i), BigInt(i + 1000)])
  const syncs = mm2OffsetSyncs(copies, 100n)
  assert.deepEqual(syncs.map(s => Number(s.upstream)), [0, 101, 202, 303])
  assert.equal(mm2Translate(syncs, 101n), 1101n, 'exactly at a sync')
  assert.equal(mm2Translate(syncs, 150n), 1102n, '48 records re-read on failover')
  assert.equal(mm2Translate(syncs, 0n), 1000n)
  const gapped = mm2OffsetSyncs([[0n, 0n], [1n, 1n], [5n, 2n], [6n, 3n]], 100n)
  assert.deepEqual(gapped.map(s => [Number(s.upstream), Number(s.downstream)]), [[0, 0], [5, 2]], 'a skipped upstream offset emits a sync')
})

test('the offset-sync aligner gives verify the newest copy, and hands over to a fallback where syncs cannot say', async () => {
  const index = checked(new OffsetSyncIndex())
  index.apply({ kind: 'range', range: range(0, 0, 100) })
  index.apply({ kind: 'range', range: range(50, 100, 50) })
  const fallback = {
    align: async (r: { sourcePartition: number, sourceOffset: number }) => ({
      sourceOffset: r.sourceOffset,
      targetPartition: r.sourcePartition,
      targetOffset: -1,
      method: 'fallback',
    }),
  }
  const aligner = new OffsetSyncAligner(index, 'orders', fallback)
  // The newest copy is compared record by record; the older one at 60 is named, to be read as earlier copies.
  assert.deepEqual(await aligner.align({ sourcePartition: 0, sourceOffset: 60 }), {
    sourceOffset: 60,
    targetPartition: 0,
    targetOffset: 110,
    method: 'offset sync',
    earliestCopyOffset: 60,
  })
  assert.equal((await aligner.align({ sourcePartition: 0, sourceOffset: 120 })).method, 'fallback')
  await assert.rejects(new OffsetSyncAligner(index, 'orders').align({ sourcePartition: 1, sourceOffset: 0 }), /no offset syncs/)
})

test('the position after the last acknowledged record, for each partition with ranges not yet written', () => {
  const tracker = checked(new RangeTracker())
  tracker.record('orders', 'orders', 0, offsets(0, 1, 2, 5), 10n) // 3 and 4 hold no record (a marker, compaction)
  tracker.recordRun('orders', 'orders', 1, 7n, 3, 0n)
  assert.deepEqual(
    tracker.acknowledgedPositions().map(p => [p.partition, Number(p.sourceNext), Number(p.targetNext)]),
    [[0, 6, 14], [1, 10, 3]]
  )
  tracker.markWritten(tracker.unwritten())
  assert.deepEqual(tracker.acknowledgedPositions(), [], 'nothing acknowledged since: no position')
  tracker.recordRun('orders', 'orders', 1, 10n, 1, 3n)
  assert.deepEqual(tracker.acknowledgedPositions().map(p => [p.partition, Number(p.sourceNext), Number(p.targetNext)]), [[1, 11, 4]])
  // Exactly-once ranges are durable with their transaction: nothing to write, no position from here.
  tracker.record('orders', 'orders', 2, offsets(0), 0n, false, true)
  assert.deepEqual(tracker.acknowledgedPositions().map(p => p.partition), [1])
})
