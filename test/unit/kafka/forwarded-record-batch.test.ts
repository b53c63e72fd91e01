import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { registerCodecs } from '../../../src/kafka/codecs.js'
import { deepPathReason, forwardingHook, forwardingPolicy, KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'
import { BATCH_OFFSETS, batchCrc, readBatchHeader } from '../../../src/kafka/record-batch-header.js'

const require = createRequire(import.meta.url)
type Encoded = { buffer: Buffer }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<Encoded> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (options: object) => Encoded
const Long = require('@kafka-mirror-sidecar/kafkajs/src/utils/long') as { fromValue: (value: string | number) => unknown }
const Decoder = require('@kafka-mirror-sidecar/kafkajs/src/protocol/decoder') as new (bytes: Buffer) => object
const decodeMessages = require('@kafka-mirror-sidecar/kafkajs/src/protocol/requests/fetch/v4/decodeMessages') as (
  decoder: object,
  forward?: (bytes: Buffer) => object | undefined,
) => Promise<Array<Record<string, unknown>>>

/** A partition's record set in a Fetch response: its size, then the batches. */
function recordSet (...batches: Buffer[]): Buffer {
  const size = Buffer.alloc(4)
  size.writeInt32BE(batches.reduce((sum, b) => sum + b.length, 0))
  return Buffer.concat([size, ...batches])
}

/** A v2 batch as a producer writes it (kafkajs' encoder), with `count` records from offset `baseOffset`. */
async function batchBytes (options: {
  count: number
  baseOffset?: number
  compression?: number
  lastOffsetDelta?: number
  transactional?: boolean
  firstTimestamp?: number
  tag?: string
}): Promise<Buffer> {
  const tag = options.tag ?? ''
  const records = Array.from({ length: options.count }, (_, i) =>
    Record({
      key: Buffer.from(`k${tag}${i}`),
      value: i === 1 ? null : Buffer.from(`value-${tag}${i}`),
      headers: [{ key: 'h', value: Buffer.from(String(i)) }],
      offsetDelta: i,
      timestampDelta: i * 1000,
    })
  )
  const firstTimestamp = options.firstTimestamp ?? 1_700_000_000_000
  const encoded = await RecordBatch({
    compression: options.compression ?? 0,
    firstOffset: Long.fromValue(options.baseOffset ?? 0),
    firstTimestamp,
    maxTimestamp: firstTimestamp + (options.count - 1) * 1000,
    partitionLeaderEpoch: 7,
    lastOffsetDelta: options.lastOffsetDelta ?? options.count - 1,
    producerId: Long.fromValue(42),
    producerEpoch: 3,
    firstSequence: 100,
    transactional: options.transactional ?? false,
    records,
  })
  return encoded.buffer
}

const policy = forwardingPolicy(undefined, undefined, 1 << 20)

/** The batch `encodeBatch` gives, as one buffer (it may give its pieces in order). */
function joined (encoded: Buffer | Buffer[]): Buffer {
  return Array.isArray(encoded) ? Buffer.concat(encoded) : encoded
}

test(
  "a forwarded batch is rewritten for the mirror's producer: base offset 0, epoch -1, id, epoch, sequence, a valid CRC; the records are untouched",
  async () => {
    registerCodecs()
    const source = await batchBytes({ count: 5, baseOffset: 1000, compression: 3 /* lz4 */, transactional: true })
    assert.equal(batchCrc(source).stored, batchCrc(source).computed, 'kafkajs wrote a valid CRC')
    const batch = new KafkaForwardedBatch(source)
    assert.equal(batch.baseOffset, 1000n)
    assert.equal(batch.recordCount, 5)
    assert.equal(batch.codec, 'lz4')
    assert.equal(batch.producerId, '42')
    const message = batch.message(3)
    assert.equal(message.recordCount, 5)
    const pieces = message.encodeBatch({ producerId: '9001', producerEpoch: 2, firstSequence: 55, transactional: false })
    assert.ok(Array.isArray(pieces) && pieces.length === 2 && pieces[0]?.length === BATCH_OFFSETS.recordCount + 4, 'a header of its own, then the records')
    const written = joined(pieces)
    const header = readBatchHeader(written)
    assert.equal(header.baseOffset, 0n)
    assert.equal(written.readInt32BE(BATCH_OFFSETS.partitionLeaderEpoch), -1)
    assert.equal(header.producerId, 9001n)
    assert.equal(written.readInt16BE(BATCH_OFFSETS.producerEpoch), 2)
    assert.equal(written.readInt32BE(BATCH_OFFSETS.baseSequence), 55)
    assert.equal(header.attributes & 0x10, 0, 'the source transaction bit is cleared')
    assert.equal(header.attributes & 0x07, 3, 'the codec is kept')
    const crc = batchCrc(written)
    assert.equal(crc.stored, crc.computed, 'the CRC covers the rewritten header')
    assert.deepEqual(written.subarray(BATCH_OFFSETS.recordCount), source.subarray(BATCH_OFFSETS.recordCount), 'records are forwarded byte for byte')
    assert.equal(source.readBigInt64BE(0), 1000n, 'the fetched bytes (a view of the response) are not changed')
    assert.equal(source.readInt16BE(BATCH_OFFSETS.attributes) & 0x10, 0x10, 'the source transaction bit stays in the fetched bytes')
    const again = joined(message.encodeBatch({ producerId: '9001', producerEpoch: 3, firstSequence: 70, transactional: true }))
    assert.equal(readBatchHeader(again).attributes & 0x10, 0x10, "the mirror's own transaction sets the bit")
    assert.deepEqual(joined(pieces), written, 'a request encoded earlier keeps its bytes (it may still be on its way)')

    const decoded = await batch.decode()
    assert.deepEqual(
      decoded.map(r => [r.offset, r.key?.toString(), r.value?.toString() ?? null]),
      [
        ['1000', 'k0', 'value-0'],
        ['1001', 'k1', null],
        ['1002', 'k2', 'value-2'],
        ['1003', 'k3', 'value-3'],
        ['1004', 'k4', 'value-4'],
      ],
      'decoding after a rewrite still gives the source offsets'
    )
  }
)

test(
  'a fetched batch\'s new CRC is derived from the one it carried (a record changed after the fetch check fails the target\'s check); ' +
  'a batch the mirror made gets a CRC over its bytes',
  async () => {
    const fields = { producerId: '5', producerEpoch: 1, firstSequence: 9, transactional: false }
    const source = await batchBytes({ count: 4, baseOffset: 10 })
    const fetched = new KafkaForwardedBatch(source)
    const intact = batchCrc(joined(fetched.message(0).encodeBatch(fields)))
    assert.equal(intact.stored, intact.computed, 'valid for the bytes as fetched')
    const byte = source.length - 3
    source[byte] = (source[byte] as number) ^ 0x40
    const changed = batchCrc(joined(fetched.message(0).encodeBatch(fields)))
    assert.notEqual(changed.stored, changed.computed, 'the CRC still covers the records as the source wrote them')
    source[byte] = (source[byte] as number) ^ 0x40

    const made = Buffer.from(source)
    made.writeUInt32BE(0, BATCH_OFFSETS.crc)
    const written = batchCrc(joined(new KafkaForwardedBatch(made, undefined, true).message(0).encodeBatch(fields)))
    assert.equal(written.stored, written.computed, 'bytes the mirror made (no CRC of their own yet) get one computed over them')
  }
)

test('batches that cannot be forwarded are named with their reason', async () => {
  assert.equal(deepPathReason(await batchBytes({ count: 3 }), policy), undefined)
  const gapped = await batchBytes({ count: 3, lastOffsetDelta: 5 })
  assert.equal(deepPathReason(gapped, policy), 'offset_gaps')
  const appendTime = await batchBytes({ count: 3 })
  appendTime.writeInt16BE(appendTime.readInt16BE(BATCH_OFFSETS.attributes) | 0x08, BATCH_OFFSETS.attributes)
  assert.equal(deepPathReason(appendTime, policy), 'log_append_time')
  const horizon = await batchBytes({ count: 3 })
  horizon.writeInt16BE(horizon.readInt16BE(BATCH_OFFSETS.attributes) | 0x40, BATCH_OFFSETS.attributes)
  assert.equal(deepPathReason(horizon, policy), 'delete_horizon')
  const control = await batchBytes({ count: 1 })
  control.writeInt16BE(control.readInt16BE(BATCH_OFFSETS.attributes) | 0x20, BATCH_OFFSETS.attributes)
  // A broker's marker carries a CRC over its attributes: without it the hook would take it for a corrupt batch.
  control.writeUInt32BE(batchCrc(control).computed, BATCH_OFFSETS.crc)
  assert.equal(deepPathReason(control, policy), 'control')
  assert.equal(deepPathReason(await batchBytes({ count: 3, compression: 1 }), forwardingPolicy(undefined, 'lz4', 1 << 20)), 'codec')
  assert.equal(deepPathReason(await batchBytes({ count: 3, compression: 3 }), forwardingPolicy(undefined, 'lz4', 1 << 20)), undefined)
  assert.equal(deepPathReason(await batchBytes({ count: 200 }), forwardingPolicy(undefined, undefined, 2048)), 'too_large')

  assert.equal(deepPathReason(await batchBytes({ count: 3 }), forwardingPolicy('disabled', undefined, 1 << 20)), 'disabled')

  const declined: string[] = []
  const hook = forwardingHook(policy, reason => declined.push(reason))
  const forwarded = hook(await batchBytes({ count: 2 }))
  assert.ok(forwarded instanceof KafkaForwardedBatch)
  assert.equal(forwarded.deepReason, undefined)
  const deep = hook(gapped)
  assert.ok(deep instanceof KafkaForwardedBatch, 'a batch to decode stays undecoded until the record source reaches it')
  assert.equal(deep.deepReason, 'offset_gaps')
  assert.equal(hook(control), undefined, 'control batches are left to kafkajs')
  assert.deepEqual(declined, ['offset_gaps'], 'control batches are dropped, not counted as decoded')
})

test('consecutive uncompressed batches are written as one batch: records renumbered from the first, timestamps kept, bytes otherwise the same', async () => {
  const parts = [
    new KafkaForwardedBatch(await batchBytes({ count: 3, baseOffset: 500, firstTimestamp: 1_700_000_000_000, tag: 'a' })),
    new KafkaForwardedBatch(await batchBytes({ count: 130, baseOffset: 503, firstTimestamp: 1_600_000_000_000, tag: 'b' })),
    new KafkaForwardedBatch(await batchBytes({ count: 1, baseOffset: 633, firstTimestamp: 1_800_000_000_000, tag: 'c' })),
  ]
  assert.ok(parts.every(part => part.mergeable))
  const expected = (await Promise.all(parts.map(part => part.decode()))).flat()
  const message = KafkaForwardedBatch.message(4, parts)
  assert.equal(message.recordCount, 134)
  const written = joined(message.encodeBatch({ producerId: '77', producerEpoch: 0, firstSequence: 10, transactional: false }))
  const crc = batchCrc(written)
  assert.equal(crc.stored, crc.computed)
  const header = readBatchHeader(written)
  assert.equal(header.recordCount, 134)
  assert.equal(header.lastOffsetDelta, 133)
  assert.equal(header.maxTimestamp, 1_800_000_000_000n)
  assert.equal(written.readInt32BE(BATCH_OFFSETS.length), written.length - 12)
  // Read it back as a broker would store it: base offset 500.
  written.writeBigInt64BE(500n, 0)
  const decoded = await new KafkaForwardedBatch(written).decode()
  assert.deepEqual(decoded.map(r => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString() ?? null, r.headerList?.map(h => h.value?.toString())]),
    expected.map(r => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString() ?? null, r.headerList?.map(h => h.value?.toString())]))
  assert.throws(
    () =>
      KafkaForwardedBatch.message(0, [
        parts[0] as KafkaForwardedBatch,
        new KafkaForwardedBatch(written.subarray(0)),
        { mergeable: false } as unknown as KafkaForwardedBatch,
      ]),
    /cannot share a request/
  )
})

