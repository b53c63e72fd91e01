import type { BatchForwardingHook } from './kafkajs-internals.js'
import { decompressRecords } from './kafkajs-internals.js'
import { Attributes, BATCH_HEADER_BYTES, BATCH_OFFSETS } from './record-batch-header.js'

/**
 * One record of a raw batch as positions in `bytes` (the batch's records section, decompressed):
 * no Buffer per field and no record object. The visitor gets the same cursor for every record of
 * a batch; what it keeps it must copy. A length of -1 is a null key, value or header value.
 * Header `h` is `headers[4h..4h+3]`: name start, name length, value start, value length.
 */
export class WireRecord {
  bytes: Buffer = Buffer.alloc(0)
  offset = 0
  timestampMs = 0
  keyStart = 0
  keyLength = -1
  valueStart = 0
  valueLength = -1
  headerCount = 0
  headers: Int32Array = new Int32Array(16)
}

/** Called once per record with the cursor on it. */
export type WireRecordVisitor = (record: WireRecord) => void

/**
 * A fetched v2 data batch left undecoded (a view of the Fetch response, not a copy): the
 * `forwardedBatch` of the message standing for the whole batch among kafkajs' fetched messages,
 * so that kafkajs' aborted-transaction filter applies to it as to decoded records. Read with `visit`.
 */
export class RawRecordBatch {
  readonly baseOffset: number
  /** Past the batch's last offset (compacted gaps included). */
  readonly endOffset: number

  constructor (readonly bytes: Buffer) {
    const O = BATCH_OFFSETS
    this.baseOffset = Number(bytes.readBigInt64BE(O.baseOffset))
    this.endOffset = this.baseOffset + bytes.readInt32BE(O.lastOffsetDelta) + 1
  }

  /**
   * Hands `visit` each record with `fromOffset <= offset < untilOffset`, in order, with the
   * fields kafkajs' decoder would give it: the timestamp is the batch's base timestamp plus the
   * record's delta, or the batch's max timestamp for LogAppendTime (kafkajs' rule). Compressed
   * batches are decompressed first (the only await). Resolves with the records visited; a
   * truncated batch is a RangeError.
   */
  async visit (fromOffset: number, untilOffset: number, cursor: WireRecord, visit: WireRecordVisitor): Promise<number> {
    const batch = this.bytes
    if (batch.length < BATCH_HEADER_BYTES) throw new RangeError(`record batch of ${batch.length} bytes is shorter than its ${BATCH_HEADER_BYTES}-byte header`)
    const attributes = batch.readInt16BE(BATCH_OFFSETS.attributes)
    const baseTimestamp = Number(batch.readBigInt64BE(BATCH_OFFSETS.firstTimestamp))
    const logAppendTime = (attributes & Attributes.LOG_APPEND_TIME) !== 0 ? Number(batch.readBigInt64BE(BATCH_OFFSETS.maxTimestamp)) : undefined
    const count = batch.readInt32BE(BATCH_OFFSETS.recordCount)
    const section =
      (attributes & Attributes.CODEC_MASK) === 0 ? batch.subarray(BATCH_HEADER_BYTES) : await decompressRecords(attributes, batch.subarray(BATCH_HEADER_BYTES))
    return visitSection(section, count, this.baseOffset, baseTimestamp, logAppendTime, fromOffset, untilOffset, cursor, visit)
  }
}

/** A `forwardRecordBatch` hook (`AuditClient` fetches): every v2 data batch as a `RawRecordBatch`; control batches and older formats are left to kafkajs. */
export const rawBatchHook: BatchForwardingHook = bytes => {
  if (bytes.length < BATCH_HEADER_BYTES || bytes.readInt8(BATCH_OFFSETS.magic) !== 2) return undefined
  if ((bytes.readInt16BE(BATCH_OFFSETS.attributes) & Attributes.CONTROL) !== 0) return undefined
  return new RawRecordBatch(bytes)
}

function truncated (): never {
  throw new RangeError('record batch ends inside a record')
}

function visitSection (
  bytes: Buffer,
  count: number,
  baseOffset: number,
  baseTimestamp: number,
  logAppendTime: number | undefined,
  fromOffset: number,
  untilOffset: number,
  cursor: WireRecord,
  visit: WireRecordVisitor
): number {
  const n = bytes.length
  let at = 0
  let visited = 0
  // Zigzag varints of up to 64 bits as Numbers (exact within 2^53), inlined for speed.
  const varlong = (): number => {
    let result = 0
    let scale = 1
    for (;;) {
      if (at >= n) truncated()
      const byte = bytes[at++]!
      result += (byte & 0x7f) * scale
      if ((byte & 0x80) === 0) break
      scale *= 128
    }
    return result % 2 === 0 ? result / 2 : -(result + 1) / 2
  }
  cursor.bytes = bytes
  for (let i = 0; i < count; i++) {
    const length = varlong()
    const end = at + length
    if (length < 0 || end > n) truncated()
    at++ // record attributes (unused)
    const timestampDelta = varlong()
    const offset = baseOffset + varlong()
    if (offset < fromOffset || offset >= untilOffset) {
      at = end
      continue
    }
    cursor.offset = offset
    cursor.timestampMs = logAppendTime ?? baseTimestamp + timestampDelta
    let fieldLength = varlong()
    cursor.keyStart = at
    cursor.keyLength = fieldLength
    if (fieldLength > 0) at += fieldLength
    fieldLength = varlong()
    cursor.valueStart = at
    cursor.valueLength = fieldLength
    if (fieldLength > 0) at += fieldLength
    const headerCount = Math.max(0, varlong())
    if (cursor.headers.length < 4 * headerCount) cursor.headers = new Int32Array(4 * headerCount)
    const headers = cursor.headers
    for (let h = 0; h < headerCount; h++) {
      fieldLength = varlong()
      headers[4 * h] = at
      headers[4 * h + 1] = Math.max(0, fieldLength)
      if (fieldLength > 0) at += fieldLength
      fieldLength = varlong()
      headers[4 * h + 2] = at
      headers[4 * h + 3] = fieldLength
      if (fieldLength > 0) at += fieldLength
    }
    cursor.headerCount = headerCount
    if (at > end) truncated()
    at = end
    visit(cursor)
    visited++
  }
  return visited
}
