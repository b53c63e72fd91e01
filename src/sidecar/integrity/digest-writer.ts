import type { DigestConfig, FlowConfig } from '../../config/mirror-config.js'
import { InternalTopicWriter, type InternalRecord } from '../../kafka/internal-topic.js'
import { sourceOffsetAt, type MirrorBatch } from '../../ports/mirror-batch.js'
import type { ForwardedBatch } from '../../ports/forwarded-batch.js'
import type { AckSegment } from '../../ports/ports.js'
import { stopFlushingWriter } from '../../shared/deadline.js'
import type { KafkaRecord } from '../../shared/kafka-record.js'
import type { Logger } from '../../shared/logger.js'
import { partitionKey } from '../../shared/partition-key.js'
import { SerialQueue } from '../../shared/serial-queue.js'
import type { HoldingListener } from '../pipeline/flow-ack-listener.js'
import { DigestTracker, type DigestedRecord } from './digest-tracker.js'
import { encodeDigest, type RangeDigest } from '../../mirror-topics/range-digest.js'
import { recordHash, wireRecordHash } from '../../mirror-topics/record-digest.js'

/** How long `stop()` waits for a write in flight, and then for the client to disconnect. */
const STOP_BOUND_MS = 2_000

export interface DigestWriterOptions {
  readonly logger: Logger
  /** Hears every digest once it is durable (the continuous audit samples them). */
  readonly onWritten?: (digests: readonly RangeDigest[]) => void
}

function digested (records: readonly KafkaRecord[], batch: MirrorBatch, segment: AckSegment): DigestedRecord[] {
  const out: DigestedRecord[] = new Array(segment.count)
  for (let i = 0; i < segment.count; i++) {
    const index = segment.from + i
    out[i] = { sourceOffset: sourceOffsetAt(batch, index), hash: recordHash(records[index] as KafkaRecord) }
  }
  return out
}

/** `digestRecord(r).hash` of each record of a forwarded batch, read from its bytes without building records where the batch can. */
async function forwardedHashes (forwarded: ForwardedBatch): Promise<number[]> {
  const hashes: number[] = []
  if (forwarded.visitRecords !== undefined) {
    await forwarded.visitRecords((key, value, headers, timestampMs) => { hashes.push(wireRecordHash(key, value, headers, timestampMs)) })
  } else {
    for (const record of await forwarded.decode()) hashes.push(recordHash(record))
  }
  if (hashes.length !== forwarded.recordCount) throw new Error(`the batch holds ${hashes.length} records where its header says ${forwarded.recordCount}`)
  return hashes
}

/**
 * Records a digest of what the mirror wrote (`RangeDigest`: key, value, headers, timestamp, in
 * target order, per run of at most `rangeRecords` records) and writes the digests to the digests
 * topic on the target (`flow.digests.topic`, created compacted with one partition if missing).
 * Decoded batches are hashed when acknowledged; the records of a forwarded batch (pass-through)
 * are read from its bytes once after its acknowledgement (`ForwardedBatch.visitRecords`: no
 * record objects), in order with its partition's other batches, never on the produce path.
 * Guarantee: when `flush()` resolves, the digests of every record acknowledged before the call
 * are durable (acks=all); the flow awaits it before each source commit, so a committed record
 * has its digest (except the records of a forwarded batch that could not be read, logged as an
 * error: the copy is not held up for its digest). `start()` before the flow, `stop()` after it; `stop()` once-only.
 */
export class DigestWriter implements HoldingListener {
  readonly #config: DigestConfig
  readonly #logger: Logger
  readonly #onWritten: (digests: readonly RangeDigest[]) => void
  readonly #writer: InternalTopicWriter
  readonly #tracker: DigestTracker
  /** Per partition, the hashing of forwarded batches still running (and of batches queued behind them), one after the other. */
  readonly #hashing = new Map<string, SerialQueue>()
  /** Per batch acknowledged and not yet hashed, the run that hashes it (`heldUntil`). */
  readonly #runs = new WeakMap<MirrorBatch, Promise<void>>()
  readonly #flushes = new SerialQueue()
  #stopping: Promise<void> | undefined
  readonly #abort = new AbortController()

