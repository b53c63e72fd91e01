import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { BoundedQueue } from '../../../../src/sidecar/pipeline/bounded-queue.js'
import { plainLane } from '../../../../src/sidecar/pipeline/at-least-once-delivery.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { PartialSendError, type PartitionFailure } from '../../../../src/ports/partial-send-error.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import type { AckSegment, PartitionAck, PartitionWrite, RecordSink } from '../../../../src/ports/ports.js'
import { ProducerWorker } from '../../../../src/sidecar/pipeline/producer-worker.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import type { KafkaRecord } from '../../../../src/shared/kafka-record.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { FakeForwardedBatch } from '../../../helpers/fake-ports.js'

const require = createRequire(import.meta.url)
type Encoder = { size: () => number }
const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (batch: object) => Promise<Encoder> }
const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => Encoder

/** The size of `records` as one v2 record batch, encoded by kafkajs' own encoder (what the broker checks against max.message.bytes). */
async function batchSizeBytes (records: readonly KafkaRecord[]): Promise<number> {
  const first = Math.min(...records.map(r => Number(r.timestamp)))
  const encoded = records.map((r, i) =>
    Record({ key: r.key, value: r.value, headers: r.headerList ?? r.headers, offsetDelta: i, timestampDelta: Number(r.timestamp) - first })
  )
  return (await RecordBatch({ firstTimestamp: first, maxTimestamp: first, lastOffsetDelta: records.length - 1, records: encoded })).size()
}

/** Records of `valueBytes`-byte values with source offsets `from ..`. */
function records (from: number, count: number, valueBytes: number): KafkaRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: String(from + i),
    key: null,
    value: Buffer.alloc(valueBytes, 97 + ((from + i) % 26)),
    timestamp: String(1_700_000_000_000 + from + i),
  }))
}

function batch (partition: number, from: number, count: number, valueBytes: number): MirrorBatch {
  const held = records(from, count, valueBytes)
  return {
    sourceTopic: 't',
    targetTopic: 't',
    partition,
    records: held,
    firstOffset: BigInt(from),
    nextOffset: BigInt(from + count),
    bytes: count * valueBytes,
    pollTimeMs: 0,
  }
}

class MergeableForwardedBatch extends FakeForwardedBatch {
  override readonly mergeable: boolean = true
}

function forwardedBatch (partition: number, from: number, count: number): MirrorBatch {
  const forwarded = new MergeableForwardedBatch(records(from, count, 10))
  return {
    sourceTopic: 't',
    targetTopic: 't',
    partition,
    records: [],
    forwarded,
    firstOffset: BigInt(from),
    nextOffset: BigInt(from + count),
    bytes: forwarded.sizeBytes,
    pollTimeMs: 0,
  }
}

/**
 * A target whose topics take record batches of at most `maxMessageBytes` (kafkajs' encoded size;
 * a forwarded batch counts its own size): a partition over it is refused with MESSAGE_TOO_LARGE
 * on its own, the other partitions of the request are written (a `PartialSendError` says which).
 */
class SizeLimitedTarget implements RecordSink {
  connected = true
  readonly logs = new Map<string, string[]>()
  /** Record count per partition of each request. */
  readonly requests: Array<Record<string, number>> = []
  refusals = 0
  forwardedWrites = 0

  constructor (readonly maxMessageBytes: number) {}

  async start (): Promise<void> {}
  async stop (): Promise<void> {}

  async send (writes: readonly PartitionWrite[]): Promise<PartitionAck[]> {
    const partitions = new Map<string, { topic: string, partition: number, records: KafkaRecord[], forwardedBytes: number }>()
    for (const write of writes) {
      const key = partitionKey(write.topic, write.partition)
      const entry = partitions.get(key) ?? { topic: write.topic, partition: write.partition, records: [], forwardedBytes: 0 }
      partitions.set(key, entry)
      const forwarded = write.forwarded as FakeForwardedBatch | undefined
      if (forwarded !== undefined) entry.forwardedBytes += forwarded.sizeBytes
      entry.records.push(...(forwarded?.records ?? write.records))
    }
    this.requests.push(Object.fromEntries([...partitions].map(([key, p]) => [key, p.records.length])))
    const written: PartitionAck[] = []
    const failed: PartitionFailure[] = []
    for (const [key, { topic, partition, records, forwardedBytes }] of partitions) {
      const size = forwardedBytes > 0 ? forwardedBytes : await batchSizeBytes(records)
      if (size > this.maxMessageBytes) {
        failed.push({
          topic,
          partition,
          error: new MirrorError(ErrorCodes.SEND_FAILED, `batch of ${size} bytes too large`, { kafkaCode: 'MESSAGE_TOO_LARGE' }),
        })
        continue
      }
      const log = this.logs.get(key) ?? []
      this.logs.set(key, log)
      written.push({ topic, partition, baseOffset: BigInt(log.length) })
      for (const record of records) log.push(record.offset)
      if (forwardedBytes > 0) this.forwardedWrites++
    }
    if (failed.length > 0) {
      this.refusals++
      throw new PartialSendError((failed[0] as PartitionFailure).error, written, failed)
    }
    return written
  }
}

interface Run {
  readonly acknowledged: Array<{ batch: MirrorBatch, segments: readonly AckSegment[], recordsAcked: number }>
  readonly skipped: Array<{ batch: MirrorBatch, index: number, error: MirrorError }>
  readonly routed: MirrorBatch[]
  readonly done: Promise<void>
}

