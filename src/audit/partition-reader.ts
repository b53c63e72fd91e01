import type { AuditClient, Isolation } from '../kafka/audit-client.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { KafkaRecord } from '../shared/kafka-record.js'

export interface PartitionReaderOptions {
  /** Bytes asked per Fetch; default 4 MiB (the broker returns at least one batch). */
  readonly fetchMaxBytes?: number
  /** Default `read_committed`: what a mirror copies. */
  readonly isolation?: Isolation
}

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
    let offset = fromOffset
    const fetchAt = (at: number) => this.client.fetch(this.topic, this.partition, at, { maxBytes: this.#maxBytes, isolation: this.#isolation })
    let pending = offset < untilOffset ? fetchAt(offset) : undefined
    try {
    while (pending !== undefined) {
      const fetched = await pending
      // A batch emptied by compaction or holding only aborted data still moves nextOffset; a fetch that moves nothing means the range is not readable yet.
      let next = fetched.nextOffset
      if (next <= offset) {
        if (fetched.highWatermark > offset && fetched.records.length === 0) next = offset + 1
        else throw new MirrorError(ErrorCodes.KAFKA, `${this.topic}-${this.partition} on the ${this.client.connection.alias} cluster: no records readable at offset ${offset} (end ${fetched.highWatermark}); an open transaction or retention may hold it`)
      }
      offset = next
      pending = offset < untilOffset ? fetchAt(offset) : undefined
      const records = fetched.records.filter(r => Number(r.offset) < untilOffset)
      if (records.length > 0) yield records
    }
    } finally {
      // A reader stopped early leaves one prefetch in flight: its outcome no longer matters.
      pending?.catch(() => {})
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
}
