import assert from 'node:assert/strict'
import { test } from 'node:test'
import { comparePartition, digestStreamOf } from '../../../../src/check/verify/partition-comparison.js'
import { digestRecord, type RecordDigest } from '../../../../src/mirror-topics/record-digest.js'

interface Rec { key: string, value: string, ts: number, headers?: Record<string, string> }

function records (count: number, from = 0): Rec[] {
  return Array.from({ length: count }, (_, i) => ({
    key: `k${from + i}`,
    value: `v${from + i}`,
    ts: 1_700_000_000_000 + from + i,
    headers: { h: `x${from + i}` },
  }))
}

/** Digests with offsets `base, base+1, ...` (or the given offsets). */
function digests (list: Rec[], base = 0): RecordDigest[] {
  return list.map((r, i) =>
    digestRecord({ offset: String(base + i), timestamp: String(r.ts), key: Buffer.from(r.key), value: Buffer.from(r.value), headers: r.headers ?? {} })
  )
}

async function compare (source: Rec[], target: Rec[], options: { until?: number, range?: number, chunk?: number, targetBase?: number } = {}) {
  return comparePartition({
    source: digestStreamOf(digests(source), options.chunk ?? 7),
    target: digestStreamOf(digests(target, options.targetBase ?? 0), options.chunk ?? 5),
    lookaheadRecords: 20,
    ...(options.until === undefined ? {} : { sourceUntilOffset: options.until }),
    ...(options.range === undefined ? {} : { digestRangeRecords: options.range }),
  })
}

function summary (result: Awaited<ReturnType<typeof compare>>) {
  const { checked, matched, missing, duplicated, extra, changed, outOfOrder } = result.counts
  return { checked, matched, missing, duplicated, extra, changed, outOfOrder }
}

const clean = { missing: 0, duplicated: 0, extra: 0, changed: 0, outOfOrder: 0 }

for (const range of [undefined, 10]) {
  const mode = range === undefined ? 'record by record' : 'digest ranges of 10'

  test(`${mode}: an exact copy at another base offset matches every record`, async () => {
    const source = records(100)
    const result = await compare(source, source, { targetBase: 5000, range })
    assert.deepEqual(summary(result), { checked: 100, matched: 100, ...clean })
    if (range !== undefined) assert.equal(result.rangesEqual, 10)
  })

  test(`${mode}: a missing record is located by its source offset`, async () => {
    const source = records(100)
    const target = source.filter((_, i) => i !== 42)
    const result = await compare(source, target, { range })
    assert.deepEqual(summary(result), { checked: 100, matched: 99, ...clean, missing: 1 })
    assert.deepEqual(result.findings.map(f => [f.kind, f.sourceOffset]), [['missing', 42]])
  })

  test(`${mode}: at-least-once re-deliveries are duplicates, not extras`, async () => {
    const source = records(60)
    const target = [...source.slice(0, 30), ...source.slice(25, 60)]
    const result = await compare(source, target, { range })
    assert.deepEqual(summary(result), { checked: 60, matched: 60, ...clean, duplicated: 5 })
    assert.deepEqual(result.findings.map(f => [f.kind, f.targetOffset]), [30, 31, 32, 33, 34].map(o => ['duplicated', o]))
  })

  test(`${mode}: an extra record is located by its target offset`, async () => {
    const source = records(50)
    const target = [...source.slice(0, 17), { key: 'intruder', value: 'x', ts: 1 }, ...source.slice(17)]
    const result = await compare(source, target, { range })
    assert.deepEqual(summary(result), { checked: 50, matched: 50, ...clean, extra: 1 })
    assert.deepEqual(result.findings.map(f => [f.kind, f.targetOffset]), [['extra', 17]])
  })

  for (const [field, change] of [
    ['value', (r: Rec): Rec => ({ ...r, value: 'changed' })],
    ['key', (r: Rec): Rec => ({ ...r, key: 'changed' })],
    ['headers', (r: Rec): Rec => ({ ...r, headers: {} })],
    ['timestamp', (r: Rec): Rec => ({ ...r, ts: r.ts + 1 })],
  ] as const) {
    test(`${mode}: a changed ${field} is reported with the field`, async () => {
      const source = records(40)
      const target = source.map((r, i) => i === 23 ? change(r) : r)
      const result = await compare(source, target, { range })
      assert.deepEqual(summary(result), { checked: 40, matched: 39, ...clean, changed: 1 })
      assert.deepEqual(result.findings.map(f => [f.kind, f.sourceOffset, f.targetOffset, f.fields]), [['changed', 23, 23, [field]]])
    })
  }

  test(`${mode}: two swapped records are out of order, nothing missing`, async () => {
    const source = records(40)
    const target = [...source]
    ;[target[11], target[12]] = [target[12]!, target[11]!]
    const result = await compare(source, target, { range })
    assert.deepEqual(summary(result), { checked: 40, matched: 39, ...clean, outOfOrder: 1 })
    assert.deepEqual(result.findings.map(f => [f.kind, f.sourceOffset, f.targetOffset]), [['out-of-order', 11, 12]])
  })

  test(`${mode}: a truncated tail is missing from the first lost offset`, async () => {
    const source = records(50)
    const result = await compare(source, source.slice(0, 44), { range })
    assert.deepEqual(summary(result), { checked: 50, matched: 44, ...clean, missing: 6 })
    assert.equal(result.findings[0]?.sourceOffset, 44)
  })

  test(`${mode}: records past the compared range are in flight, not extra`, async () => {
    const source = records(80)
    const result = await compare(source, source.slice(0, 70), { until: 60, range })
    assert.deepEqual(summary(result), { checked: 60, matched: 60, ...clean })
  })
}

