import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Mm2OffsetSyncRules } from '../../../src/mirror-topics/mm2-offset-sync-rules.js'
import type { Mm2OffsetSyncRecord } from '../../../src/mirror-topics/mm2-records.js'

type Pair = [number, number]

/** Kafka 4.1's `OffsetSyncWriter.PartitionState.update`, record by record, transcribed as plainly as it reads: the reference. */
function referenceAskedFor (records: readonly Pair[], maxOffsetLag: number): Pair[] {
  const asked: Pair[] = []
  let previousUpstream = -1
  let previousDownstream = -1
  let lastSyncDownstream = -1
  for (const [upstream, downstream] of records) {
    const noPreviousSyncThisLifetime = lastSyncDownstream === -1
    const translatedOffsetTooStale = downstream - (lastSyncDownstream + 1) >= maxOffsetLag
    const skippedUpstreamRecord = upstream - previousUpstream !== 1
    const truncatedDownstreamTopic = downstream < previousDownstream
    if (noPreviousSyncThisLifetime || translatedOffsetTooStale || skippedUpstreamRecord || truncatedDownstreamTopic) {
      lastSyncDownstream = downstream
      asked.push([upstream, downstream])
    }
    previousUpstream = upstream
    previousDownstream = downstream
  }
  return asked
}

/** Cuts `records` into runs of consecutive offsets on both sides, then each run into acknowledgements of at most `ackSize`. */
function feed (rules: Mm2OffsetSyncRules, records: readonly Pair[], ackSize: number, out?: Mm2OffsetSyncRecord[]): void {
  let i = 0
  while (i < records.length) {
    const [up, down] = records[i] as Pair
    let count = 1
    while (i + count < records.length && count < ackSize) {
      const [u, d] = records[i + count] as Pair
      if (u !== up + count || d !== down + count) break
      count++
    }
    rules.acknowledgedRun('orders', 0, BigInt(up), BigInt(down), count, false, out)
    i += count
  }
}

const pairs = (syncs: readonly Mm2OffsetSyncRecord[]): Pair[] => syncs.map(s => [Number(s.upstreamOffset), Number(s.downstreamOffset)])

function written (rules: Mm2OffsetSyncRules): Pair[] {
  const toWrite = rules.toWrite()
  rules.written(toWrite)
  return pairs(toWrite.syncs)
}

test('a partition\'s first record is synced, then every offset.lag.max + 1 records; the last record waits as the delayed sync for the flush', () => {
  const rules = new Mm2OffsetSyncRules(10)
  const records: Pair[] = Array.from({ length: 50 }, (_, i) => [i + 1000, i])
  feed(rules, records, 50)
  assert.deepEqual(written(rules), [[1000, 0], [1011, 11], [1022, 22], [1033, 33], [1044, 44], [1049, 49]])
  assert.deepEqual(written(rules), [], 'nothing new: nothing written again')
  rules.acknowledgedRun('orders', 0, 1050n, 50n, 1)
  assert.deepEqual(
    written(rules),
    [[1050, 50]],
    "a quiet partition's last record is synced at the next flush (MirrorMaker 2 promotes its delayed syncs at each commit)"
  )
})

test('the rules give what MirrorMaker 2\'s PartitionState gives, record by record, however the records are cut into acknowledgements', () => {
  let seed = 7
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  for (let round = 0; round < 200; round++) {
    const maxOffsetLag = [0, 1, 3, 10, 100][round % 5] as number
    const records: Pair[] = []
    let up = random(5)
    let down = random(5)
    for (let i = 0; i < 300; i++) {
      records.push([up, down])
      const event = random(40)
      up += event === 0 ? 2 + random(5) : 1 // gaps: markers, aborted or compacted records
      down += event === 1 ? 1 + random(5) : event === 2 ? -10 - random(5) : 1 // others writing to the target; a truncated target
      if (down < 0) down = 0
    }
    const expected = referenceAskedFor(records, maxOffsetLag)
    for (const ackSize of [1, 7, 1000]) {
      const asked: Mm2OffsetSyncRecord[] = []
      feed(new Mm2OffsetSyncRules(maxOffsetLag), records, ackSize, asked)
      assert.deepEqual(pairs(asked), expected, `offset.lag.max ${maxOffsetLag}, acknowledgements of ${ackSize}, round ${round}`)
    }
  }
})

