import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkPartitionDigests, digestCheckPassed } from '../../../src/mirror-topics/digest-verification.js'
import { DigestTracker } from '../../../src/sidecar/integrity/digest-tracker.js'
import { decodeDigest, encodeDigest, type RangeDigest } from '../../../src/mirror-topics/range-digest.js'
import { combineHashes, digestRecord, HashAccumulator } from '../../../src/mirror-topics/record-digest.js'
import type { AuditClient } from '../../../src/kafka/audit-client.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

function record (i: number, offset = i, value = `v${i}`): KafkaRecord {
  return {
    key: Buffer.from(`k${i}`),
    value: Buffer.from(value),
    timestamp: String(1_700_000_000_000 + i),
    offset: String(offset),
    headers: {},
    attributes: 0,
  } as unknown as KafkaRecord
}

/** Digests as the sidecar records them of records 0..count-1 written at target offsets 0..count-1. */
function digestsOf (records: readonly KafkaRecord[], perDigest: number, sourceTopic = 't'): RangeDigest[] {
  const tracker = new DigestTracker(perDigest)
  tracker.record(sourceTopic, sourceTopic, 0, 0n, records.map((r, i) => ({ sourceOffset: BigInt(i), hash: digestRecord(r).hash })))
  return tracker.unwritten()
}

/** A target partition holding `records` (their offsets renumbered from `logStart`), as an AuditClient answers. */
function fakeTarget (records: readonly KafkaRecord[], logStart = 0): AuditClient {
  const stored = records.map((r, i) => ({ ...r, offset: String(logStart + i) }))
  const end = logStart + stored.length
  return {
    connection: { alias: 'target', brokers: ['fake:9092'] },
    listOffsets: async (_t: string, partitions: readonly number[], spec: unknown) => new Map(partitions.map(p => [p, spec === 'earliest' ? logStart : end])),
    fetch: async (_t: string, _p: number, offset: number) => {
      const records = stored.filter(r => Number(r.offset) >= offset).slice(0, 300)
      return {
        records,
        nextOffset: records.length === 0 ? offset : Number(records[records.length - 1]!.offset) + 1,
        highWatermark: end,
        logStartOffset: logStart,
      }
    },
  } as unknown as AuditClient
}

const copied = Array.from({ length: 3000 }, (_, i) => record(i))
const digests = digestsOf(copied, 1000)

test('the hash accumulator gives what combineHashes gives', () => {
  const hashes = copied.slice(0, 50).map(r => digestRecord(r).hash)
  const accumulator = new HashAccumulator()
  for (const h of hashes) accumulator.add(h)
  assert.equal(accumulator.value, combineHashes(hashes))
  assert.equal(accumulator.count, 50)
})

test('the tracker cuts digests at the record cap and where target offsets jump, and keeps only unwritten ones', () => {
  const tracker = new DigestTracker(2)
  const h = (i: number) => ({ sourceOffset: BigInt(i), hash: i + 1 })
  tracker.record('t', 't', 0, 10n, [h(0), h(1), h(2)])
  tracker.record('t', 't', 0, 20n, [h(3)])
  const first = tracker.unwritten()
  assert.deepEqual(first.map(d => [d.targetStart, d.count, d.sourceFirst, d.sourceLast]), [[10n, 2, 0n, 1n], [12n, 1, 2n, 2n], [20n, 1, 3n, 3n]])
  assert.equal(first[0]!.hash, combineHashes([1, 2]))
  tracker.markWritten(first)
  tracker.record('t', 't', 0, 21n, [h(4)])
  assert.deepEqual(tracker.unwritten().map(d => [d.targetStart, d.count]), [[20n, 2]])
})

test('a digest survives its record format', () => {
  const d = digests[1]!
  const encoded = encodeDigest(d, 1)
  assert.deepEqual(decodeDigest(encoded.key, encoded.value), { kind: 'digest', key: encoded.key, digest: { ...d, writtenAtMs: 1 } })
  assert.deepEqual(decodeDigest(encoded.key, null), { kind: 'deleted', key: encoded.key })
  assert.equal(decodeDigest(encoded.key, encoded.value.replace('"v":1', '"v":2')), undefined)
})

test('a clean copy passes', async () => {
  const result = await checkPartitionDigests({ target: fakeTarget(copied), targetTopic: 't', partition: 0, digests })
  assert.deepEqual(
    [result.ranges, result.checked, result.matched, result.missing, result.extra, result.duplicated, result.changedRanges],
    [3, 3000, 3000, 0, 0, 0, 0]
  )
  assert.ok(digestCheckPassed([result], false))
})

