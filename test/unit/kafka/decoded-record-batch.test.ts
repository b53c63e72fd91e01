import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { encodeDecodedBatch, encodeRecordsSection, withEncodedBatches } from '../../../src/kafka/decoded-record-batch.js'
import { KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'
import { BATCH_HEADER_BYTES, BATCH_OFFSETS, batchCrc, batchForTarget, readBatchHeader } from '../../../src/kafka/record-batch-header.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

const require = createRequire(import.meta.url)
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => { buffer: Buffer }

/**
 * Records as the decoder gives them: null keys, tombstones, headers repeated and interleaved, a null
 * header value, multi-byte names, timestamps out of order.
 */
function records (count: number): KafkaRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: String(9000 + i * 2),
    timestamp: String(1_700_000_000_000 + ((i * 7919) % 500) * 1000 - 250_000),
    key: i % 6 === 1 ? null : Buffer.from(`key-${i}`),
    value: i % 4 === 2 ? null : i % 9 === 0 ? Buffer.alloc(0) : Buffer.from(`value-${i}-`.repeat(1 + (i % 30))),
    headerList: i % 3 === 0 ? [] : [{ key: 'a', value: Buffer.from('1') }, { key: 'ünïcode', value: null }, { key: 'a', value: Buffer.from(String(i)) }],
  }))
}

test('the records section is byte for byte what kafkajs\' producer encodes for the same messages', () => {
  const given = records(200)
  const section = encodeRecordsSection(given, 0)
  const first = Math.min(...given.map(r => Number(r.timestamp)))
  const kafkajs = Buffer.concat(given.map((r, i) => {
    return Record({ key: r.key, value: r.value, headers: r.headerList, offsetDelta: i, timestampDelta: Number(r.timestamp) - first }).buffer
  }))
  assert.equal(section.firstTimestampMs, first)
  assert.equal(section.maxTimestampMs, Math.max(...given.map(r => Number(r.timestamp))))
  assert.ok(section.bytes.equals(kafkajs))
})

test('grouped headers (no wire-order list) are written as kafkajs flattens them, string values as UTF-8', () => {
  const record: KafkaRecord = {
    offset: '0',
    timestamp: '5',
    key: Buffer.from('k'),
    value: Buffer.from('v'),
    headers: { x: [Buffer.from('1'), 'zwei'], y: null },
  }
  const section = encodeRecordsSection([record], 0)
  assert.ok(section.bytes.equals(Record({ key: record.key, value: record.value, headers: record.headers, offsetDelta: 0, timestampDelta: 0 }).buffer))
})

for (const [codec, name] of [[0, 'none'], [1, 'gzip'], [2, 'snappy'], [3, 'lz4'], [4, 'zstd']] as const) {
  test(`a batch encoded in ${name} decodes to the same keys, values, headers and timestamps, in order, and takes the target rewrite`, async () => {
    registerCodecs()
    const given = records(300)
    const bytes = await encodeDecodedBatch(given, codec)
    const header = readBatchHeader(bytes)
    assert.equal(header.magic, 2)
    assert.equal(header.recordCount, 300)
    assert.equal(header.lastOffsetDelta, 299)
    assert.equal(header.attributes, codec)
    assert.equal(bytes.readInt32BE(BATCH_OFFSETS.length), bytes.length - 12)
    const sent = Buffer.concat(batchForTarget(bytes, { producerId: 77n, producerEpoch: 1, baseSequence: 10, transactional: true }))
    assert.equal(batchCrc(sent).stored, batchCrc(sent).computed)
    const decoded = await new KafkaForwardedBatch(sent).decode()
    assert.deepEqual(decoded.map(r => [r.timestamp, r.key, r.value, r.headerList]), given.map(r => [r.timestamp, r.key, r.value, r.headerList]))
    assert.deepEqual(decoded.map(r => r.offset), given.map((_, i) => String(i)), 'consecutive offset deltas from 0')
  })
}

test(
  'decoded writes of one partition become one encoded batch; forwarded writes and empty ones pass as they are; a partition with both is left alone',
  async () => {
    registerCodecs()
    const given = records(10)
    const forwarded = new KafkaForwardedBatch(await encodeDecodedBatch(given.slice(0, 2), 0))
    const writes = [
      { topic: 't', partition: 0, records: given.slice(0, 4) },
      { topic: 't', partition: 1, records: [], forwarded },
      { topic: 't', partition: 0, records: given.slice(4, 10) },
      { topic: 't', partition: 2, records: [] },
    ]
    const out = await withEncodedBatches(writes, 3)
    assert.equal(out.length, 2)
    assert.equal(out[0]?.forwarded, forwarded)
    const batch = out[1]?.forwarded as KafkaForwardedBatch
    assert.equal(out[1]?.partition, 0)
    assert.equal(batch.recordCount, 10)
    assert.equal(batch.codec, 'lz4')
    assert.deepEqual((await batch.decode()).map(r => r.key), given.map(r => r.key))
    const mixed = [{ topic: 't', partition: 1, records: given }, { topic: 't', partition: 1, records: [], forwarded }]
    assert.equal(await withEncodedBatches(mixed, 0), mixed)
    const none = [{ topic: 't', partition: 1, records: [], forwarded }]
    assert.equal(await withEncodedBatches(none, 0), none)
    assert.ok(BATCH_HEADER_BYTES === 61)
  }
)
