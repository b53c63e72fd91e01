import { ErrorCodes, MirrorError } from '../shared/errors.js'

/** One record of an internal topic: UTF-8 key and value; a null value is a tombstone. */
/** A bookkeeping record: JSON text (the sidecar's own topics) or bytes (MirrorMaker 2's records). */
export interface InternalRecord {
  readonly key: string | Buffer
  readonly value: string | Buffer | null
}

/**
 * Upper bound of what one record adds to a v2 record batch beyond its key and value bytes:
 * length (varint, 5), attributes (1), timestamp delta (varlong, 10), offset delta (5), key and
 * value lengths (5 each), header count (1).
 */
const RECORD_OVERHEAD_BYTES = 32
/**
 * What the broker counts against `max.message.bytes` beyond the records: the v2 batch header
 * (61 bytes) and the log entry overhead (offset and size, 12 bytes).
 */
export const BATCH_OVERHEAD_BYTES = 73
/**
 * What a produce request adds around its one batch, bounded: request header with the client id,
 * transactional id, acks, timeout, topic name (at most 249 bytes), partition and batch framing.
 */
export const REQUEST_OVERHEAD_BYTES = 1024
/** Kafka's default `message.max.bytes` (broker) and so of a topic's `max.message.bytes`. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588

/** The limits one produce request of records to one partition must stay within. */
export interface RequestLimits {
  /** Producer `max.request.size`; Kafka's default 1048576. */
  readonly maxRequestSizeBytes: number
  /** The topic's `max.message.bytes` (one batch, as the broker counts it); Kafka's default 1048588. */
  readonly maxMessageBytes: number
}

/** Bytes one record takes in a batch, at most. */
export function recordSizeBytes (record: InternalRecord): number {
  return Buffer.byteLength(record.key, 'utf8') + (record.value === null ? 0 : Buffer.byteLength(record.value, 'utf8')) + RECORD_OVERHEAD_BYTES
}

/** Bytes of records one request may carry within `limits`: the smaller limit minus its overhead. */
export function recordBytesPerRequest (limits: RequestLimits): number {
  return Math.min(limits.maxRequestSizeBytes - REQUEST_OVERHEAD_BYTES, limits.maxMessageBytes - BATCH_OVERHEAD_BYTES)
}

/**
 * Splits `records` into consecutive chunks, in order, each of at most `maxRecordBytes` (as
 * `recordSizeBytes` counts them), so each chunk is one produce request the broker accepts.
 * Throws a non-retriable `MirrorError` naming `topic` when one record alone does not fit.
 */
export function splitRecords<R extends InternalRecord> (records: readonly R[], maxRecordBytes: number, topic: string): R[][] {
  const chunks: R[][] = []
  let chunk: R[] = []
  let chunkBytes = 0
  for (const record of records) {
    const size = recordSizeBytes(record)
    if (size > maxRecordBytes) {
      throw new MirrorError(
        ErrorCodes.SEND_FAILED,
        `a record of ${size} bytes (key ${(typeof record.key === 'string' ? record.key : record.key.toString('hex')).slice(0, 200)}) does not fit in one produce request to ${topic}, which takes ${maxRecordBytes} bytes of records: raise max.message.bytes of ${topic} and the producer's max.request.size`
      )
    }
    if (chunk.length > 0 && chunkBytes + size > maxRecordBytes) {
      chunks.push(chunk)
      chunk = []
      chunkBytes = 0
    }
    chunk.push(record)
    chunkBytes += size
  }
  if (chunk.length > 0) chunks.push(chunk)
  return chunks
}
