import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BatchHandover, type FetchedItem, type FetchedRun, type MirrorProducerFilter } from '../../../src/kafka/batch-handover.js'
import { corruptBatchOf, type CorruptRecordBatch } from '../../../src/kafka/corrupt-record-batch.js'
import { encodeDecodedBatch } from '../../../src/kafka/decoded-record-batch.js'
import { forwardingPolicy, KafkaForwardedBatch } from '../../../src/kafka/forwarded-record-batch.js'
import { BATCH_OFFSETS, batchCrc } from '../../../src/kafka/record-batch-header.js'
import type { CorruptBatch, FetchControl, FetchedBatch, SourceListener } from '../../../src/ports/ports.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

function record (offset: number): KafkaRecord {
  return { offset: String(offset), timestamp: '1700000000000', key: Buffer.from(`k${offset}`), value: Buffer.from(`v${offset}`) }
}

/** An uncompressed v2 batch of `count` records from `baseOffset`, written by `producerId`, with its CRC set. */
async function batchBytes (baseOffset: number, count: number, producerId = -1n): Promise<Buffer> {
  const bytes = await encodeDecodedBatch(Array.from({ length: count }, (_, i) => record(baseOffset + i)), 0)
  bytes.writeBigInt64BE(BigInt(baseOffset), BATCH_OFFSETS.baseOffset)
  bytes.writeBigInt64BE(producerId, BATCH_OFFSETS.producerId)
  bytes.writeUInt32BE(batchCrc(bytes).computed, BATCH_OFFSETS.crc)
  return bytes
}

async function forwarded (baseOffset: number, count: number, producerId = -1n): Promise<KafkaForwardedBatch> {
  return new KafkaForwardedBatch(await batchBytes(baseOffset, count, producerId))
}

async function corrupt (baseOffset: number, count: number): Promise<CorruptRecordBatch> {
  const bytes = await batchBytes(baseOffset, count)
  bytes[bytes.length - 1]! ^= 0xff
  const found = corruptBatchOf(bytes)
  assert.ok(found !== undefined)
  return found
}

type Call =
  | { kind: 'batch', from: bigint | undefined, nextOffset: bigint | undefined, forwarded?: bigint, records?: number[] }
  | { kind: 'skipped', from: bigint | undefined, nextOffset: bigint }
  | { kind: 'corrupt', baseOffset: bigint, rangeProblem: string | undefined }
  | { kind: 'decoded', reason: string }

/** A listener that records what it is told; `onCorrupt` answers `skipCorrupt`, and `stopAfter` batches turn the control inactive. */
function recorder (options: { skipCorrupt?: boolean, stopAfter?: number } = {}) {
  const calls: Call[] = []
  let batches = 0
  let active = true
  const control: FetchControl = { heartbeat: async () => await Promise.resolve(), isActive: () => active }
  const listener: SourceListener = {
    onBatch: async (batch: FetchedBatch) => {
      calls.push(batch.forwarded === undefined
        ? { kind: 'batch', from: batch.from, nextOffset: batch.nextOffset, records: batch.records.map(r => Number(r.offset)) }
        : { kind: 'batch', from: batch.from, nextOffset: batch.nextOffset, forwarded: batch.forwarded.baseOffset })
      if (++batches === options.stopAfter) active = false
      await Promise.resolve()
    },
    onSkipped: (_topic, _partition, nextOffset, from) => { calls.push({ kind: 'skipped', from, nextOffset }) },
    onAssignment: () => undefined,
    onRebalancing: async () => await Promise.resolve(),
    onCrash: error => { throw error },
    onDecoded: reason => { calls.push({ kind: 'decoded', reason }) },
    onCorrupt: (_topic, _partition, batch: CorruptBatch, rangeProblem) => {
      calls.push({ kind: 'corrupt', baseOffset: batch.baseOffset, rangeProblem })
      return options.skipCorrupt ?? false
    },
  }
  return { calls, listener, control }
}

function run (items: readonly FetchedItem[], fetchedOffset: bigint, nextOffset: bigint): FetchedRun {
  return { topic: 't', partition: 0, highWatermark: 1000n, items, fetchedOffset, nextOffset }
}

const policy = forwardingPolicy(undefined, undefined, 1_048_576)

