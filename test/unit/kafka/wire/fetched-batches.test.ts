import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Attributes, BATCH_OFFSETS } from '../../../../src/kafka/record-batch-header.js'
import { fetchedBatches, IsolationLevel } from '../../../../src/kafka/wire/fetched-batches.js'
import { WireWriter } from '../../../../src/kafka/wire/wire-writer.js'

interface BatchSpec {
  readonly baseOffset: bigint
  readonly count: number
  readonly epoch?: number
  readonly producerId?: bigint
  readonly transactional?: boolean
  /** A control batch with one record of this type (0 ABORT, 1 COMMIT). */
  readonly marker?: number
}

/** A v2 batch with the header fields `fetchedBatches` reads; its records are placeholders (one control record for a marker). */
function batch (spec: BatchSpec): Buffer {
  const control = spec.marker !== undefined
  const attributes = (spec.transactional === true || control ? Attributes.TRANSACTIONAL : 0) | (control ? Attributes.CONTROL : 0)
  const records = spec.marker === undefined
    ? Buffer.alloc(spec.count * 8)
    : (() => {
        const key = new WireWriter().int16(0).int16(spec.marker).toBuffer()
        const body = new WireWriter().int8(0).varlong(0n).varint(0).varint(key.length).raw(key).varint(6).raw(Buffer.alloc(6)).varint(0).toBuffer()
        return new WireWriter().varint(body.length).raw(body).toBuffer()
      })()
  const out = new WireWriter()
    .int64(spec.baseOffset).int32(49 + records.length).int32(spec.epoch ?? 0).int8(2).uint32(0)
    .int16(attributes).int32(spec.count - 1).int64(0n).int64(0n).int64(spec.producerId ?? -1n).int16(0).int32(0).int32(spec.count)
    .raw(records)
  return out.toBuffer()
}

const spans = (found: ReturnType<typeof fetchedBatches>): string[] => found.batches.map(b => `${b.baseOffset}-${b.lastOffset}`)

test('whole batches are cut out as views of the records; a batch cut off at the end is left for the next fetch', () => {
  const records = Buffer.concat([batch({ baseOffset: 0n, count: 3 }), batch({ baseOffset: 3n, count: 2, epoch: 4 }), batch({ baseOffset: 5n, count: 4 })])
  const cut = records.subarray(0, records.length - 10)
  const found = fetchedBatches(cut, 0n, IsolationLevel.READ_UNCOMMITTED, null)
  assert.deepEqual(spans(found), ['0-2', '3-4'])
  assert.equal(found.nextFetchOffset, 5n)
  assert.equal(found.lastEpoch, 4)
  assert.equal(found.batches[1]!.bytes.buffer, records.buffer, 'a view, not a copy')
  assert.equal(found.batches[1]!.bytes.readBigInt64BE(BATCH_OFFSETS.baseOffset), 3n)
})

test('a batch ending before the fetch offset is dropped; one holding it is handed out whole; nothing whole leaves the position', () => {
  const records = Buffer.concat([batch({ baseOffset: 0n, count: 3 }), batch({ baseOffset: 3n, count: 4 })])
  const found = fetchedBatches(records, 4n, IsolationLevel.READ_UNCOMMITTED, [])
  assert.deepEqual(spans(found), ['3-6'])
  assert.equal(found.nextFetchOffset, 7n)
  const none = fetchedBatches(records.subarray(0, 20), 9n, IsolationLevel.READ_UNCOMMITTED, null)
  assert.deepEqual(none, { batches: [], nextFetchOffset: 9n, lastEpoch: undefined, skippedBatches: 0 })
})

test('read_committed: an aborted transaction\'s batches are skipped up to its ABORT marker; markers are never handed out; the position passes them', () => {
  const records = Buffer.concat([
    batch({ baseOffset: 0n, count: 2, producerId: 7n, transactional: true }), // aborted
    batch({ baseOffset: 2n, count: 1, producerId: 8n, transactional: true }), // committed
    batch({ baseOffset: 3n, count: 1, producerId: 7n, marker: 0 }), // ABORT of 7
    batch({ baseOffset: 4n, count: 1, producerId: 8n, marker: 1 }), // COMMIT of 8
    batch({ baseOffset: 5n, count: 2, producerId: 7n, transactional: true }), // 7 again, after its abort: committed later
    batch({ baseOffset: 7n, count: 1 }), // plain
  ])
  const aborted = [{ producerId: 7n, firstOffset: 0n }]
  const committed = fetchedBatches(records, 0n, IsolationLevel.READ_COMMITTED, aborted)
  assert.deepEqual(spans(committed), ['2-2', '5-6', '7-7'])
  assert.equal(committed.skippedBatches, 3)
  assert.equal(committed.nextFetchOffset, 8n)
  const uncommitted = fetchedBatches(records, 0n, IsolationLevel.READ_UNCOMMITTED, aborted)
  assert.deepEqual(spans(uncommitted), ['0-1', '2-2', '5-6', '7-7'])
})

test('read_committed: aborted transactions are opened in the order they began, whatever order the broker lists them in', () => {
  const records = Buffer.concat([
    batch({ baseOffset: 0n, count: 1, producerId: 1n, transactional: true }),
    batch({ baseOffset: 1n, count: 1, producerId: 2n, transactional: true }),
    batch({ baseOffset: 2n, count: 1, producerId: 2n, marker: 0 }),
    batch({ baseOffset: 3n, count: 1, producerId: 1n, marker: 0 }),
  ])
  const found = fetchedBatches(records, 0n, IsolationLevel.READ_COMMITTED, [{ producerId: 2n, firstOffset: 1n }, { producerId: 1n, firstOffset: 0n }])
  assert.deepEqual(spans(found), [])
  assert.equal(found.skippedBatches, 4)
  assert.equal(found.nextFetchOffset, 4n)
})
