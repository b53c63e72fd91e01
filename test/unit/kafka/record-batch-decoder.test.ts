import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { decodeRecordBatch } from '../../../src/kafka/kafkajs-internals.js'
import { decodeBatchRecords } from '../../../src/kafka/record-batch-decoder.js'
import { KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

const require = createRequire(import.meta.url)
type Encoded = { buffer: Buffer }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<Encoded> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => Encoded
const Long = require('@kafka-mirror-sidecar/kafkajs/src/utils/long') as { fromValue: (value: string | number) => unknown }

/**
 * A v2 batch with offset gaps (every third offset), null keys, tombstones, empty values, repeated and
 * interleaved headers, null header values and a header named __proto__.
 */
async function batchBytes (options: { count: number, compression: number, logAppendTime?: boolean, baseOffset?: number }): Promise<Buffer> {
  const records = Array.from({ length: options.count }, (_, i) =>
    Record({
      key: i % 5 === 1 ? null : Buffer.from(`key-${i}`),
      value: i % 4 === 2 ? null : i % 7 === 0 ? Buffer.alloc(0) : Buffer.from(`value-${i}-`.repeat(1 + (i % 9))),
      headers:
        i % 3 === 0
          ? []
          : [
              { key: 'a', value: Buffer.from('1') },
              { key: '__proto__', value: Buffer.from('p') },
              { key: 'b', value: null },
              { key: 'a', value: Buffer.from(String(i)) },
              { key: 'ü', value: Buffer.alloc(0) },
            ],
      offsetDelta: i * 3,
      timestampDelta: (i % 11) * 1000 - 3000,
    })
  )
  const firstTimestamp = 1_700_000_000_000
  const encoded = await RecordBatch({
    compression: options.compression,
    firstOffset: Long.fromValue(options.baseOffset ?? 123_456),
    firstTimestamp,
    maxTimestamp: firstTimestamp + 99_000,
    partitionLeaderEpoch: 4,
    lastOffsetDelta: (options.count - 1) * 3,
    producerId: Long.fromValue(8),
    producerEpoch: 0,
    firstSequence: 0,
    transactional: false,
    records,
  })
  const bytes = encoded.buffer
  if (options.logAppendTime === true) bytes.writeInt16BE(bytes.readInt16BE(21) | 0x08, 21)
  return bytes
}

/** The fields of kafkajs' records the mirror reads. */
function fields (records: readonly KafkaRecord[]): unknown[] {
  return records.map(r => ({
    offset: r.offset,
    timestamp: r.timestamp,
    key: r.key,
    value: r.value,
    headers: { ...r.headers },
    headerList: r.headerList,
    protoHeader: Object.getOwnPropertyDescriptor(r.headers ?? {}, '__proto__')?.value,
  }))
}

for (const compression of [0, 1, 2, 3, 4]) {
  for (const logAppendTime of [false, true]) {
    test(`codec ${compression}${logAppendTime ? ', LogAppendTime' : ''}: the records are those kafkajs' decoder gives, field for field`, async () => {
      registerCodecs()
      const bytes = await batchBytes({ count: 120, compression, logAppendTime })
      const ours = await decodeBatchRecords(bytes)
      assert.ok(ours !== undefined)
      const theirs = await decodeRecordBatch(Buffer.from(bytes))
      assert.equal(ours.length, 120)
      assert.deepEqual(fields(ours), fields(theirs))
      if (logAppendTime) assert.ok(ours.every(r => r.timestamp === '1700000099000'))
    })
  }
}

test('a forwarded batch whose header was rewritten for the target still decodes with its source offsets', async () => {
  registerCodecs()
  const bytes = await batchBytes({ count: 10, compression: 3 })
  const batch = new KafkaForwardedBatch(bytes)
  const before = fields(await batch.decode())
  batch.message(0).encodeBatch({ producerId: '5', producerEpoch: 1, firstSequence: 9, transactional: true })
  assert.deepEqual(fields(await batch.decode()), before)
  assert.equal((await batch.decode())[1]?.offset, '123459')
})

test('offsets past the exact range of a Number are left to kafkajs\' decoder; a truncated batch is a RangeError', async () => {
  registerCodecs()
  const far = await batchBytes({ count: 3, compression: 0, baseOffset: 2 ** 53 })
  assert.equal(await decodeBatchRecords(far), undefined)
  assert.equal((await new KafkaForwardedBatch(far).decode())[0]?.offset, '9007199254740992')
  const whole = await batchBytes({ count: 3, compression: 0 })
  await assert.rejects(decodeBatchRecords(whole.subarray(0, whole.length - 5)), RangeError)
})