test('gaps: a skipped upstream offset and a downstream offset going back each ask for a sync at once', () => {
  const rules = new Mm2OffsetSyncRules(100)
  rules.acknowledgedRun('orders', 0, 0n, 0n, 10)
  rules.acknowledgedRun('orders', 0, 12n, 10n, 5) // a transaction marker at 10 and an aborted record at 11
  rules.acknowledgedRun('orders', 0, 17n, 3n, 2) // the target topic was recreated
  assert.deepEqual(written(rules), [[0, 0], [12, 10], [17, 3], [18, 4]])
})

test('offset.lag.max 0 syncs every record (testOneWayReplicationWithFrequentOffsetSyncs)', () => {
  const rules = new Mm2OffsetSyncRules(0)
  rules.acknowledgedRun('orders', 0, 5n, 105n, 4)
  assert.deepEqual(written(rules), [[5, 105], [6, 106], [7, 107], [8, 108]])
})

test('at most a bounded number of syncs wait per partition; the newest replaces the last waiting one, as MirrorMaker 2 replaces a pending sync', () => {
  const rules = new Mm2OffsetSyncRules(0, 3)
  rules.acknowledgedRun('orders', 0, 0n, 0n, 1_000_000)
  assert.deepEqual(written(rules), [[0, 0], [1, 1], [999_999, 999_999]])
})

test('partitions are independent; syncs asked for during a write stay for the next one; a failed write leaves everything to write again', () => {
  const rules = new Mm2OffsetSyncRules(100)
  rules.acknowledgedRun('orders', 0, 0n, 0n, 3)
  rules.acknowledgedRun('orders', 1, 40n, 7n, 2)
  const first = rules.toWrite()
  assert.deepEqual(pairs(first.syncs), [[0, 0], [2, 2], [40, 7], [41, 8]])
  assert.deepEqual(pairs(rules.toWrite().syncs), pairs(first.syncs), 'not written yet (a failed write): the same again')
  rules.acknowledgedRun('orders', 0, 10n, 3n, 1) // a gap, during the write
  rules.written(first)
  assert.deepEqual(written(rules), [[10, 3]])
})

test('exactly-once: the syncs asked for go into the transaction; after the commit only the last record waits, unless the transaction held its sync', () => {
  const rules = new Mm2OffsetSyncRules(10)
  const inTransaction: Mm2OffsetSyncRecord[] = []
  rules.acknowledgedRun('orders', 0, 0n, 0n, 15, false, inTransaction)
  rules.handedOut(inTransaction)
  assert.deepEqual(pairs(inTransaction), [[0, 0], [11, 11]])
  assert.deepEqual(written(rules), [], 'nothing waits for the flush before the commit')
  rules.delayedAfterCommit('orders', 0, 14n, 14n)
  assert.deepEqual(written(rules), [[14, 14]])
  const next: Mm2OffsetSyncRecord[] = []
  rules.acknowledgedRun('orders', 0, 15n, 15n, 8, false, next)
  rules.handedOut(next)
  rules.delayedAfterCommit('orders', 0, 22n, 22n)
  assert.deepEqual(pairs(next), [[22, 22]])
  assert.deepEqual(written(rules), [], 'its last record was synced in the transaction')
  rules.delayedAfterCommit('orders', 0, 20n, 20n)
  assert.deepEqual(written(rules), [], 'an older transaction committing after a newer one was written asks for nothing older')
})

test('a message handler\'s further outputs of a record (same source offset) are passed over: a source offset is synced at its first output', () => {
  const rules = new Mm2OffsetSyncRules(100)
  rules.acknowledgedRun('orders', 0, 0n, 0n, 1, true)
  rules.acknowledgedRun('orders', 0, 0n, 1n, 2, true) // the second output of 0, then 1 at 2
  assert.deepEqual(written(rules), [[0, 0], [1, 2]])
})

test('a write as records are acknowledged takes the syncs the rules asked for and leaves the delayed one to the commit (KAFKA-14610)', () => {
  const rules = new Mm2OffsetSyncRules(10)
  rules.acknowledgedRun('orders', 0, 0n, 0n, 15)
  const asAcknowledged = rules.toWrite(false)
  assert.deepEqual(pairs(asAcknowledged.syncs), [[0, 0], [11, 11]])
  rules.written(asAcknowledged)
  assert.deepEqual(pairs(rules.toWrite(false).syncs), [], 'the delayed sync is not written as acknowledged')
  rules.acknowledgedRun('orders', 0, 15n, 15n, 2)
  assert.deepEqual(written(rules), [[16, 16]], "at the commit: the delayed sync of the partition's last record, the syncs before it not again")
})
