import type { KafkaRecord } from '../shared/kafka-record.js'
import type { RecordHeader } from '../shared/record-header.js'
import { decompressRecords } from './kafkajs-internals.js'
import { Attributes, BATCH_HEADER_BYTES, BATCH_OFFSETS } from './record-batch-header.js'

/** Offsets and timestamps are computed as Numbers: exact below 2^53, far above any real offset or time in ms. */
const EXACT = Number.MAX_SAFE_INTEGER

function truncated (): never {
  throw new RangeError('record batch ends inside a record')
}

/**
 * The records of one whole v2 data batch (`batch`, header included; `sourceBaseOffset` its base
 * offset on the source when the header holds another, such as a forwarded batch rewritten for the target),
 * as kafkajs' patched decoder gives them (`decodeRecordBatch`): decimal offset and timestamp
 * (the batch's max timestamp for LogAppendTime), key, value and header values as views of the
 * (decompressed) records section, null for length -1, header names as strings, `headers` grouped
 * by name and `headerList` in wire order. Without kafkajs' decoder objects, Long arithmetic and
 * per-record decoders; undefined when an offset or timestamp would leave the exact range of a
 * Number (the caller then uses kafkajs' decoder). A truncated batch is a RangeError.
 */
export async function decodeBatchRecords (
  batch: Buffer,
  sourceBaseOffset: bigint = batch.readBigInt64BE(BATCH_OFFSETS.baseOffset)
): Promise<KafkaRecord[] | undefined> {
  if (batch.length < BATCH_HEADER_BYTES) throw new RangeError(`record batch of ${batch.length} bytes is shorter than its ${BATCH_HEADER_BYTES}-byte header`)
  const baseOffset = Number(sourceBaseOffset)
  const firstTimestamp = Number(batch.readBigInt64BE(BATCH_OFFSETS.firstTimestamp))
  const maxTimestamp = batch.readBigInt64BE(BATCH_OFFSETS.maxTimestamp)
  const lastOffsetDelta = batch.readInt32BE(BATCH_OFFSETS.lastOffsetDelta)
  if (Math.abs(baseOffset) + Math.abs(lastOffsetDelta) >= EXACT || Math.abs(firstTimestamp) >= EXACT / 2) return undefined
  const attributes = batch.readInt16BE(BATCH_OFFSETS.attributes)
  const count = batch.readInt32BE(BATCH_OFFSETS.recordCount)
  if (count <= 0) return []
  const logAppendTime = (attributes & Attributes.LOG_APPEND_TIME) !== 0 ? maxTimestamp.toString() : undefined
  const compressed = (attributes & Attributes.CODEC_MASK) !== 0
  const bytes = compressed ? await decompressRecords(attributes, batch.subarray(BATCH_HEADER_BYTES)) : batch.subarray(BATCH_HEADER_BYTES)
  const n = bytes.length
  let at = 0
  // Zigzag varints of up to 64 bits as Numbers (exact within 2^53).
  const varlong = (): number => {
    let result = 0
    let scale = 1
    for (;;) {
      if (at >= n) truncated()
      const byte = bytes[at++] as number
      result += (byte & 0x7f) * scale
      if ((byte & 0x80) === 0) break
      scale *= 128
    }
    return result % 2 === 0 ? result / 2 : -(result + 1) / 2
  }
  const field = (end: number): Buffer | null => {
    const length = varlong()
    if (length < 0) return null
    const start = at
    at += length
    if (at > end) truncated()
    return bytes.subarray(start, at)
  }
  const records: KafkaRecord[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const length = varlong()
    const end = at + length
    if (length < 0 || end > n) truncated()
    at++ // record attributes (unused)
    const timestampDelta = varlong()
    const offsetDelta = varlong()
    const key = field(end)
    const value = field(end)
    const headerCount = varlong()
    const headerList: RecordHeader[] = []
    const headers: Record<string, Buffer | null | Array<Buffer | null>> = {}
    for (let h = 0; h < headerCount; h++) {
      const name = field(end)
      const headerValue = field(end)
      // kafkajs reads a null name as null; Kafka never writes one.
      const headerKey = name === null ? null as unknown as string : name.toString('utf8')
      headerList.push({ key: headerKey, value: headerValue })
      const previous = Object.prototype.hasOwnProperty.call(headers, headerKey) ? headers[headerKey] : undefined
      const grouped = previous === undefined ? headerValue : Array.isArray(previous) ? previous.concat([headerValue]) : [previous, headerValue]
      // defineProperty, as kafkajs' decoder: a header named __proto__ is a plain property.
      Object.defineProperty(headers, headerKey, { value: grouped, enumerable: true, writable: true, configurable: true })
    }
    if (at > end) truncated()
    at = end
    records[i] = {
      offset: String(baseOffset + offsetDelta),
      timestamp: logAppendTime ?? String(firstTimestamp + timestampDelta),
      key,
      value,
      headers,
      headerList,
    }
  }
  return records
}