test(
  "the patched Fetch decoder offers each batch to forwardRecordBatch; one it takes stands among the messages as a message kafkajs reads at the batch's last offset",
  async () => {
    registerCodecs()
    const taken = await batchBytes({ count: 5, baseOffset: 1000, transactional: true })
    const declined = await batchBytes({ count: 2, baseOffset: 1005, tag: 'd' })
    const offered: Buffer[] = []
    const forwarded = { mine: true }
    const messages = await decodeMessages(new Decoder(recordSet(taken, declined)), bytes => {
      offered.push(Buffer.from(bytes))
      return bytes.readBigInt64BE(0) === 1000n ? forwarded : undefined
    })
    assert.deepEqual(offered, [taken, declined], 'each whole batch, base offset and length included')
    assert.equal(messages.length, 3, 'one message for the batch taken, one per record of the one declined')
    assert.deepEqual(messages[0], {
      offset: '1004',
      key: null,
      isControlRecord: false,
      batchContext: { producerId: '42', inTransaction: true },
      forwardedBatch: forwarded,
    })
    assert.deepEqual(
      messages.slice(1).map(m => [m.offset, (m.key as Buffer).toString()]),
      [
        ['1005', 'kd0'],
        ['1006', 'kd1'],
      ]
    )
    const plain = await decodeMessages(new Decoder(recordSet(taken)))
    assert.deepEqual(
      plain.map(m => m.offset),
      ['1000', '1001', '1002', '1003', '1004'],
      'without the option every batch is decoded'
    )
  }
)

