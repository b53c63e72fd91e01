import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { BatchTranscoder, codecId, defaultTranscodeConcurrency, transcodeBatch, TranscodeWindow } from '../../../src/kafka/batch-transcoder.js'
import { KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'
import { Attributes, BATCH_OFFSETS, batchCrc, readBatchHeader } from '../../../src/kafka/record-batch-header.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

const require = createRequire(import.meta.url)
type Encoded = { buffer: Buffer }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<Encoded> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => Encoded
const Long = require('@kafka-mirror-sidecar/kafkajs/src/utils/long') as { fromValue: (value: string | number) => unknown }

/** A v2 batch as a producer writes it (kafkajs' encoder): null keys and values, tombstones, repeated and empty headers among its records. */
async function batchBytes (count: number, compression: number, valueBytes = 40): Promise<Buffer> {
  const records = Array.from({ length: count }, (_, i) =>
    Record({
      key: i % 7 === 3 ? null : Buffer.from(`key-${i}`),
      value: i % 5 === 2 ? null : Buffer.from(`value-${i}-`.padEnd(valueBytes, 'x')),
      headers:
        i % 4 === 0
          ? []
          : [
              { key: 'h', value: Buffer.from(String(i)) },
              { key: 'h', value: Buffer.from('again') },
              { key: 'empty', value: Buffer.alloc(0) },
            ],
      offsetDelta: i,
      timestampDelta: i * 13,
    })
  )
  const firstTimestamp = 1_700_000_000_000
  const encoded = await RecordBatch({
    compression,
    firstOffset: Long.fromValue(5000),
    firstTimestamp,
    maxTimestamp: firstTimestamp + (count - 1) * 13,
    partitionLeaderEpoch: 7,
    lastOffsetDelta: count - 1,
    producerId: Long.fromValue(42),
    producerEpoch: 3,
    firstSequence: 100,
    transactional: false,
    records,
  })
  return encoded.buffer
}

/** What a consumer reads from a batch: every field the mirror keeps. */
function fields (records: readonly KafkaRecord[]): unknown[] {
  return records.map(r => ({ offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headerList }))
}

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const

for (const from of CODECS) {
  for (const to of CODECS) {
    if (from === to) continue
    test(
      `a ${from} batch transcoded into ${to} holds the same records (offsets, timestamps, keys, values, headers) and the same header but for codec and length`,
      async () => {
        registerCodecs()
        const source = await batchBytes(50, codecId(from) as number)
        const out = await transcodeBatch(source, codecId(to) as number)
        const before = readBatchHeader(source)
        const after = readBatchHeader(out)
        assert.equal(after.attributes & Attributes.CODEC_MASK, codecId(to))
        assert.equal(after.attributes & ~Attributes.CODEC_MASK, before.attributes & ~Attributes.CODEC_MASK)
        assert.equal(out.readInt32BE(BATCH_OFFSETS.length), out.length - 12)
        assert.deepEqual({ ...after, attributes: 0 }, { ...before, attributes: 0 })
        const original = await new KafkaForwardedBatch(source).decode()
        const transcoded = new KafkaForwardedBatch(out, undefined, true)
        assert.equal(transcoded.codec, to)
        assert.equal(transcoded.transcoded, true)
        assert.equal(transcoded.recordCount, 50)
        assert.equal(transcoded.baseOffset, 5000n)
        assert.deepEqual(fields(await transcoded.decode()), fields(original))
        // The rewrite for the target (producer fields, CRC) applies to it as to any forwarded batch.
        const encoded = transcoded.message(0).encodeBatch({ producerId: '9', producerEpoch: 1, firstSequence: 0, transactional: false })
        const written = Array.isArray(encoded) ? Buffer.concat(encoded) : encoded
        assert.equal(batchCrc(written).stored, batchCrc(written).computed)
      }
    )
  }
}

test('the transcoder gives undefined for a result larger than a batch may be, and for bytes the codec refuses', async () => {
  registerCodecs()
  const compressed = await batchBytes(200, codecId('zstd') as number, 400)
  const tight = new BatchTranscoder(codecId('none') as number, compressed.length + 100, 2)
  tight.start()
  assert.equal(await tight.transcode(compressed), undefined, 'decompressed it would not fit')
  const broken = Buffer.from(compressed)
  broken.fill(0x55, 70)
  const roomy = new BatchTranscoder(codecId('lz4') as number, 1 << 24, 2)
  roomy.start()
  assert.equal(await roomy.transcode(broken), undefined)
  assert.ok((await roomy.transcode(compressed)) !== undefined)
  await Promise.all([tight.stop(), roomy.stop()])
})

test('the transcoder runs at most its concurrency at once, every batch gets its own result, and stop turns waiting ones into undefined', async () => {
  registerCodecs()
  const sources = await Promise.all(Array.from({ length: 12 }, async (_, i) => await batchBytes(20 + i, codecId('none') as number)))
  const transcoder = new BatchTranscoder(codecId('zstd') as number, 1 << 24, 3)
  transcoder.start()
  let most = 0
  const pending = sources.map(async bytes => {
    const result = transcoder.transcode(bytes)
    most = Math.max(most, transcoder.running)
    return await result
  })
  assert.equal(transcoder.running, 3)
  assert.equal(transcoder.waiting, 9)
  const results = await Promise.all(pending)
  assert.equal(most, 3)
  for (const [i, out] of results.entries()) {
    assert.ok(out !== undefined)
    assert.equal(new KafkaForwardedBatch(out, undefined, true).recordCount, 20 + i)
  }
  assert.equal(transcoder.running, 0)
  const late = sources.map(async bytes => await transcoder.transcode(bytes))
  await transcoder.stop()
  const settled = await Promise.all(late)
  assert.equal(settled.filter(out => out !== undefined).length, 3, 'those running finish; those waiting are given back')
  assert.equal(transcoder.running, 0)
  assert.equal(await transcoder.transcode(sources[0] as Buffer), undefined, 'stopped')
  await transcoder.stop()
})

test('the default concurrency is the size of libuv\'s thread pool', () => {
  assert.equal(defaultTranscodeConcurrency({}), 4)
  assert.equal(defaultTranscodeConcurrency({ UV_THREADPOOL_SIZE: '8' }), 8)
  assert.equal(defaultTranscodeConcurrency({ UV_THREADPOOL_SIZE: 'x' }), 4)
  assert.throws(() => new BatchTranscoder(3, 100, 0), /positive integer/)
})

test('a transcode window starts at most `ahead` items, in order, one more as each is taken; an item skipped by the caller is never started', async () => {
  const started: number[] = []
  const window = new TranscodeWindow([1, 2, 3, 4, 5, 6], async item => { started.push(item); return item * 10 }, 2)
  assert.deepEqual(started, [1, 2])
  assert.equal(await window.take(1), 10)
  assert.deepEqual(started, [1, 2, 3])
  assert.equal(await window.take(2), 20)
  // 3 and 4 are passed by (the caller had no use for them): 5 is taken next.
  assert.equal(await window.take(5), 50)
  assert.deepEqual(started, [1, 2, 3, 4, 5, 6])
  assert.equal(window.take(5), undefined, 'taken already')
  assert.equal(window.take(9), undefined, 'not in the list')
  assert.equal(await window.take(6), 60)
})