test('invariant (order): batches go in fetch order, each from where the one before ended; one begun before the fetch offset is decoded from it', async () => {
  const handover = new BatchHandover(2000, policy, undefined)
  const { calls, listener, control } = recorder()
  const items = [await forwarded(5, 5), await forwarded(10, 3), await forwarded(13, 2)]
  await handover.handOver(run(items, 7n, 20n), listener, control)
  assert.deepEqual(calls, [
    { kind: 'decoded', reason: 'starts_before_position' },
    { kind: 'batch', from: 7n, nextOffset: 10n, records: [7, 8, 9] },
    { kind: 'batch', from: 10n, nextOffset: 13n, forwarded: 10n },
    // The last batch reaches to the run's next offset (past control batches the fetch skipped).
    { kind: 'batch', from: 13n, nextOffset: 20n, forwarded: 13n },
  ])
})

test('decoded records go in runs of max.poll.records; a run with nothing in it moves the position with onSkipped', async () => {
  const handover = new BatchHandover(2, policy, undefined)
  const { calls, listener, control } = recorder()
  await handover.handOver(run([record(0), record(1), record(2), record(3), record(4)], 0n, 5n), listener, control)
  assert.deepEqual(calls, [
    { kind: 'batch', from: 0n, nextOffset: 2n, records: [0, 1] },
    { kind: 'batch', from: 2n, nextOffset: 4n, records: [2, 3] },
    { kind: 'batch', from: 4n, nextOffset: 5n, records: [4] },
  ])
  const empty = recorder()
  await handover.handOver(run([], 5n, 9n), empty.listener, empty.control)
  assert.deepEqual(empty.calls, [{ kind: 'skipped', from: 5n, nextOffset: 9n }])
})

test('the opposite mirror\'s batches are left out and counted; the position still moves past them', async () => {
  const skipped: number[] = []
  const producers: MirrorProducerFilter = {
    classify: async ids => await Promise.resolve(new Set(ids.filter(id => id === '77'))),
    skipped: records => { skipped.push(records) },
  }
  const handover = new BatchHandover(2000, policy, producers)
  const { calls, listener, control } = recorder()
  await handover.handOver(run([await forwarded(0, 2), await forwarded(2, 3, 77n)], 0n, 5n), listener, control)
  assert.deepEqual(skipped, [3])
  assert.deepEqual(calls, [
    { kind: 'batch', from: 0n, nextOffset: 2n, forwarded: 0n },
    { kind: 'skipped', from: 2n, nextOffset: 5n },
  ])
})

test('a corrupt batch goes to onCorrupt: skipped, the position moves past it; refused, nothing after it is handed over', async () => {
  const items = [await forwarded(0, 2), await corrupt(2, 2), await forwarded(4, 2)]
  const skipping = recorder({ skipCorrupt: true })
  await new BatchHandover(2000, policy, undefined).handOver(run(items, 0n, 6n), skipping.listener, skipping.control)
  assert.deepEqual(skipping.calls, [
    { kind: 'batch', from: 0n, nextOffset: 2n, forwarded: 0n },
    { kind: 'corrupt', baseOffset: 2n, rangeProblem: undefined },
    { kind: 'skipped', from: 2n, nextOffset: 4n },
    { kind: 'batch', from: 4n, nextOffset: 6n, forwarded: 4n },
  ])
  const failing = recorder({ skipCorrupt: false })
  await new BatchHandover(2000, policy, undefined).handOver(run(items, 0n, 6n), failing.listener, failing.control)
  assert.deepEqual(failing.calls, [
    { kind: 'batch', from: 0n, nextOffset: 2n, forwarded: 0n },
    { kind: 'corrupt', baseOffset: 2n, rangeProblem: undefined },
  ])
})

test('a corrupt batch whose header claims offsets past the next batch names that problem', async () => {
  const { calls, listener, control } = recorder({ skipCorrupt: true })
  const items = [await corrupt(0, 6), await forwarded(4, 2)]
  await new BatchHandover(2000, policy, undefined).handOver(run(items, 0n, 6n), listener, control)
  assert.deepEqual(calls[0], { kind: 'corrupt', baseOffset: 0n, rangeProblem: 'its header says it ends at offset 5, past 3 where the next batch begins' })
})

test('nothing more is handed over once the control turns inactive (the partition revoked, lost or seeked)', async () => {
  const { calls, listener, control } = recorder({ stopAfter: 1 })
  const items = [await forwarded(0, 2), await forwarded(2, 2), await forwarded(4, 2)]
  await new BatchHandover(2000, policy, undefined).handOver(run(items, 0n, 8n), listener, control)
  assert.deepEqual(calls, [{ kind: 'batch', from: 0n, nextOffset: 2n, forwarded: 0n }])
})
