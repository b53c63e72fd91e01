import type { KafkaRecord } from '../shared/kafka-record.js'
import type { ForwardedBatch } from './forwarded-batch.js'

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
  /** The decoded records; empty when the batch is forwarded undecoded. */
  readonly records: readonly KafkaRecord[]
  /** The source record batch itself, forwarded as it was fetched (pass-through). */
  readonly forwarded?: ForwardedBatch
  readonly firstOffset: bigint
  readonly nextOffset: bigint
  /** Sum of key, value and header sizes: what the queue's byte bound counts. */
  readonly bytes: number
  /** Time the batch was handed over by the consumer (ms since epoch). */
  readonly pollTimeMs: number
  /** The batch's span when tracing is on. */
  readonly span?: BatchSpan
}

/** Records in `batch`, forwarded or decoded. */
export function recordCount (batch: Pick<MirrorBatch, 'records' | 'forwarded'>): number {
  return batch.forwarded?.recordCount ?? batch.records.length
}

/** The source offset of record `index` of `batch`. */
export function sourceOffsetAt (batch: Pick<MirrorBatch, 'records' | 'forwarded'>, index: number): bigint {
  if (batch.forwarded !== undefined) return batch.forwarded.baseOffset + BigInt(index)
  return BigInt((batch.records[index] as KafkaRecord).offset)
}

/** Record timestamps of `batch` (ms since epoch): per record when decoded, the header's largest once per record when forwarded. */
export function recordTimestampsMs (batch: Pick<MirrorBatch, 'records' | 'forwarded'>, count = recordCount(batch)): number[] {
  const forwarded = batch.forwarded
  if (forwarded !== undefined) return new Array<number>(Math.min(count, forwarded.recordCount)).fill(forwarded.maxTimestampMs)
  const timestamps: number[] = []
  for (let i = 0; i < count; i++) timestamps.push(Number((batch.records[i] as KafkaRecord).timestamp))
  return timestamps
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