/** One producer lane writing `batches` (then the queue closes) to `sink`. */
function mirror (batches: readonly MirrorBatch[], sink: RecordSink, options: { abortOnSendFailure?: boolean, maxRequestBytes?: number } = {}): Run {
  const queue = new BoundedQueue<MirrorBatch>(1e9, 1e12, { keyOf: b => partitionKey(b.targetTopic, b.partition) })
  const run: Omit<Run, 'done'> = { acknowledged: [], skipped: [], routed: [] }
  const worker = new ProducerWorker(plainLane(queue, 0), sink, {
    maxRequestBytes: options.maxRequestBytes ?? 1_048_576,
    requestTimeoutMs: 1_000,
    abortOnSendFailure: options.abortOnSendFailure ?? true,
    signal: new AbortController().signal,
  }, {
    acknowledged: (batch, segments, _ackTimeMs, recordsAcked) => run.acknowledged.push({ batch, segments, recordsAcked }),
    skipped: (batch, index, error) => run.skipped.push({ batch, index, error }),
    produceRequest: () => {},
    retry: () => {},
    routed: batch => run.routed.push(batch),
  }, silentLogger)
  const done = (async () => {
    for (const b of batches) await queue.push(b)
    queue.close()
    await worker.run()
  })()
  return { ...run, done }
}

const offsets = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => String(from + i))

test('requests are cut by encoded size: a catch-up of small records stays within max.message.bytes and is never refused', { timeout: 30_000 }, async () => {
  // 1.25 MB of 50-byte values in one partition: by payload bytes 1 MiB fits a request, encoded it does not.
  const batches = Array.from({ length: 25 }, (_, i) => batch(0, i * 1_000, 1_000, 50))
  const target = new SizeLimitedTarget(1_048_588)
  const run = mirror(batches, target)
  await run.done
  assert.equal(target.refusals, 0)
  assert.ok(target.requests.length <= 3, `${target.requests.length} requests`)
  assert.deepEqual(target.logs.get(partitionKey('t', 0)), offsets(0, 25_000))
  assert.equal(run.acknowledged.length, 25)
})

test('a partition refused as too large is written in halves, in order, each record once; its sibling is written once', { timeout: 30_000 }, async () => {
  // The topic takes 100 kB batches; the worker does not know it (Kafka's default assumed).
  const batches = [batch(0, 0, 2_000, 300), batch(1, 0, 10, 300), batch(0, 2_000, 1_000, 300)]
  const target = new SizeLimitedTarget(100_000)
  const run = mirror(batches, target)
  await run.done
  assert.deepEqual(target.logs.get(partitionKey('t', 0)), offsets(0, 3_000))
  assert.deepEqual(target.logs.get(partitionKey('t', 1)), offsets(0, 10))
  assert.ok(target.requests.length < 40, `${target.requests.length} requests`)
  // Each batch acknowledged once, its segments covering its records at their target offsets.
  assert.equal(run.acknowledged.length, 3)
  for (const { batch: acked, segments, recordsAcked } of run.acknowledged) {
    assert.equal(recordsAcked, acked.records.length)
    const log = target.logs.get(partitionKey('t', acked.partition)) as string[]
    let covered = 0
    for (const segment of segments) {
      assert.equal(segment.from, covered)
      for (let i = 0; i < segment.count; i++) assert.equal(log[Number(segment.targetBaseOffset) + i], acked.records[segment.from + i]?.offset)
      covered += segment.count
    }
    assert.equal(covered, acked.records.length)
  }
})

test(
  'a single record larger than the topic takes stops the flow naming its source offset; the records before it are acknowledged',
  { timeout: 30_000 },
  async () => {
    const held = batch(0, 0, 8, 100)
    const large = { ...held, records: held.records.map((r, i) => (i === 5 ? { ...r, value: Buffer.alloc(5_000) } : r)) }
    const target = new SizeLimitedTarget(2_000)
    const run = mirror([large], target)
    await assert.rejects(
      run.done,
      (error: unknown) => error instanceof MirrorError && /cannot write t partition 0 offset 5 to t: MESSAGE_TOO_LARGE/.test(error.message)
    )
    assert.deepEqual(target.logs.get(partitionKey('t', 0)), offsets(0, 5))
    assert.deepEqual(
      run.acknowledged.map(a => a.recordsAcked),
      [5]
    )
  }
)

test('abort.on.send.failure=false: the record too large is skipped, the rest written once and the batch acknowledged', { timeout: 30_000 }, async () => {
  const held = batch(0, 0, 8, 100)
  const large = { ...held, records: held.records.map((r, i) => i === 5 ? { ...r, value: Buffer.alloc(5_000) } : r) }
  const target = new SizeLimitedTarget(2_000)
  const run = mirror([large], target, { abortOnSendFailure: false })
  await run.done
  assert.deepEqual(target.logs.get(partitionKey('t', 0)), ['0', '1', '2', '3', '4', '6', '7'])
  assert.deepEqual(run.skipped.map(s => s.index), [5])
  assert.equal(run.acknowledged.length, 1)
  assert.equal(run.acknowledged[0]?.recordsAcked, 8)
  assert.deepEqual(run.acknowledged[0]?.segments.map(s => [s.from, s.count]), [[0, 5], [6, 2]])
})

test('mergeable forwarded batches joined into one and refused as too large are written in halves, still forwarded', { timeout: 30_000 }, async () => {
  // Eight forwarded batches of 1,000 bytes each; the topic takes 2,500.
  const batches = Array.from({ length: 8 }, (_, i) => forwardedBatch(0, i * 10, 10))
  const target = new SizeLimitedTarget(2_500)
  const run = mirror(batches, target)
  await run.done
  assert.deepEqual(target.logs.get(partitionKey('t', 0)), offsets(0, 80))
  assert.deepEqual(run.routed, [])
  assert.equal(target.forwardedWrites, 4)
  assert.equal(run.acknowledged.length, 8)
})
