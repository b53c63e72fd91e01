import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OffsetSyncIndex } from '../../../../src/mirror-topics/offset-sync-index.js'
import { decodeOffsetSync, encodePosition, encodeRange, type EncodedRecord, type OffsetRange } from '../../../../src/mirror-topics/offset-sync-record.js'
import { RangeTracker } from '../../../../src/sidecar/offsets/range-tracker.js'
import { forSeeds } from '../../../helpers/seeded-random.js'

interface PartitionModel {
  sourceNext: bigint
  /** The target partition's log end offset. */
  targetEnd: bigint
  /** Every acknowledged record: target offset -> source offset. */
  readonly copies: Map<bigint, bigint>
}

test('random acknowledgements, flushes and forgets keep the invariants of tracker and index; the synced ranges map each copy to its source offset', () => {
  forSeeds(200, random => {
    const tracker = new RangeTracker()
    const index = new OffsetSyncIndex()
    const models = [0, 1].map((): PartitionModel => ({ sourceNext: 0n, targetEnd: 0n, copies: new Map() }))
    const apply = (record: EncodedRecord): void => {
      const entry = decodeOffsetSync(record.key, record.value)
      assert.ok(entry, 'the writer\'s records decode')
      index.apply(entry)
    }
    const flush = (all: boolean): void => {
      const ranges = tracker.unwritten()
      const written = all ? ranges : ranges.filter(() => random.chance(0.7))
      for (const range of written) apply(encodeRange(range))
      for (const position of tracker.acknowledgedPositions()) apply(encodePosition(position))
      tracker.markWritten(written)
    }
    for (let step = 0; step < 150; step++) {
      const partition = random.int(2)
      const model = models[partition] as PartitionModel
      const op = random.int(10)
      if (op <= 5) {
        if (random.chance(0.1)) model.sourceNext -= BigInt(random.int(Number(model.sourceNext) + 1)) // copied again
        const targetBase = model.targetEnd + (random.chance(0.2) ? BigInt(1 + random.int(3)) : 0n) // another writer, or an aborted transaction
        const sources: bigint[] = []
        let source = model.sourceNext
        for (let n = 1 + random.int(5); n > 0; n--) {
          sources.push(source)
          source += random.chance(0.2) ? 2n : 1n
        }
        const run = sources.every((s, i) => s === (sources[0] as bigint) + BigInt(i))
        if (run && random.chance(0.5)) tracker.recordRun('orders', 'orders', partition, sources[0] as bigint, sources.length, targetBase)
        else tracker.record('orders', 'orders', partition, sources, targetBase)
        sources.forEach((s, i) => model.copies.set(targetBase + BigInt(i), s))
        model.sourceNext = source
        model.targetEnd = targetBase + BigInt(sources.length)
      } else if (op <= 8) {
        flush(false)
      } else {
        tracker.forget('orders', partition)
      }
      tracker.checkInvariants()
      index.checkInvariants()
    }
    flush(true)
    assert.deepEqual(tracker.unwritten(), [])
    models.forEach((model, partition) => {
      const ranges = index.ranges('orders', partition)
      for (const [target, source] of model.copies) {
        const covering = ranges.filter(r => r.targetStart <= target && target < r.targetStart + r.length)
        assert.equal(covering.length, 1, `partition ${partition}: target offset ${target} is in ${covering.length} ranges`)
        const r = covering[0] as OffsetRange
        assert.equal(r.sourceStart + (target - r.targetStart), source, `partition ${partition}: target offset ${target} maps to its source offset ${source}`)
      }
    })
  })
})

test('checkInvariants names the invariant a corrupted tracker or index breaks', () => {
  const tracker = new RangeTracker()
  tracker.record('orders', 'orders', 0, [0n, 1n], 10n)
  tracker.checkInvariants()
  // Acknowledgements out of target order (a caller breaking the tracker's contract) overlap in target offsets.
  tracker.record('orders', 'orders', 0, [5n], 11n)
  assert.throws(() => tracker.checkInvariants(), /^Error: Invariant B broken: range orders\/0 /)

  const index = new OffsetSyncIndex()
  // An entry no decoded record gives (decodeOffsetSync refuses an empty range).
  index.apply({ kind: 'range', range: { sourceTopic: 'orders', targetTopic: 'orders', partition: 0, sourceStart: 0n, targetStart: 0n, length: 0n } })
  assert.throws(() => index.checkInvariants(), /^Error: Invariant A broken: range orders\/0 0\+0/)
})
