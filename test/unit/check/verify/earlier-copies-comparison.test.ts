import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FIRST_COMMON_RECORD_METHOD, type Aligner } from '../../../../src/check/verify/aligner.js'
import { compareWithEarlierCopies } from '../../../../src/check/verify/earlier-copies-comparison.js'
import { OFFSET_SYNC_ALIGNMENT_METHOD, OffsetSyncAligner } from '../../../../src/check/verify/offset-sync-aligner.js'
import { comparePartition, digestStreamOf } from '../../../../src/check/verify/partition-comparison.js'
import { digestRecord, type RecordDigest } from '../../../../src/mirror-topics/record-digest.js'
import { verificationPassed } from '../../../../src/check/verify/verification-report.js'
import { OffsetSyncIndex } from '../../../../src/mirror-topics/offset-sync-index.js'

interface Rec { key: string, value: string, ts: number }

/** Source records 0..count-1 (offset = index). */
function sourceRecords (count: number): Rec[] {
  return Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}`, ts: 1_700_000_000_000 + i }))
}

const intruder = (n: number): Rec => ({ key: `intruder${n}`, value: 'not from the source', ts: 1 })

/** Digests at offsets 0, 1, 2, ... */
function digests (list: readonly Rec[]): RecordDigest[] {
  return list.map((r, i) => digestRecord({ offset: String(i), timestamp: String(r.ts), key: Buffer.from(r.key), value: Buffer.from(r.value), headers: {} }))
}

interface Case {
  source: Rec[]
  target: Rec[]
  from?: number
  until?: number
  /** Where the syncs point (the copy compared record by record). */
  match: number
  /** Lowest target offset that may hold an earlier copy. */
  earliest: number
  range?: number
}

async function account (c: Case) {
  const source = digests(c.source)
  const target = digests(c.target)
  return await compareWithEarlierCopies({
    source: at => digestStreamOf(source.filter(d => d.offset >= at), 7),
    target: (at, upTo) => digestStreamOf(target.filter(d => d.offset >= at && d.offset < (upTo ?? Infinity)), 5),
    sourceFromOffset: c.from ?? 0,
    sourceUntilOffset: c.until ?? c.source.length,
    sourceEarliestOffset: 0,
    matchTargetOffset: c.match,
    earliestCopyTargetOffset: c.earliest,
    lookaheadRecords: 20,
    ...(c.range === undefined ? {} : { digestRangeRecords: c.range }),
  })
}

/** What `--no-offset-syncs` does: one record-by-record comparison from the first copy on. */
async function byOrder (c: Case, targetFrom: number) {
  const source = digests(c.source)
  const target = digests(c.target)
  return await comparePartition({
    source: digestStreamOf(source.filter(d => d.offset >= (c.from ?? 0)), 7),
    target: digestStreamOf(target.filter(d => d.offset >= targetFrom), 5),
    sourceUntilOffset: c.until ?? c.source.length,
    lookaheadRecords: 20,
    ...(c.range === undefined ? {} : { digestRangeRecords: c.range }),
  })
}

function summary (result: {
  counts: { checked: number, matched: number, missing: number, duplicated: number, extra: number, changed: number, outOfOrder: number }
}) {
  const { checked, matched, missing, duplicated, extra, changed, outOfOrder } = result.counts
  return { checked, matched, missing, duplicated, extra, changed, outOfOrder }
}

const clean = { missing: 0, duplicated: 0, extra: 0, changed: 0, outOfOrder: 0 }

for (const range of [undefined, 10]) {
  const mode = range === undefined ? 'record by record' : 'digest ranges of 10'

  test(`${mode}: every record twice, the syncs pointing at the second copy: the first copies are duplicates, the second the match`, async () => {
    const source = sourceRecords(100)
    const c: Case = { source, target: [...source, ...source], match: 100, earliest: 0, range }
    const result = await account(c)
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean, duplicated: 100 })
    assert.deepEqual(result.earlierCopies, { fromTargetOffset: 0, untilTargetOffset: 100, duplicated: 100, extra: 0, changed: 0 })
    // The first copies are the ones named: the match is the copy the syncs point at.
    assert.deepEqual(result.findings.filter(f => f.kind === 'duplicated').map(f => f.targetOffset), Array.from({ length: 100 }, (_, i) => i))
    assert.equal(verificationPassed(result.counts, false), false)
    assert.equal(verificationPassed(result.counts, true), true)
    assert.deepEqual(summary(await byOrder(c, 0)), summary(result), 'the same totals as the order alignment from the first copy')
  })

  test(`${mode}: without the earlier stretch, the same target says 0 duplicates (what verify reported before)`, async () => {
    const source = sourceRecords(100)
    const result = await account({ source, target: [...source, ...source], match: 100, earliest: 100, range })
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean })
    assert.equal(result.earlierCopies, undefined)
  })

  test(`${mode}: a partial replay (0..49 copied, killed before any sync, then 0..99 again): 50 duplicates`, async () => {
    const source = sourceRecords(100)
    const c: Case = { source, target: [...source.slice(0, 50), ...source], match: 50, earliest: 0, range }
    const result = await account(c)
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean, duplicated: 50 })
    assert.deepEqual(summary(await byOrder(c, 0)), summary(result))
  })

  test(`${mode}: two kills before the syncs were durable (0..39, then 0..69, then all): every earlier copy is a duplicate`, async () => {
    const source = sourceRecords(100)
    const c: Case = { source, target: [...source.slice(0, 40), ...source.slice(0, 70), ...source], match: 110, earliest: 0, range }
    const result = await account(c)
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean, duplicated: 110 })
    assert.deepEqual(summary(await byOrder(c, 0)), summary(result))
  })

  test(`${mode}: records that are no copy at all, before the match and inside it, are extra`, async () => {
    const source = sourceRecords(100)
    const target = [...source.slice(0, 30), intruder(1), intruder(2), intruder(3), ...source.slice(0, 60), intruder(4), ...source.slice(60)]
    const c: Case = { source, target, match: 33, earliest: 0, range }
    const result = await account(c)
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean, duplicated: 30, extra: 4 })
    assert.deepEqual(result.findings.filter(f => f.kind === 'extra').map(f => f.targetOffset), [30, 31, 32, 93])
    assert.deepEqual(result.earlierCopies, { fromTargetOffset: 0, untilTargetOffset: 33, duplicated: 30, extra: 3, changed: 0 })
    // (Not compared with the order alignment: with a lookahead of 20 the replay of 0.. behind the intruders is ambiguous by order.)
  })

  test(`${mode}: a clean copy: 0 duplicates, passed`, async () => {
    const source = sourceRecords(100)
    const other = [intruder(1), intruder(2)]
    const c: Case = { source, target: [...other, ...source], match: 2, earliest: 2, range }
    const result = await account(c)
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean })
    assert.equal(verificationPassed(result.counts, false), true)
    assert.deepEqual(summary(await byOrder(c, 2)), summary(result))
  })
}

test('earlier copies out of order are still duplicates', async () => {
  const source = sourceRecords(60)
  const first = [...source.slice(0, 30)]
  ;[first[10], first[11]] = [first[11]!, first[10]!]
  const result = await account({ source, target: [...first, ...source], match: 30, earliest: 0 })
  assert.deepEqual(summary(result), { checked: 60, matched: 60, ...clean, duplicated: 30 })
})

test('earlier copies of records outside the checked range are not counted: before --from-offset and in flight', async () => {
  const source = sourceRecords(100)
  // Run 1: 0..59 at 0..59 (synced); run 2 from 20: 20..99 at 60..139 (synced, newest). Checked: 30..79.
  const target = [...source.slice(0, 60), ...source.slice(20)]
  const result = await account({ source, target, from: 30, until: 80, match: 70, earliest: 30 })
  // 30..59 at 30..59 are earlier copies of checked records; 60..69 hold copies of 20..29 (before the range).
  assert.deepEqual(summary(result), { checked: 50, matched: 50, ...clean, duplicated: 30 })
  assert.deepEqual(result.earlierCopies, { fromTargetOffset: 30, untilTargetOffset: 70, duplicated: 30, extra: 0, changed: 0 })

  // A run killed after copying 0..59, the next one from 0 is committed up to 50: checked 0..49; the earlier copy of 50..59 is in flight, not counted.
  const inFlight = await account({ source, target: [...source.slice(0, 60), ...source.slice(0, 70)], until: 50, match: 60, earliest: 0 })
  assert.deepEqual(summary(inFlight), { checked: 50, matched: 50, ...clean, duplicated: 50 })
  assert.deepEqual(inFlight.earlierCopies, { fromTargetOffset: 0, untilTargetOffset: 60, duplicated: 50, extra: 0, changed: 0 })
})

test('a changed earlier copy of a checked record is changed, naming the field', async () => {
  const source = sourceRecords(50)
  const first = source.map((r, i) => i === 7 ? { ...r, value: 'changed' } : r)
  const result = await account({ source, target: [...first, ...source], match: 50, earliest: 0 })
  assert.deepEqual(summary(result), { checked: 50, matched: 50, ...clean, duplicated: 49, changed: 1 })
  assert.equal(result.counts.changedFields.value, 1)
  assert.deepEqual(result.findings.filter(f => f.kind === 'changed').map(f => [f.sourceOffset, f.targetOffset, f.fields]), [[7, 7, ['value']]])
})

test('findings of both stretches together stay within maxFindingsPerKind', async () => {
  const source = digests(sourceRecords(100))
  const target = digests([...sourceRecords(100), ...sourceRecords(100).slice(0, 50), ...sourceRecords(100)])
  const result = await compareWithEarlierCopies({
    source: at => digestStreamOf(source.filter(d => d.offset >= at)),
    target: (at, upTo) => digestStreamOf(target.filter(d => d.offset >= at && d.offset < (upTo ?? Infinity))),
    sourceFromOffset: 0,
    sourceUntilOffset: 100,
    sourceEarliestOffset: 0,
    matchTargetOffset: 100,
    earliestCopyTargetOffset: 0,
    maxFindingsPerKind: 5,
  })
  assert.equal(result.counts.duplicated, 150)
  assert.deepEqual(result.findings.map(f => f.targetOffset), [0, 1, 2, 3, 4])
})

function syncIndex (ranges: Array<{ sourceStart: number, targetStart: number, length: number }>): OffsetSyncIndex {
  const index = new OffsetSyncIndex()
  for (const r of ranges) {
    index.apply({
      kind: 'range',
      range: {
        sourceTopic: 'orders',
        targetTopic: 'orders',
        partition: 0,
        sourceStart: BigInt(r.sourceStart),
        targetStart: BigInt(r.targetStart),
        length: BigInt(r.length),
      },
    })
  }
  return index
}

const foundAt = (targetOffset: number | undefined): Aligner => ({
  align: async ({ sourceOffset, sourcePartition }) => targetOffset === undefined
    ? { sourceOffset, targetPartition: sourcePartition, targetOffset: 0, method: 'timestamp (no common record found)' }
    : { sourceOffset, targetPartition: sourcePartition, targetOffset, method: FIRST_COMMON_RECORD_METHOD },
})

test('the offset-sync aligner points at the newest copy and names the earliest one, from the syncs or by content', async () => {
  // 0..59 at 0, then 20..99 again at 60 (a crash after the syncs of run 1 were durable).
  const replayed = syncIndex([{ sourceStart: 0, targetStart: 0, length: 60 }, { sourceStart: 20, targetStart: 60, length: 80 }])
  assert.deepEqual(await new OffsetSyncAligner(replayed, 'orders').align({ sourcePartition: 0, sourceOffset: 30, sourceUntilOffset: 100 }),
    { sourceOffset: 30, targetPartition: 0, targetOffset: 70, method: OFFSET_SYNC_ALIGNMENT_METHOD, earliestCopyOffset: 30 })
  // A range that covers only source offsets past the checked range says nothing about it.
  assert.equal(
    (await new OffsetSyncAligner(replayed, 'orders').align({ sourcePartition: 0, sourceOffset: 0, sourceUntilOffset: 20 })).earliestCopyOffset,
    undefined
  )

  // Killed before the first syncs: the only range is the second copy; the first copy is found by content.
  const secondOnly = syncIndex([{ sourceStart: 0, targetStart: 100, length: 100 }])
  assert.deepEqual(await new OffsetSyncAligner(secondOnly, 'orders', foundAt(0)).align({ sourcePartition: 0, sourceOffset: 0, sourceUntilOffset: 100 }),
    { sourceOffset: 0, targetPartition: 0, targetOffset: 100, method: OFFSET_SYNC_ALIGNMENT_METHOD, earliestCopyOffset: 0 })
  // No copy found by content (only a timestamp position): nothing before the synced copy.
  assert.equal(
    (await new OffsetSyncAligner(secondOnly, 'orders', foundAt(undefined)).align({ sourcePartition: 0, sourceOffset: 0 })).earliestCopyOffset,
    undefined
  )
  // A clean copy: the first common record is the synced copy.
  assert.equal((await new OffsetSyncAligner(secondOnly, 'orders', foundAt(100)).align({ sourcePartition: 0, sourceOffset: 0 })).earliestCopyOffset, undefined)
})