  constructor (flow: FlowConfig & { readonly digests: DigestConfig }, options: DigestWriterOptions) {
    this.#config = flow.digests
    this.#logger = options.logger.child({ flow: flow.name, component: 'digests' })
    this.#onWritten = options.onWritten ?? (() => { /* nobody listens */ })
    this.#tracker = new DigestTracker(flow.digests.rangeRecords)
    this.#writer = new InternalTopicWriter(flow.target, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  get topic (): string { return this.#config.topic }

  async start (): Promise<void> {
    await this.#writer.start()
    await this.#writer.ensureCompactedTopic(this.topic, { replicationFactor: this.#config.replicationFactor, key: 'offset-syncs.topic.replication.factor' })
  }

  acknowledged (batch: MirrorBatch, segments: readonly AckSegment[]): void {
    const key = partitionKey(batch.sourceTopic, batch.partition)
    const hashing = this.#hashing.get(key)
    const forwarded = batch.forwarded
    if (forwarded === undefined && hashing === undefined) {
      for (const segment of segments) {
        this.#tracker.record(batch.sourceTopic, batch.targetTopic, batch.partition, segment.targetBaseOffset, digested(batch.records, batch, segment))
      }
      return
    }
    // Behind a forwarded batch still being hashed, in order: digests follow target offsets.
    const queue = hashing ?? new SerialQueue()
    this.#hashing.set(key, queue)
    const run = queue.run(async () => {
      if (forwarded === undefined) {
        for (const segment of segments) {
          this.#tracker.record(batch.sourceTopic, batch.targetTopic, batch.partition, segment.targetBaseOffset, digested(batch.records, batch, segment))
        }
        return
      }
      const hashes = await forwardedHashes(forwarded)
      for (const segment of segments) {
        const out: DigestedRecord[] = new Array(segment.count)
        for (let i = 0; i < segment.count; i++) {
          out[i] = { sourceOffset: forwarded.baseOffset + BigInt(segment.from + i), hash: hashes[segment.from + i] as number }
        }
        this.#tracker.record(batch.sourceTopic, batch.targetTopic, batch.partition, segment.targetBaseOffset, out)
      }
    }).catch((error: unknown) => {
      // The copy itself is fine (the target took the batch); its records stay without a digest, and the next digest starts after them.
      this.#logger.error(
        `cannot read the records of a forwarded batch to digest them: ${batch.targetTopic} partition ${batch.partition} (source offsets ${batch.firstOffset}-${batch.nextOffset - 1n}) stays without digests (mirror-check verify --digests shows it as uncovered)`,
        { topic: batch.sourceTopic, partition: batch.partition, error: (error as Error).message }
      )
    })
    this.#runs.set(batch, run)
    void run.then(() => { if (queue.size === 0 && this.#hashing.get(key) === queue) this.#hashing.delete(key) })
  }

  /** The hashing of `batch` (and of its partition's batches before it) while it runs: the batch's bytes stay held until it settles (it never rejects). */
  heldUntil (batch: MirrorBatch): Promise<void> | undefined {
    return this.#runs.get(batch)
  }

  /** Writes the digests not yet durable (after the decoding of forwarded batches acknowledged before the call); calls run one after the other. */
  flush (): Promise<void> {
    const decoding = [...this.#hashing.values()].map(queue => queue.idle)
    return this.#flushes.run(async () => {
      await Promise.all(decoding)
      const digests = this.#tracker.unwritten()
      if (digests.length === 0) return
      const records: InternalRecord[] = digests.map(digest => encodeDigest(digest))
      await this.#writer.write(this.topic, records, { maxAttempts: 3, initialBackoffMs: 200, signal: this.#abort.signal })
      this.#tracker.markWritten(digests)
      this.#onWritten(digests)
      this.#logger.debug('digests written', { digests: digests.length })
    })
  }

  stop (boundMs = STOP_BOUND_MS): Promise<void> {
    const writing = { abort: this.#abort, flushing: this.#flushes.idle, writer: this.#writer }
    this.#stopping ??= stopFlushingWriter({ ...writing, what: 'digests', logger: this.#logger }, boundMs)
    return this.#stopping
  }
}