test('a changed value, a dropped record and a duplicate are found, each in its digest', async () => {
  const five = Array.from({ length: 5000 }, (_, i) => record(i))
  const tampered = five.flatMap((r, i) => i === 500 ? [record(500, 500, 'changed')] : i === 2500 ? [] : i === 4500 ? [r, r] : [r])
  const result = await checkPartitionDigests({ target: fakeTarget(tampered), targetTopic: 't', partition: 0, digests: digestsOf(five, 1000) })
  assert.deepEqual([result.changedRanges, result.missing, result.duplicated, result.extra, result.matched], [1, 1, 1, 0, 2000])
  assert.deepEqual(
    result.findings.map(f => [f.kind, Number(f.digest.targetStart), f.targetOffset]),
    [
      ['changed', 0, undefined],
      ['missing', 2000, undefined],
      ['duplicated', 4000, 4499],
    ]
  )
  assert.ok(!digestCheckPassed([result], true))
})

test('damage in consecutive digests: a duplicate is placed, a changed record counted, the shift followed', async () => {
  const tampered = copied.flatMap((r, i) => i === 500 ? [r, r] : i === 1500 ? [record(1500, 1500, 'changed')] : [r])
  const result = await checkPartitionDigests({ target: fakeTarget(tampered), targetTopic: 't', partition: 0, digests })
  assert.deepEqual([result.duplicated, result.changedRanges, result.missing, result.extra, result.matched], [1, 1, 0, 0, 1000])
})

test('a dropped record in the last digest is missing; an added record there is extra', async () => {
  const dropped = await checkPartitionDigests({ target: fakeTarget(copied.slice(0, 2999)), targetTopic: 't', partition: 0, digests })
  assert.deepEqual([dropped.missing, dropped.changedRanges], [1, 0])
  const added = await checkPartitionDigests({
    target: fakeTarget([...copied.slice(0, 2500), record(9999), ...copied.slice(2500)]),
    targetTopic: 't',
    partition: 0,
    digests,
  })
  assert.deepEqual([added.extra, added.duplicated, added.changedRanges, added.missing, added.uncovered], [1, 0, 0, 0, 0])
  const later = await checkPartitionDigests({
    target: fakeTarget([record(-1), ...copied, record(3000), record(3001)]),
    targetTopic: 't',
    partition: 0,
    digests: digestsOf(copied, 1000).map(d => ({ ...d, targetStart: d.targetStart + 1n })),
  })
  assert.deepEqual([later.matched, later.uncovered], [3000, 3])
  assert.match(later.notes.join('\n'), /offsets 0-0 \(1\) lie before the first digest[^]*offsets 3001-3002 \(2\) lie after the last digest/)
  assert.equal(added.findings[0]?.targetOffset, 2500)
})

test('digests whose records are below the target log start are not checked, the rest are', async () => {
  const result = await checkPartitionDigests({ target: fakeTarget(copied.slice(1000), 1000), targetTopic: 't', partition: 0, digests })
  assert.deepEqual([result.ranges, result.notChecked, result.matched], [2, 1000, 2000])
  assert.match(result.notes[0] ?? '', /below the log start offset 1000/)
})

test('a re-copy after a restart (source offsets digested twice) counts as duplicated', async () => {
  const tracker = new DigestTracker(1000)
  const at = (i: number) => ({ sourceOffset: BigInt(i), hash: digestRecord(copied[i]!).hash })
  tracker.record('t', 't', 0, 0n, [0, 1, 2, 3, 4].map(at))
  tracker.record('t', 't', 0, 10n, [3, 4, 5].map(at))
  const target = [0, 1, 2, 3, 4].map(i => copied[i]!).concat(Array.from({ length: 5 }, (_, i) => record(100 + i)), [3, 4, 5].map(i => copied[i]!))
  const result = await checkPartitionDigests({ target: fakeTarget(target), targetTopic: 't', partition: 0, digests: tracker.unwritten() })
  assert.deepEqual([result.duplicated, result.matched, result.changedRanges, result.uncovered], [2, 8, 0, 5])
  assert.match(result.notes.join('\n'), /5 record\(s\) at offsets 5-9 lie between digests/)
  assert.ok(digestCheckPassed([result], true))
  assert.ok(!digestCheckPassed([result], false))
})

test('after a duplicate found between two damaged digests, the next digests are found where they are', async () => {
  const five = Array.from({ length: 5000 }, (_, i) => record(i))
  const tampered = five.flatMap((r, i) => i === 500 ? [r, r] : i === 1500 ? [record(1500, 1500, 'changed')] : [r])
  const result = await checkPartitionDigests({ target: fakeTarget(tampered), targetTopic: 't', partition: 0, digests: digestsOf(five, 1000) })
  assert.deepEqual([result.duplicated, result.changedRanges, result.missing, result.extra, result.matched], [1, 1, 0, 0, 3000])
  assert.ok(result.findings.every(f => f.kind === 'duplicated' || f.kind === 'changed'))
})

