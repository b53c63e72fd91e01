import type { AuditClient, FetchedBatches, Isolation } from '../kafka/audit-client.js'
import { RawRecordBatch, WireRecord } from '../kafka/raw-record-batch.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import { digestRecord, digestWireRecord, type RecordDigest } from './record-digest.js'

export interface PartitionReaderOptions {
  /** Bytes asked per Fetch; default 4 MiB (the broker returns at least one batch). */
  readonly fetchMaxBytes?: number
  /** Default `read_committed`: what a mirror copies. */
  readonly isolation?: Isolation
}

/** What one Fetch answer tells the reader loop: where to fetch next, and how far the partition goes. */
interface Fetched { readonly nextOffset: number, readonly highWatermark: number, readonly empty: boolean }

/**
 * Reads one partition between two offsets with direct Fetch requests, one request ahead of the
 * consumer of the chunks: memory holds at most two fetches whatever the partition size.
 */
export class PartitionReader {
  readonly #maxBytes: number
  readonly #isolation: Isolation

  constructor (readonly client: AuditClient, readonly topic: string, readonly partition: number, options: PartitionReaderOptions = {}) {
    this.#maxBytes = options.fetchMaxBytes ?? 4 * 1024 * 1024
    this.#isolation = options.isolation ?? 'read_committed'
  }

  /** Chunks of data records with `fromOffset <= offset < untilOffset`, in offset order. */
  async * chunks (fromOffset: number, untilOffset: number): AsyncGenerator<KafkaRecord[]> {
    const fetchAt = async (at: number) => {
      const fetched = await this.client.fetch(this.topic, this.partition, at, { maxBytes: this.#maxBytes, isolation: this.#isolation })
      return { nextOffset: fetched.nextOffset, highWatermark: fetched.highWatermark, empty: fetched.records.length === 0, fetched }
    }
    for await (const { fetched } of this.#fetches(fromOffset, untilOffset, fetchAt)) {
      const records = fetched.records.filter(r => Number(r.offset) < untilOffset)
      if (records.length > 0) yield records
    }
  }

  /**
   * Chunks of the digests of the data records with `fromOffset <= offset < untilOffset`, in
   * offset order: `chunks(...).map(digestRecord)` read from the batches' bytes, without records.
   */
  async * digestChunks (fromOffset: number, untilOffset: number): AsyncGenerator<RecordDigest[]> {
    const fetchAt = async (at: number) => {
      const fetched = await this.client.fetchBatches(this.topic, this.partition, at, { maxBytes: this.#maxBytes, isolation: this.#isolation })
      return { nextOffset: fetched.nextOffset, highWatermark: fetched.highWatermark, empty: fetched.batches.length === 0, fetched, at }
    }
    const cursor = new WireRecord()
    for await (const { fetched, at } of this.#fetches(fromOffset, untilOffset, fetchAt)) {
      const digests = await digestBatches(fetched, at, untilOffset, cursor)
      if (digests.length > 0) yield digests
    }
  }

  /** The Fetch answers from `fromOffset` until `untilOffset`; with `ahead` (the default) each fetch is sent before the previous answer is used. */
  async * #fetches<T extends Fetched> (fromOffset: number, untilOffset: number, fetchAt: (offset: number) => Promise<T>, ahead = true): AsyncGenerator<T> {
    let offset = fromOffset
    let pending = offset < untilOffset ? fetchAt(offset) : undefined
    try {
      while (pending !== undefined) {
        const fetched = await pending
        // A batch emptied by compaction or holding only aborted data still moves nextOffset; a fetch that moves nothing means the range is not readable yet.
        let next = fetched.nextOffset
        if (next <= offset) {
          if (fetched.highWatermark > offset && fetched.empty) next = offset + 1
          else {
            throw new MirrorError(
              ErrorCodes.KAFKA,
              `${this.topic}-${this.partition} on the ${this.client.connection.alias} cluster: no records readable at offset ${offset} (end ${fetched.highWatermark}); an open transaction or retention may hold it`
            )
          }
        }
        offset = next
        if (ahead) {
          pending = offset < untilOffset ? fetchAt(offset) : undefined
          yield fetched
        } else {
          pending = undefined
          yield fetched
          pending = offset < untilOffset ? fetchAt(offset) : undefined
        }
      }
    } finally {
      pending?.catch(() => { /* a reader stopped early leaves one prefetch in flight: its outcome no longer matters */ })
    }
  }

  /** Up to `count` data records at or after `fromOffset` and before `untilOffset`. */
  async records (fromOffset: number, untilOffset: number, count: number): Promise<KafkaRecord[]> {
    const out: KafkaRecord[] = []
    for await (const chunk of this.chunks(fromOffset, untilOffset)) {
      out.push(...chunk.slice(0, count - out.length))
      if (out.length >= count) break
    }
    return out
  }

  /**
   * Up to `count` digests of data records at or after `fromOffset` and before `untilOffset`
   * (`records(...).map(digestRecord)`): fetches of at most `LOOKUP_FETCH_BYTES`, one at a time,
   * and only the records wanted digested, since a lookup (the order aligner's) wants a few records
   * and a full-size fetch ahead would only delay the comparison's first fetch behind it.
   */
  async digests (fromOffset: number, untilOffset: number, count: number): Promise<RecordDigest[]> {
    const maxBytes = Math.min(this.#maxBytes, LOOKUP_FETCH_BYTES)
    const fetchAt = async (at: number) => {
      const fetched = await this.client.fetchBatches(this.topic, this.partition, at, { maxBytes, isolation: this.#isolation })
      return { nextOffset: fetched.nextOffset, highWatermark: fetched.highWatermark, empty: fetched.batches.length === 0, fetched, at }
    }
    const cursor = new WireRecord()
    const out: RecordDigest[] = []
    for await (const { fetched, at } of this.#fetches(fromOffset, untilOffset, fetchAt, false)) {
      out.push(...await digestBatches(fetched, at, untilOffset, cursor, count - out.length))
      if (out.length >= count) break
    }
    return out
  }
}

/** Bytes per Fetch of `PartitionReader.digests` (lookups of a few records). */
const LOOKUP_FETCH_BYTES = 256 * 1024

/** The digests of one Fetch answer's records with `fromOffset <= offset < untilOffset`, the first `limit` of them. */
async function digestBatches (
  fetched: FetchedBatches,
  fromOffset: number,
  untilOffset: number,
  cursor: WireRecord,
  limit = Number.POSITIVE_INFINITY
): Promise<RecordDigest[]> {
  const digests: RecordDigest[] = []
  const push = (record: WireRecord): void => {
    if (digests.length < limit) digests.push(digestWireRecord(record))
  }
  for (const batch of fetched.batches) {
    if (digests.length >= limit) break
    if (batch instanceof RawRecordBatch) await batch.visit(fromOffset, untilOffset, cursor, push)
    else if (Number(batch.offset) < untilOffset) digests.push(digestRecord(batch))
  }
  return digests
}
