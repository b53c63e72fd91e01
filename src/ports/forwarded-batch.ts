import type { KafkaRecord } from '../shared/kafka-record.js'

/**
 * A source record batch that goes to the target as it was fetched (pass-through, MirrorMaker 1's
 * shallow iteration): its records are neither decompressed nor decoded. The record source makes
 * it; the sink writes it to the same partition, rewriting only the batch header. Its records have
 * the consecutive source offsets `baseOffset .. baseOffset + recordCount - 1` (no gaps).
 */
export interface ForwardedBatch {
  readonly baseOffset: bigint
  readonly recordCount: number
  /** The batch's size on the wire, header included: what the queue's byte bound counts. */
  readonly sizeBytes: number
  /** Timestamps of the batch header (CreateTime, ms since epoch): the first record's and the largest. */
  readonly firstTimestampMs: number
  readonly maxTimestampMs: number
  /** The batch's codec: none, gzip, snappy, lz4 or zstd. */
  readonly codec: string
  /**
   * True when consecutive batches of a partition like this one can be written as one batch
   * (uncompressed: the sink renumbers the record deltas without decoding the records), so
   * several small batches fit one produce request.
   */
  readonly mergeable: boolean
  /**
   * True when the source's batch was recompressed into the target's codec on its way (a codec
   * change: its records' bytes are the source's, only their compression differs).
   */
  readonly transcoded?: boolean
  /**
   * The batch's size as fetched from the source, when the mirror transcoded it (`sizeBytes` is
   * then the recompressed size); undefined when `sizeBytes` is the fetched size. The throughput
   * limit and the consumed-bytes count charge the fetched size (`fetchedBytes`).
   */
  readonly fetchedSizeBytes?: number
  /** The buffers the batch's bytes are views of (its fetch response: `retainedBuffers`), which the queue counts whole. */
  readonly retains?: readonly ArrayBufferLike[]
  /** The records, decoded (for the deep path: a batch that must be split, trimmed or changed). */
  decode: () => Promise<readonly KafkaRecord[]>
  /**
   * Hands each record's key, value, headers (wire order) and timestamp to `visit`, in order,
   * without building records (digests of forwarded batches); resolves with the record count.
   * Optional: without it, `decode` serves.
   */
  visitRecords?: (visit: RecordFieldsVisitor) => Promise<number>
}

/** One header as on the wire: the name's UTF-8 bytes and the value (null when absent). */
export interface WireHeader {
  readonly key: Uint8Array
  readonly value: Uint8Array | null
}

/** Receives the fields of one record; the arrays are views valid only during the call. */
export type RecordFieldsVisitor = (key: Uint8Array | null, value: Uint8Array | null, headers: readonly WireHeader[], timestampMs: number) => void

/** Which way a batch went, for the metrics. */
export type BatchPath = 'pass_through' | 'transcoded' | 'deep'

/**
 * Why a fetched batch took the deep path. `offset_gaps`: a compacted source (the broker refuses a
 * renumbered count); `log_append_time` and `delete_horizon`: header bits the target must set
 * itself; `too_large`: more than one produce request (`max.request.size`) may carry; `codec`: the
 * target's `compression.type` differs from the batch's; `not_v2`: an old message format;
 * `starts_before_position`: the batch begins before the next offset to mirror;
 * `refused_by_target`: the target refused the batch as it was (too large, for example);
 * `message_handler` and `disabled`: the flow decodes every record.
 */
export type DeepPathReason =
  | 'offset_gaps' | 'log_append_time' | 'delete_horizon' | 'too_large' | 'codec' | 'not_v2'
  | 'starts_before_position' | 'refused_by_target' | 'message_handler' | 'disabled'

/** The bytes `batch` took on the wire from the source, before any transcoding. */
export function fetchedBytes (batch: Pick<ForwardedBatch, 'sizeBytes' | 'fetchedSizeBytes'>): number {
  return batch.fetchedSizeBytes ?? batch.sizeBytes
}
