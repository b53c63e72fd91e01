import assert from 'node:assert/strict'
import { test } from 'node:test'
import { rangeKey, type OffsetRange } from '../../../../src/mirror-topics/offset-sync-record.js'
import { LiveRanges, prunableRangeKeys } from '../../../../src/sidecar/offsets/offset-sync-pruning.js'

function range (targetStart: bigint, length: bigint, sourceStart: bigint, targetTopic = 'orders', partition = 0): OffsetRange {
  return { sourceTopic: 'orders', targetTopic, partition, sourceStart, targetStart, length }
}

function live (...ranges: OffsetRange[]): LiveRanges {
  const live = new LiveRanges()
  for (const r of ranges) live.apply({ kind: 'range', range: r })
  return live
}

const key = (r: OffsetRange): string => rangeKey(r.sourceTopic, r.partition, r.targetStart)

test('prunable: ranges entirely below the target log start, never the newest of a partition, never without a log start', () => {
  const first = range(0n, 40n, 0n)
  const recopy = range(40n, 30n, 10n)
  const newest = range(70n, 30n, 40n)
  const ranges = live(first, recopy, newest)
  const starts = (offset: bigint): Map<string, Map<number, bigint>> => new Map([['orders', new Map([[0, offset]])]])
  assert.deepEqual(prunableRangeKeys(ranges, starts(0n)), [])
  assert.deepEqual(prunableRangeKeys(ranges, starts(39n)), [], 'one record of the first range is still there')
  assert.deepEqual(prunableRangeKeys(ranges, starts(40n)), [key(first)])
  assert.deepEqual(prunableRangeKeys(ranges, starts(70n)), [key(first), key(recopy)])
  assert.deepEqual(prunableRangeKeys(ranges, starts(1_000n)), [key(first), key(recopy)], 'the newest range may still be growing under its key')
  assert.deepEqual(prunableRangeKeys(ranges, new Map()), [], 'no log start known (topic deleted): keep everything')
  assert.deepEqual(prunableRangeKeys(ranges, new Map([['orders', new Map([[1, 1_000n]])]])), [], 'another partition\'s log start says nothing')
})

test('LiveRanges: a rewrite of a key replaces the range, a tombstone removes it', () => {
  const grown = range(0n, 80n, 0n)
  const ranges = live(range(0n, 40n, 0n), range(100n, 5n, 90n), grown)
  assert.equal(ranges.size, 2)
  assert.deepEqual(prunableRangeKeys(ranges, new Map([['orders', new Map([[0, 50n]])]])), [], 'the grown version (0..79) is what counts')
  ranges.apply({ kind: 'deleted', key: key(grown) })
  assert.equal(ranges.size, 1)
  assert.deepEqual(ranges.targetTopics(), ['orders'])
})
