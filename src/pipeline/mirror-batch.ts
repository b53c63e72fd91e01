import type { KafkaRecord } from '../shared/kafka-record.js'

/** Tracing of a batch (see `tracing/mirror-tracer.ts`); absent when tracing is off. */
export interface BatchSpan {
  sendSpan: () => { retry: (event: { operation: string, errorCode: string, attempt?: number, backoffMs?: number }) => void, setTargetOffset: (offset: bigint) => void, end: (error?: unknown) => void }
  end: (error?: unknown) => void
}

/**
 * Consecutive records of one source partition, as fetched, on their way to the target.
 * `nextOffset` is the offset a commit writes once every record here is acknowledged: it is past
 * the last record and past any control records or compacted gaps the fetch skipped.
 */
export interface MirrorBatch {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly records: readonly KafkaRecord[]
  readonly firstOffset: bigint
  readonly nextOffset: bigint
  /** Sum of key, value and header sizes: what the queue's byte bound counts. */
  readonly bytes: number
  /** Time the batch was handed over by the consumer (ms since epoch). */
  readonly pollTimeMs: number
  /** The batch's span when tracing is on. */
  readonly span?: BatchSpan
}

/** Bytes a record holds in memory, as the queue counts them. */
export function recordBytes (record: KafkaRecord): number {
  let bytes = (record.key?.length ?? 0) + (record.value?.length ?? 0)
  if (record.headerList !== undefined) {
    for (const header of record.headerList) bytes += header.key.length + (header.value?.length ?? 0)
    return bytes
  }
  const headers = record.headers
  if (headers !== undefined) {
    for (const name in headers) {
      const value = headers[name]
      bytes += name.length
      if (value == null) continue
      if (typeof value === 'string' || Buffer.isBuffer(value)) bytes += value.length
      else for (const item of value as ReadonlyArray<Buffer | string | null>) bytes += item?.length ?? 0
    }
  }
  return bytes
}
