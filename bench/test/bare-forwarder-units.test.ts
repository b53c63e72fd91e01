import assert from 'node:assert/strict'
import { test } from 'node:test'
import { batchesOf, checkProduced, fetchRequest, produceRequest } from '../bare-forwarder-protocol.js'
import { encodeDecodedBatch } from '../../src/kafka/decoded-record-batch.js'
import { BATCH_OFFSETS, batchCrc, batchForTarget } from '../../src/kafka/record-batch-header.js'

/** A whole v2 batch of `count` records at `baseOffset`, with its CRC, as a broker returns it. */
async function storedBatch (baseOffset: bigint, count: number): Promise<Buffer> {
  const records = Array.from({ length: count }, (_, i) => ({
    offset: String(i),
    timestamp: String(1_700_000_000_000 + i),
    key: Buffer.from(`key-${baseOffset + BigInt(i)}`),
    value: Buffer.from(`value-${baseOffset + BigInt(i)}`),
  }))
  const [header, body] = batchForTarget(await encodeDecodedBatch(records, 0), { producerId: 7n, producerEpoch: 0, baseSequence: 0, transactional: false })
  const batch = Buffer.concat([header, body])
  batch.writeBigInt64BE(baseOffset, BATCH_OFFSETS.baseOffset)
  return batch
}

function int16 (value: number): Buffer { const b = Buffer.alloc(2); b.writeInt16BE(value); return b }
function int32 (value: number): Buffer { const b = Buffer.alloc(4); b.writeInt32BE(value); return b }
function int64 (value: bigint): Buffer { const b = Buffer.alloc(8); b.writeBigInt64BE(value); return b }
function kafkaString (value: string): Buffer { return Buffer.concat([int16(value.length), Buffer.from(value)]) }

/** A Fetch v4 answer (after the response header) of one topic. */
function fetchAnswer (topic: string, partitions: ReadonlyArray<{ partition: number, errorCode?: number, records: Buffer | null }>): Buffer {
  const parts = partitions.map(({ partition, errorCode = 0, records }) => Buffer.concat([
    int32(partition), int16(errorCode), int64(100n), int64(100n), int32(-1),
    records === null ? int32(-1) : Buffer.concat([int32(records.length), records]),
  ]))
  return Buffer.concat([int32(0), int32(1), kafkaString(topic), int32(partitions.length), ...parts])
}

test('the bare forwarder takes the whole batches of each partition from its offset on, in order, and moves the offset past them', async () => {
  const first = await storedBatch(0n, 3)
  const second = await storedBatch(3n, 2)
  const third = await storedBatch(5n, 4)
  const cut = third.subarray(0, third.length - 5) // the broker cuts the last batch at the size limit
  const offsets = [3n, 0n, 9n]
  const found = batchesOf(fetchAnswer('t', [
    { partition: 0, records: Buffer.concat([first, second, cut]) },
    { partition: 1, records: null },
    { partition: 2, records: Buffer.alloc(0) },
  ]), offsets)
  assert.deepEqual(found.map(f => [f.partition, f.batch.readBigInt64BE(0)]), [[0, 3n]], 'the batch before offset 3 and the cut one are left')
  assert.deepEqual(found[0]?.batch, second)
  assert.deepEqual(offsets, [5n, 0n, 9n])
})

test('the bare forwarder stops at a batch that fails its CRC check, and at a partition error', async () => {
  const batch = await storedBatch(0n, 2)
  const corrupt = Buffer.from(batch)
  corrupt[corrupt.length - 1] = (corrupt[corrupt.length - 1] ?? 0) ^ 0xff
  assert.throws(() => batchesOf(fetchAnswer('t', [{ partition: 4, records: corrupt }]), [0n, 0n, 0n, 0n, 0n]), /partition 4: a batch failed its CRC check/)
  assert.throws(() => batchesOf(fetchAnswer('t', [{ partition: 1, errorCode: 6, records: null }]), [0n, 0n]), /partition 1: error code 6/)
})

test('the bare forwarder\'s Produce v3 carries one batch per partition with the target\'s header and a CRC that holds', async () => {
  const batch = await storedBatch(42n, 3)
  const body = Buffer.concat(produceRequest('target-topic', new Map([[5, batch]])))
  let at = 0
  assert.equal(body.readInt16BE(at), -1, 'no transactional id'); at += 2
  assert.equal(body.readInt16BE(at), -1, 'acks=all'); at += 2
  assert.equal(body.readInt32BE(at), 30_000); at += 4
  assert.equal(body.readInt32BE(at), 1); at += 4
  assert.equal(body.toString('latin1', at + 2, at + 2 + body.readInt16BE(at)), 'target-topic'); at += 2 + 'target-topic'.length
  assert.equal(body.readInt32BE(at), 1); at += 4
  assert.equal(body.readInt32BE(at), 5); at += 4
  const size = body.readInt32BE(at); at += 4
  const sent = body.subarray(at, at + size)
  assert.equal(at + size, body.length)
  assert.equal(sent.readBigInt64BE(BATCH_OFFSETS.baseOffset), 0n)
  assert.equal(sent.readBigInt64BE(BATCH_OFFSETS.producerId), -1n)
  const { stored, computed } = batchCrc(sent)
  assert.equal(stored, computed)
  assert.deepEqual(sent.subarray(61), batch.subarray(61), 'the records go as fetched')
})

test('the bare forwarder\'s fetch names every partition from its offset, and a refused produce stops it', () => {
  const body = Buffer.concat(fetchRequest('t', [7n, 9n]))
  assert.equal(body.readInt32BE(0), -1, 'a client, not a replica')
  const partitionsAt = 17 + 4 + 2 + 1
  assert.equal(body.readInt32BE(partitionsAt), 2)
  assert.equal(body.readBigInt64BE(partitionsAt + 4 + 4), 7n)
  assert.equal(body.readBigInt64BE(partitionsAt + 4 + 16 + 4), 9n)
  const answer = (errorCode: number): Buffer =>
    Buffer.concat([int32(1), kafkaString('t'), int32(1), int32(3), int16(errorCode), int64(0n), int64(-1n), int32(0)])
  checkProduced(answer(0))
  assert.throws(() => checkProduced(answer(10)), /produce to partition 3: error code 10/)
})