test('of two digests over the same target offsets the newer is checked', async () => {
  const old = digestsOf(copied.slice(0, 1500).map((r, i) => i < 1000 ? record(i, i, 'old') : r), 1000).map(d => ({ ...d, writtenAtMs: 1 }))
  const fresh = digestsOf(copied.slice(0, 1500), 700).map(d => ({ ...d, writtenAtMs: 2 }))
  const result = await checkPartitionDigests({ target: fakeTarget(copied.slice(0, 1500)), targetTopic: 't', partition: 0, digests: [...old, ...fresh] })
  assert.deepEqual([result.ranges, result.matched, result.changedRanges], [3, 1500, 0])
  assert.match(result.notes[0] ?? '', /older digest\(s\) over the same target offsets/)
})

test('digests whose records are all below the log start are prunable, except the newest of a partition', async () => {
  const { prunableDigestKeys } = await import('../../../src/sidecar/integrity/digest-pruner.js')
  const keys = prunableDigestKeys(digests, new Map([['t', new Map([[0, 2000n]])]]))
  assert.deepEqual(keys, [JSON.stringify(['digest', 't', 0, '0']), JSON.stringify(['digest', 't', 0, '1000'])])
  assert.deepEqual(prunableDigestKeys(digests, new Map([['t', new Map([[0, 5000n]])]])).length, 2)
  assert.deepEqual(prunableDigestKeys(digests, new Map()), [])
})

test('a target unlike its digests: every digest changed, none found elsewhere, none counted twice', async () => {
  const many = Array.from({ length: 20_000 }, (_, i) => record(i))
  const other = Array.from({ length: 20_000 }, (_, i) => record(i, i, `other ${i}`))
  const result = await checkPartitionDigests({ target: fakeTarget(other), targetTopic: 't', partition: 0, digests: digestsOf(many, 1000) })
  assert.deepEqual([result.ranges, result.changedRanges, result.matched, result.missing, result.extra, result.duplicated], [20, 20, 0, 0, 0, 0])
})

/** A target whose records sit at the given offsets (gaps: transaction markers, which hold no record). */
function fakeTargetAt (records: readonly KafkaRecord[], offsets: readonly number[]): AuditClient {
  const stored = records.map((r, i) => ({ ...r, offset: String(offsets[i]) }))
  const end = (offsets[offsets.length - 1] ?? -1) + 2
  return {
    connection: { alias: 'target', brokers: ['fake:9092'] },
    listOffsets: async (_t: string, partitions: readonly number[], spec: unknown) => new Map(partitions.map(p => [p, spec === 'earliest' ? 0 : end])),
    fetch: async (_t: string, _p: number, offset: number) => {
      const found = stored.filter(r => Number(r.offset) >= offset).slice(0, 300)
      return { records: found, nextOffset: found.length === 0 ? end : Number(found[found.length - 1]!.offset) + 1, highWatermark: end, logStartOffset: 0 }
    },
  } as unknown as AuditClient
}

test(
  'a transactional copy (a marker after every 250 records): digests cut at each marker, markers are not uncovered records, a drop is still one missing',
  async () => {
    const offsets = copied.map((_, i) => i + Math.floor(i / 250))
    const tracker = new DigestTracker(1000)
    for (let from = 0; from < copied.length; from += 250) {
      tracker.record(
        't',
        't',
        0,
        BigInt(offsets[from]!),
        copied.slice(from, from + 250).map((r, k) => ({ sourceOffset: BigInt(from + k), hash: digestRecord(r).hash }))
      )
    }
    const txDigests = tracker.unwritten()
    assert.equal(txDigests.length, 12)
    const clean = await checkPartitionDigests({ target: fakeTargetAt(copied, offsets), targetTopic: 't', partition: 0, digests: txDigests })
    assert.deepEqual([clean.matched, clean.uncovered, clean.changedRanges, clean.missing], [3000, 0, 0, 0])
    const dropped = await checkPartitionDigests({
      target: fakeTargetAt([...copied.slice(0, 600), ...copied.slice(601)], [...offsets.slice(0, 600), ...offsets.slice(601)]),
      targetTopic: 't',
      partition: 0,
      digests: txDigests,
    })
    assert.deepEqual([dropped.missing, dropped.matched, dropped.changedRanges, dropped.uncovered], [1, 2750, 0, 0])
  }
)
