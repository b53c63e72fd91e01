import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { digestRecord, digestWireRecord, hashBytes, hashRange, type RecordDigest } from '../../../src/mirror-topics/record-digest.js'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { decodeRecordBatch } from '../../../src/kafka/kafkajs-internals.js'
import { rawBatchHook, RawRecordBatch, WireRecord } from '../../../src/kafka/raw-record-batch.js'
import { Attributes, BATCH_OFFSETS } from '../../../src/kafka/record-batch-header.js'

const require = createRequire(import.meta.url)
type Encoded = { buffer: Buffer }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<Encoded> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => Encoded
const Long = require('@kafka-mirror-sidecar/kafkajs/src/utils/long') as { fromValue: (value: string | number) => unknown }

/** 40 records at offsets 500..539: null and empty keys and values, repeated, null-valued and non-ASCII header names, timestamps before and after the base. */
async function batch (compression: number): Promise<Buffer> {
  const records = Array.from({ length: 40 }, (_, i) =>
    Record({
      key: i === 3 ? null : i === 4 ? Buffer.alloc(0) : Buffer.from(`k${i}`),
      value: i === 5 ? null : i === 6 ? Buffer.alloc(0) : Buffer.from(`value ${i} `.repeat(i)),
      headers:
        i % 3 === 0
          ? []
          : [
              { key: 'trace', value: Buffer.from(`t${i}`) },
              { key: 'größe', value: i === 7 ? null : Buffer.from('x') },
              { key: 'trace', value: i === 8 ? Buffer.alloc(0) : Buffer.from('again') },
            ],
      offsetDelta: i,
      timestampDelta: i === 9 ? -5000 : i * 1000 + 2 ** 33,
    })
  )
  const firstTimestamp = 1_700_000_000_000
  return (
    await RecordBatch({
      compression,
      firstOffset: Long.fromValue(500),
      firstTimestamp,
      maxTimestamp: firstTimestamp + 2 ** 34,
      partitionLeaderEpoch: 0,
      lastOffsetDelta: 39,
      producerId: Long.fromValue(-1),
      producerEpoch: 0,
      firstSequence: 0,
      transactional: false,
      records,
    })
  ).buffer
}

async function wireDigests (bytes: Buffer, from = 0, until = Number.MAX_SAFE_INTEGER): Promise<RecordDigest[]> {
  const out: RecordDigest[] = []
  const visited = await new RawRecordBatch(bytes).visit(from, until, new WireRecord(), record => { out.push(digestWireRecord(record)) })
  assert.equal(visited, out.length)
  return out
}

test('hashRange of a part of a buffer is hashBytes of that part', () => {
  const bytes = Buffer.from('0123456789abcdefghij')
  for (let start = 0; start < 6; start++) {
    for (let end = start; end <= bytes.length; end += 3) assert.equal(hashRange(bytes, start, end), hashBytes(bytes.subarray(start, end)))
  }
})

test('records read from a raw batch digest exactly as kafkajs\' decoded records (every codec, every field, sizes)', async () => {
  registerCodecs()
  for (const [codec, compression] of [['none', 0], ['gzip', 1], ['snappy', 2], ['lz4', 3], ['zstd', 4]] as const) {
    const bytes = await batch(compression)
    const decoded = (await decodeRecordBatch(bytes)).map(digestRecord)
    assert.equal(decoded.length, 40)
    assert.deepEqual(await wireDigests(bytes), decoded, codec)
    assert.equal(new Set(decoded.map(d => d.hash)).size, 40, `${codec}: every record hashes apart`)
  }
})

test('visit keeps only offsets in fromOffset..untilOffset-1', async () => {
  const bytes = await batch(0)
  const decoded = (await decodeRecordBatch(bytes)).map(digestRecord)
  assert.deepEqual(await wireDigests(bytes, 510, 520), decoded.filter(d => d.offset >= 510 && d.offset < 520))
  assert.deepEqual(await wireDigests(bytes, 600), [])
  const raw = new RawRecordBatch(bytes)
  assert.equal(raw.baseOffset, 500)
  assert.equal(raw.endOffset, 540)
})

test('a LogAppendTime batch gives every record the batch\'s max timestamp, as kafkajs does', async () => {
  const bytes = await batch(0)
  bytes.writeInt16BE(bytes.readInt16BE(BATCH_OFFSETS.attributes) | Attributes.LOG_APPEND_TIME, BATCH_OFFSETS.attributes)
  const decoded = (await decodeRecordBatch(bytes)).map(digestRecord)
  const wire = await wireDigests(bytes)
  assert.deepEqual(wire, decoded)
  assert.deepEqual(new Set(wire.map(d => d.timestamp)), new Set([1_700_000_000_000 + 2 ** 34]))
})

test('the hook takes v2 data batches and leaves control batches and older formats to kafkajs', async () => {
  const bytes = await batch(0)
  assert.ok(rawBatchHook(bytes) instanceof RawRecordBatch)
  const control = Buffer.from(bytes)
  control.writeInt16BE(Attributes.CONTROL | Attributes.TRANSACTIONAL, BATCH_OFFSETS.attributes)
  assert.equal(rawBatchHook(control), undefined)
  const old = Buffer.from(bytes)
  old.writeInt8(1, BATCH_OFFSETS.magic)
  assert.equal(rawBatchHook(old), undefined)
})

test('a truncated batch is a RangeError, not a wrong digest', async () => {
  const bytes = await batch(0)
  await assert.rejects(wireDigests(Buffer.from(bytes.subarray(0, bytes.length - 10))), RangeError)
})

test('hashBytes gives the values digests were recorded with (whatever loop computes them)', () => {
  // Computed by the byte-at-a-time loop of 977cb9c: digests on a target's digests topic depend on these.
  const expected = [
    [0, 8293445568090165],
    [1, 6955317834892018],
    [2, 1488310106809950],
    [3, 838822340599079],
    [4, 1293985735913768],
    [5, 2902044482973102],
    [7, 413902152425939],
    [8, 311072678871309],
    [31, 3283976931653832],
    [32, 8921677163001656],
    [33, 5771338553883900],
    [64, 1925451905240410],
    [100, 6601733457520545],
    [515, 7813029903875019],
    [4096, 1174866383258164],
    [70000, 7787415035725305],
  ] as const
  for (const [length, hash] of expected) {
    const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 131 + length) & 255))
    assert.equal(hashBytes(bytes), hash, `${length} bytes`)
    const shifted = Buffer.concat([Buffer.from([1, 2, 3]), bytes])
    assert.equal(hashRange(shifted, 3, 3 + length), hash, `${length} bytes at an odd offset`)
  }
})
