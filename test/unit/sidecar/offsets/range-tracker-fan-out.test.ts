import assert from 'node:assert/strict'
import { test } from 'node:test'
import { translateOffset } from '../../../../src/mirror-topics/offset-sync-index.js'
import type { OffsetRange } from '../../../../src/mirror-topics/offset-sync-record.js'
import { RangeTracker } from '../../../../src/sidecar/offsets/range-tracker.js'

const short = (r: OffsetRange): [number, number, number] => [Number(r.sourceStart), Number(r.targetStart), Number(r.length)]

/** Source offset of each output, in target order, for source records 0.. with `counts[i]` outputs each. */
function outputsOf (counts: readonly number[]): bigint[] {
  return counts.flatMap((count, source) => Array.from({ length: count }, () => BigInt(source)))
}

/** Where a group that consumed everything before source offset `o` must start on the target. */
function expectedTarget (counts: readonly number[], targetBase: number, o: number): number {
  let target = targetBase
  for (let source = 0; source < counts.length; source++) {
    if (source >= o && (counts[source] as number) > 0) return target
    target += counts[source] as number
  }
  return target
}

function translateAll (tracker: RangeTracker, counts: readonly number[]): number[] {
  const position = tracker.position('orders', 0, BigInt(counts.length))
  assert.ok(position !== undefined)
  return counts.map((_, o) => o).concat(counts.length).map(o => {
    const t = translateOffset(tracker.unwritten(), position, BigInt(o))
    assert.equal(t.status, 'translated', `offset ${o}`)
    return Number((t as { targetOffset: bigint }).targetOffset)
  })
}

test('with a message handler, a source offset maps to its first output, or to the next output when it produced none', () => {
  // 0:1, 1:2, 2:none, 3:1, 4:1, 5:3, 6:none, 7:none, 8:1, 9:none
  const counts = [1, 2, 0, 1, 1, 3, 0, 0, 1, 0]
  const outputs = outputsOf(counts)
  const tracker = new RangeTracker()
  // Acknowledged in three batches, one cut inside record 5's outputs (the intake cuts by size).
  tracker.record('orders', 'orders', 0, outputs.slice(0, 6), 100n, true)
  tracker.record('orders', 'orders', 0, outputs.slice(6, 7), 106n, true)
  tracker.record('orders', 'orders', 0, outputs.slice(7), 107n, true)
  assert.deepEqual(tracker.unwritten().map(short), [[0, 100, 2], [3, 103, 3], [8, 108, 1]])
  assert.equal(tracker.position('orders', 0, 10n)?.targetNext, 109n, 'after the last output')
  assert.deepEqual(translateAll(tracker, counts), counts.map((_, o) => o).concat(counts.length).map(o => expectedTarget(counts, 100, o)))
  assert.deepEqual(translateAll(tracker, counts), [100, 101, 103, 103, 104, 105, 108, 108, 108, 109, 109])
})

test('every split of the acknowledgements gives the same ranges', () => {
  const counts = [2, 0, 3, 1, 0, 2, 1]
  const outputs = outputsOf(counts)
  const whole = new RangeTracker()
  whole.record('orders', 'orders', 0, outputs, 0n, true)
  for (let cut = 1; cut < outputs.length; cut++) {
    const split = new RangeTracker()
    split.record('orders', 'orders', 0, outputs.slice(0, cut), 0n, true)
    split.record('orders', 'orders', 0, outputs.slice(cut), BigInt(cut), true)
    assert.deepEqual(split.unwritten().map(short), whole.unwritten().map(short), `cut at ${cut}`)
  }
  assert.deepEqual(translateAll(whole, counts), counts.map((_, o) => o).concat(counts.length).map(o => expectedTarget(counts, 0, o)))
})

test('a repeated source offset that does not follow on the target is a new copy: the newest copy wins', () => {
  const tracker = new RangeTracker()
  tracker.record('orders', 'orders', 0, [5n, 5n], 10n, true)
  tracker.record('orders', 'orders', 0, [5n, 5n, 6n], 20n, true) // copied again after a restart, elsewhere on the target
  assert.deepEqual(tracker.unwritten().map(short), [[5, 10, 1], [5, 20, 1], [6, 22, 1]])
  const position = tracker.position('orders', 0, 7n)
  assert.ok(position !== undefined)
  const at5 = translateOffset(tracker.unwritten(), position, 5n)
  assert.deepEqual(at5.status === 'translated' ? at5.targetOffset : at5.status, 20n)
})

test('without a handler a repeated offset is never read as a further output', () => {
  const tracker = new RangeTracker()
  tracker.record('orders', 'orders', 0, [5n], 10n)
  tracker.record('orders', 'orders', 0, [5n, 6n], 11n)
  assert.deepEqual(tracker.unwritten().map(short), [[5, 10, 1], [5, 11, 2]])
})
