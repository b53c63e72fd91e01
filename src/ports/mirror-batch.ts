import type { KafkaRecord } from '../shared/kafka-record.js'
import type { ForwardedBatch } from './forwarded-batch.js'

/** Tracing of a batch (see `sidecar/tracing/mirror-tracer.ts`); absent when tracing is off. */
export interface BatchSpan {
  sendSpan: () => {
    retry: (event: { operation: string, errorCode: string, attempt?: number, backoffMs?: number }) => void
    setTargetOffset: (offset: bigint) => void
    end: (error?: unknown) => void
  }
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
  /** Sum of key, value and header sizes (the forwarded batch's size): what a produce request carries of it. */
  readonly bytes: number
  /**
   * The buffers the batch's bytes are views of (`retainedBuffers`): its fetch response, the
   * decompressed batch its records were read from. The queue's byte bound counts each whole, once,
   * instead of `bytes` (`BoundedQueue`, Invariant A). Absent: `bytes` is what it holds.
   */
  readonly retains?: readonly ArrayBufferLike[]
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

/** Collects the distinct buffers views are slices of, leaving out those of Node's pool of small allocations. */
class Retained {
  readonly buffers: ArrayBufferLike[] = []
  #last: ArrayBufferLike | undefined

  add (view: Uint8Array | string | null | undefined): void {
    if (view == null || typeof view === 'string') return
    const buffer = view.buffer
    if (buffer === this.#last) return
    this.#last = buffer
    if (buffer.byteLength > Buffer.poolSize && !this.buffers.includes(buffer)) this.buffers.push(buffer)
  }
}

/**
 * The distinct buffers (`ArrayBuffer`s) that `views` are slices of: what holding the views keeps
 * alive, whole (a forwarded batch sliced from a fetch response keeps the response). A buffer of at
 * most `Buffer.poolSize` bytes (Node's shared pool of small allocations) is left out: the views'
 * own bytes stand for it.
 */
export function retainedBuffers (views: ReadonlyArray<Uint8Array | null>): ArrayBufferLike[] {
  const retained = new Retained()
  for (const view of views) retained.add(view)
  return retained.buffers
}

/** `retainedBuffers` of every byte field of `records` (keys, values, headers): a decoded record of an uncompressed batch keeps its fetch response. */
export function recordsRetain (records: readonly KafkaRecord[]): ArrayBufferLike[] {
  const retained = new Retained()
  for (const record of records) {
    retained.add(record.key)
    retained.add(record.value)
    if (record.headerList !== undefined) {
      for (const header of record.headerList) retained.add(header.value)
      continue
    }
    for (const name in record.headers) {
      const value = record.headers[name]
      if (Array.isArray(value)) for (const item of value as ReadonlyArray<Buffer | string | null>) retained.add(item)
      else retained.add(value as Buffer | string | null | undefined)
    }
  }
  return retained.buffers
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

/**
 * Bounds of a record's offset delta and timestamp delta in a v2 record batch, as varint bytes:
 * offset deltas below 2^27 (records per batch) and timestamp deltas below 2^41 ms (the records of
 * one batch within 69 years of each other).
 */
const OFFSET_DELTA_BYTES = 4
const TIMESTAMP_DELTA_BYTES = 6
/** The v2 record batch header: one per partition per produce request. */
export const BATCH_HEADER_BYTES = 61

/** Bytes of a zigzag varint of `value`. */
function varintBytes (value: number): number {
  let zigzag = value >= 0 ? value * 2 : -value * 2 - 1
  let bytes = 1
  while (zigzag >= 128) {
    zigzag = Math.floor(zigzag / 128)
    bytes++
  }
  return bytes
}

/** Bytes of a length-prefixed field (length -1 for null). */
function fieldBytes (length: number | undefined): number {
  return length === undefined ? varintBytes(-1) : varintBytes(length) + length
}

function byteLength (value: Buffer | Uint8Array | string | null | undefined): number | undefined {
  if (value == null) return undefined
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length
}

/** Bytes `record` takes in a v2 record batch, at most (uncompressed), as kafkajs' record encoder writes it. */
function encodedRecordBytes (record: KafkaRecord): number {
  let headers = 0
  let headerBytes = 0
  const header = (name: string | Buffer | Uint8Array, value: Buffer | Uint8Array | string | null | undefined): void => {
    headers++
    headerBytes += fieldBytes(byteLength(name)) + fieldBytes(byteLength(value))
  }
  if (record.headerList !== undefined) {
    for (const h of record.headerList) header(h.key, h.value)
  } else if (record.headers !== undefined) {
    for (const name in record.headers) {
      const value = record.headers[name]
      if (Array.isArray(value)) for (const item of value as ReadonlyArray<Buffer | string | null>) header(name, item)
      else header(name, value as Buffer | string | null | undefined)
    }
  }
  const body =
    1 +
    TIMESTAMP_DELTA_BYTES +
    OFFSET_DELTA_BYTES +
    fieldBytes(byteLength(record.key)) +
    fieldBytes(byteLength(record.value)) +
    varintBytes(headers) +
    headerBytes
  return varintBytes(body) + body
}

/**
 * Bytes the records of `batch` take in a produce request, batch header excluded: the forwarded
 * batch's own size, or the decoded records' encoded size at most (uncompressed). The queue counts
 * payload bytes (`bytes`), which for small records is well below this (1 MiB of 50-byte records
 * encodes to about 1.25 MB).
 */
export function encodedBytes (batch: Pick<MirrorBatch, 'records' | 'forwarded'>): number {
  if (batch.forwarded !== undefined) return batch.forwarded.sizeBytes
  let bytes = 0
  for (const record of batch.records) bytes += encodedRecordBytes(record)
  return bytes
}
