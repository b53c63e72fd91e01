import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { CorruptRecordBatch, corruptBatchOf } from '../../../src/kafka/corrupt-record-batch.js'
import { forwardingHook, forwardingPolicy, KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'
import { BATCH_HEADER_BYTES, BATCH_OFFSETS, batchCrc } from '../../../src/kafka/record-batch-header.js'

const require = createRequire(import.meta.url)
type Encoded = { buffer: Buffer }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<Encoded> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => Encoded
const Long = require('@kafka-mirror-sidecar/kafkajs/src/utils/long') as { fromValue: (value: string | number) => unknown }

/** A v2 batch as kafkajs' producer writes it: `count` records from offset `baseOffset`. */
async function batchBytes (count: number, baseOffset: number, options: { compression?: number, control?: boolean } = {}): Promise<Buffer> {
  const records = Array.from({ length: count }, (_, i) =>
    Record({ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`), headers: [], offsetDelta: i, timestampDelta: i })
  )
  const bytes = (await RecordBatch({
    compression: options.compression ?? 0,
    firstOffset: Long.fromValue(baseOffset),
    firstTimestamp: 1_700_000_000_000,
    maxTimestamp: 1_700_000_000_000 + count - 1,
    partitionLeaderEpoch: 0,
    lastOffsetDelta: count - 1,
    producerId: Long.fromValue(7),
    producerEpoch: 0,
    firstSequence: 0,
    transactional: options.control ?? false,
    records,
  })).buffer
  if (options.control === true) {
    // kafkajs' encoder has no control flag: set it and write the CRC again, as a broker's marker has it.
    bytes.writeInt16BE(bytes.readInt16BE(BATCH_OFFSETS.attributes) | 0x20, BATCH_OFFSETS.attributes)
    const { computed } = batchCrc(bytes)
    bytes.writeUInt32BE(computed, BATCH_OFFSETS.crc)
  }
  return bytes
}

/** `bytes` with one bit flipped in its records section (inside the last record's value). */
function flipped (bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes)
  copy[copy.length - 3] = copy[copy.length - 3]! ^ 0x01
  return copy
}

const passThrough = forwardingPolicy(undefined, undefined, 1 << 20)
const deepPath = forwardingPolicy('disabled', undefined, 1 << 20)
const handler = forwardingPolicy('message_handler', undefined, 1 << 20)

test(
  "a batch with one byte flipped in a record is refused on the pass-through path, the deep path and a message handler's: never forwarded nor decoded",
  async () => {
    registerCodecs()
    const intact = await batchBytes(10, 500)
    const corrupt = flipped(intact)
    for (const [name, policy] of [
      ['pass-through', passThrough],
      ['deep path', deepPath],
      ['message handler', handler],
    ] as const) {
      const declined: string[] = []
      const hook = forwardingHook(policy, reason => {
        declined.push(reason)
      })
      assert.ok(hook(intact) instanceof KafkaForwardedBatch, `${name}: the intact batch goes on`)
      const standIn = hook(corrupt)
      assert.ok(standIn instanceof CorruptRecordBatch, `${name}: the flipped batch is a CorruptRecordBatch, got ${standIn?.constructor.name}`)
      assert.equal(standIn.baseOffset, 500n)
      assert.equal(standIn.endOffset, 510n)
      assert.equal(standIn.storedCrc, intact.readUInt32BE(BATCH_OFFSETS.crc))
      assert.notEqual(standIn.computedCrc, standIn.storedCrc)
      assert.equal(standIn.control, false)
      assert.equal('decode' in standIn, false, 'it cannot be decoded')
      assert.equal(declined.length, name === 'pass-through' ? 0 : 1, `${name}: only the intact batch was routed`)
    }
  }
)

test('a compressed batch is checked over its compressed bytes, before anything decompresses it', async () => {
  registerCodecs()
  const intact = await batchBytes(20, 0, { compression: 1 /* gzip */ })
  assert.equal(corruptBatchOf(intact), undefined)
  const corrupt = Buffer.from(intact)
  const at = BATCH_HEADER_BYTES + 12
  corrupt[at] = corrupt[at]! ^ 0x80
  assert.ok(forwardingHook(deepPath, () => {})(corrupt) instanceof CorruptRecordBatch)
})

test(
  "a flipped byte in the header the CRC covers (the record count) is caught too; the fields outside it (base offset, leader epoch) are not the CRC's",
  async () => {
    const intact = await batchBytes(3, 40)
    const count = Buffer.from(intact)
    count.writeInt32BE(4, BATCH_OFFSETS.recordCount)
    assert.ok(corruptBatchOf(count) instanceof CorruptRecordBatch)
    const epoch = Buffer.from(intact)
    epoch.writeInt32BE(99, BATCH_OFFSETS.partitionLeaderEpoch)
    assert.equal(corruptBatchOf(epoch), undefined)
  }
)

test('a corrupt control batch (transaction marker) is refused too, and says it is one', async () => {
  const intact = await batchBytes(1, 80, { control: true })
  assert.equal(forwardingHook(passThrough, () => {})(intact), undefined, 'an intact marker is left to kafkajs')
  const standIn = forwardingHook(passThrough, () => {})(flipped(intact))
  assert.ok(standIn instanceof CorruptRecordBatch)
  assert.equal(standIn.control, true)
})
