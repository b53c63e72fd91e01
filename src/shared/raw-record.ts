import type { RecordHeader } from './record-header.js'

/** A record as read from Kafka: bytes kept as bytes, header values in arrival order per name. */
export interface RawRecord {
  readonly offset: number
  readonly timestamp: number
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: Readonly<Record<string, Buffer | string | null | ReadonlyArray<Buffer | string | null> | undefined>>
  /** Every header in wire order; when present it is what is compared (it tells interleaved repeated names apart). */
  readonly headerList?: readonly RecordHeader[]
}