test('the patched produce request holds a forwarded batch\'s records by reference: the pieces it sends, in order, are the whole request', async () => {
  type Encoder = { buffer: Buffer, refs: unknown[] | undefined, size: () => number, chunks: () => Buffer[] }
  const ProduceV7 = require('@kafka-mirror-sidecar/kafkajs/src/protocol/requests/produce/v7/request') as (options: object) => { encode: () => Promise<Encoder> }
  const createRequest = require('@kafka-mirror-sidecar/kafkajs/src/protocol/request') as (options: object) => Promise<Encoder>
  const batches = [
    new KafkaForwardedBatch(await batchBytes({ count: 200, baseOffset: 10, tag: 'x' })),
    new KafkaForwardedBatch(await batchBytes({ count: 3, baseOffset: 90, tag: 'y' })),
  ]
  const fields = { producerId: '5', producerEpoch: 1, firstSequence: 8, transactional: false }
  const encoded = await createRequest({
    correlationId: 3,
    clientId: 'mirror',
    request: ProduceV7({
      acks: -1,
      timeout: 30_000,
      producerId: Long.fromValue(5),
      producerEpoch: 1,
      topicData: [
        { topic: 'mirrored', partitions: batches.map((batch, partition) => ({ partition, firstSequence: 8, messages: [batch.message(partition)] })) },
      ],
    }),
  })
  assert.equal(encoded.refs?.length, 1, 'the 200-record batch\'s records by reference; the 3-record batch is small and copied')
  const request = Buffer.concat(encoded.chunks())
  assert.deepEqual(encoded.buffer, request)
  assert.equal(request.length, encoded.size())
  // Size, api key, version, correlation id, client id; transactional id (null), acks, timeout; one topic.
  assert.equal(request.readInt32BE(0), request.length - 4, 'the size prefix counts the bytes held by reference')
  let at = 4 + 2 + 2 + 4 + 2 + 'mirror'.length
  assert.equal(request.readInt16BE(at), -1)
  at += 2 + 2 + 4
  assert.equal(request.readInt32BE(at), 1)
  at += 4 + 2 + 'mirrored'.length
  assert.equal(request.readInt32BE(at), 2)
  at += 4
  for (const [partition, batch] of batches.entries()) {
    assert.equal(request.readInt32BE(at), partition)
    const length = request.readInt32BE(at + 4)
    assert.deepEqual(
      request.subarray(at + 8, at + 8 + length),
      joined(batch.message(partition).encodeBatch(fields)),
      `partition ${partition}: the batch as encodeBatch gives it`
    )
    at += 8 + length
  }
  assert.equal(at, request.length)
})
