import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { digestRecord, wireRecordHash } from '../../../src/mirror-topics/record-digest.js'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'

const require = createRequire(import.meta.url)
type Encoded = { buffer: Buffer }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<Encoded> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => Encoded
const Long = require('@kafka-mirror-sidecar/kafkajs/src/utils/long') as { fromValue: (value: string | number) => unknown }

/** Records with null and empty keys and values, repeated, null-valued and non-ASCII header names, timestamps before and after the base. */
async function batch (compression: number): Promise<Buffer> {
  const records = Array.from({ length: 40 }, (_, i) =>
    Record({
      key: i === 3 ? null : i === 4 ? Buffer.alloc(0) : Buffer.from(`k${i}`),
      value: i === 5 ? null : Buffer.from(`value ${i} `.repeat(i)),
      headers:
        i % 3 === 0
          ? []
          : [
              { key: 'trace', value: Buffer.from(`t${i}`) },
              { key: 'größe', value: i === 7 ? null : Buffer.from('x') },
              { key: 'trace', value: Buffer.from('again') },
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

test('the records of a forwarded batch, read without decoding, hash as kafkajs\' decoded records do (every codec)', async () => {
  registerCodecs()
  for (const [codec, compression] of [['none', 0], ['gzip', 1], ['snappy', 2], ['lz4', 3], ['zstd', 4]] as const) {
    const forwarded = new KafkaForwardedBatch(await batch(compression))
    const decoded = (await forwarded.decode()).map(r => digestRecord(r).hash)
    const wire: number[] = []
    assert.equal(await forwarded.visitRecords((key, value, headers, timestampMs) => { wire.push(wireRecordHash(key, value, headers, timestampMs)) }), 40)
    assert.deepEqual(wire, decoded, codec)
    assert.equal(new Set(wire).size, 40, `${codec}: every record hashes apart`)
  }
})

test('a truncated batch is a RangeError, not a wrong hash', async () => {
  const bytes = await batch(0)
  const forwarded = new KafkaForwardedBatch(bytes)
  const cut = Buffer.from(bytes.subarray(0, bytes.length - 10))
  await assert.rejects(async () => {
    const { visitBatchRecords } = await import('../../../src/kafka/record-batch-records.js')
    await visitBatchRecords(cut, () => {})
  }, RangeError)
  assert.equal(await forwarded.visitRecords(() => {}), 40)
})
