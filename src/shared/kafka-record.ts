import type { RecordHeader } from './record-header.js'

/** Header values grouped by name, as the Kafka client hands them over: bytes (or null), or several for a repeated name. */
export type HeaderValue = Buffer | string | null | ReadonlyArray<Buffer | string | null> | undefined

/**
 * A Kafka record as read from a partition: the project's one record type. The pipeline copies it
 * to the target as it is; the audit digests it. Offset and timestamp stay the decimal strings the
 * client decodes (exact past 2^53); bytes stay bytes, so a copy is byte-for-byte.
 */
export interface KafkaRecord {
  readonly offset: string
  readonly timestamp: string
  readonly key: Buffer | null
  readonly value: Buffer | null
  /** Grouped by name (the client's view; how repeated names interleave is lost here). */
  readonly headers?: Readonly<Record<string, HeaderValue>>
  /** Every header in wire order (from the patched decoder): what is written and compared when present. */
  readonly headerList?: readonly RecordHeader[]
}