test('an empty target reports every source record missing', async () => {
  const result = await compare(records(12), [])
  assert.deepEqual(summary(result), { checked: 12, matched: 0, ...clean, missing: 12 })
})

test('a record moved far back in the target is out of order', async () => {
  const source = records(30)
  const target = [source[0]!, source[9]!, ...source.slice(1, 9), ...source.slice(10)]
  const result = await compare(source, target)
  assert.deepEqual(summary(result), { checked: 30, matched: 29, ...clean, outOfOrder: 1 })
  assert.deepEqual(result.findings.map(f => [f.kind, f.sourceOffset, f.targetOffset]), [['out-of-order', 9, 1]])
})

test('a record replaced by an unrelated one is missing plus extra', async () => {
  const source = records(20)
  const target = source.map((r, i) => i === 5 ? { key: 'other', value: 'other', ts: 5 } : r)
  const result = await compare(source, target)
  assert.deepEqual(summary(result), { checked: 20, matched: 19, ...clean, missing: 1, extra: 1 })
})

test('the duplicate window holds the last duplicateWindowRecords matches: a re-delivery within it is duplicated, one from before it extra', async () => {
  const source = records(60)
  // Record 10 is re-delivered 1 match after it (within the last 20), then 35 after; record 40 right after that.
  const target = [...source.slice(0, 30), source[10]!, ...source.slice(30, 45), source[10]!, source[40]!, ...source.slice(45, 60)]
  const result = await comparePartition({
    source: digestStreamOf(digests(source), 7),
    target: digestStreamOf(digests(target), 5),
    lookaheadRecords: 3,
    duplicateWindowRecords: 20,
  })
  assert.deepEqual(summary(result), { checked: 60, matched: 60, ...clean, duplicated: 2, extra: 1 })
  assert.deepEqual(result.findings.map(f => [f.kind, f.targetOffset]), [['duplicated', 30], ['extra', 46], ['duplicated', 47]])
})

test('a record matched twice stays in the duplicate window as long as its later match does', async () => {
  const source = records(40)
  source[25] = source[5]! // the same key, value, headers and timestamp at two offsets
  const target = [...source, source[5]!]
  const result = await comparePartition({
    source: digestStreamOf(digests(source), 7),
    target: digestStreamOf(digests(target), 5),
    lookaheadRecords: 3,
    duplicateWindowRecords: 20,
  })
  assert.deepEqual(summary(result), { checked: 40, matched: 40, ...clean, duplicated: 1 })
  assert.deepEqual(result.findings.map(f => [f.kind, f.targetOffset]), [['duplicated', 40]])
})
