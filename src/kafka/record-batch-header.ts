/**
 * The header of a Kafka record batch (magic v2), as bytes: where its fields are, and the rewrite
 * a forwarded batch needs before the target takes it (see ../shared/REFERENCE.md section 8 and
 * Kafka's `DefaultRecordBatch`). Pure functions over a Buffer holding one whole batch.
 */
import { crc32c } from './crc32c.js'
import { crc32cPrefixReplaced } from './crc32c-combine.js'

export const BATCH_OFFSETS = {
  baseOffset: 0,
  length: 8,
  partitionLeaderEpoch: 12,
  magic: 16,
  crc: 17,
  attributes: 21,
  lastOffsetDelta: 23,
  firstTimestamp: 27,
  maxTimestamp: 35,
  producerId: 43,
  producerEpoch: 51,
  baseSequence: 53,
  recordCount: 57,
} as const

/** Bytes before the records: the whole header, the record count included. */
export const BATCH_HEADER_BYTES = 61
/** Base offset and length: the part of a batch its length field does not count. */
export const BATCH_PREFIX_BYTES = 12

export const Attributes = {
  CODEC_MASK: 0x07,
  LOG_APPEND_TIME: 0x08,
  TRANSACTIONAL: 0x10,
  CONTROL: 0x20,
  DELETE_HORIZON: 0x40,
} as const

export const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const

export interface BatchHeader {
  readonly baseOffset: bigint
  readonly magic: number
  readonly attributes: number
  readonly lastOffsetDelta: number
  readonly firstTimestamp: bigint
  readonly maxTimestamp: bigint
  readonly producerId: bigint
  readonly recordCount: number
}

/** The header of the batch at the start of `bytes` (which holds at least `BATCH_HEADER_BYTES`). */
export function readBatchHeader (bytes: Buffer): BatchHeader {
  const O = BATCH_OFFSETS
  return {
    baseOffset: bytes.readBigInt64BE(O.baseOffset),
    magic: bytes.readInt8(O.magic),
    attributes: bytes.readInt16BE(O.attributes),
    lastOffsetDelta: bytes.readInt32BE(O.lastOffsetDelta),
    firstTimestamp: bytes.readBigInt64BE(O.firstTimestamp),
    maxTimestamp: bytes.readBigInt64BE(O.maxTimestamp),
    producerId: bytes.readBigInt64BE(O.producerId),
    recordCount: bytes.readInt32BE(O.recordCount),
  }
}

/** What the mirror's producer puts into a forwarded batch's header. */
export interface ProducerFields {
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly baseSequence: number
  readonly transactional: boolean
}

/**
 * The batch in `bytes` (one whole v2 batch, not a control batch) as the target must take it from
 * the mirror's producer, without changing `bytes`: a new header (base offset 0 and leader epoch -1,
 * which the broker assigns; the producer's id, epoch and first sequence; the transactional bit set
 * only for the mirror's own transaction; the CRC over everything from the attributes on), then the
 * records of `bytes` (a view). `crcChecked`: the CRC `bytes` carries was checked against them (a
 * batch as fetched); the new CRC is then derived from it and the header fields alone
 * (`crc32cPrefixReplaced`), without reading the records again, and still covers them as the source
 * wrote them: a record changed in between fails the target's check. Else it is computed over them.
 * Sent as these two pieces, the records are never copied, and a request still in flight keeps its
 * bytes whatever a later request of the same batch writes.
 */
export function batchForTarget (bytes: Buffer, fields: ProducerFields, crcChecked = false): [header: Buffer, records: Buffer] {
  const O = BATCH_OFFSETS
  const header = Buffer.allocUnsafe(BATCH_HEADER_BYTES)
  bytes.copy(header, 0, 0, BATCH_HEADER_BYTES)
  header.writeBigInt64BE(0n, O.baseOffset)
  header.writeInt32BE(-1, O.partitionLeaderEpoch)
  const attributes = header.readInt16BE(O.attributes) & ~Attributes.TRANSACTIONAL
  header.writeInt16BE(fields.transactional ? attributes | Attributes.TRANSACTIONAL : attributes, O.attributes)
  header.writeBigInt64BE(fields.producerId, O.producerId)
  header.writeInt16BE(fields.producerEpoch, O.producerEpoch)
  header.writeInt32BE(fields.baseSequence, O.baseSequence)
  const records = bytes.subarray(BATCH_HEADER_BYTES)
  const newFields = header.subarray(O.attributes)
  const crc = crcChecked
    ? crc32cPrefixReplaced(bytes.readUInt32BE(O.crc), crc32c(bytes.subarray(O.attributes, BATCH_HEADER_BYTES)), crc32c(newFields), records.length)
    : crc32c(records, crc32c(newFields))
  header.writeUInt32BE(crc >>> 0, O.crc)
  return [header, records]
}

/** The CRC a batch carries, and the one its bytes give: equal for an intact batch. */
export function batchCrc (bytes: Buffer): { stored: number, computed: number } {
  return { stored: bytes.readUInt32BE(BATCH_OFFSETS.crc), computed: crc32c(bytes.subarray(BATCH_OFFSETS.attributes)) >>> 0 }
}

/** An unsigned varint at `at` of `bytes` (up to 64 bits, as a Number: exact to 2^53), and where it ends. */
function readUnsignedVarint (bytes: Buffer, at: number): { value: number, end: number } {
  let value = 0
  let scale = 1
  let i = at
  for (;;) {
    const byte = bytes[i++] as number
    value += (byte & 0x7f) * scale
    if ((byte & 0x80) === 0) return { value, end: i }
    scale *= 128
  }
}

function zigzagDecode (z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2
}

function zigzagEncode (n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1
}

/** Writes `value` (>= 0, exact to 2^53) as an unsigned varint into `out` at `at`; returns where it ends. */
function writeUnsignedVarint (out: Buffer, at: number, value: number): number {
  let rest = value
  let i = at
  while (rest >= 0x80) {
    out[i++] = (rest % 128) | 0x80
    rest = Math.floor(rest / 128)
  }
  out[i++] = rest
  return i
}

/**
 * Uncompressed v2 batches of one partition, in order and without gaps, as one batch: the records
 * are copied with their offset and timestamp deltas made relative to the first batch (the broker
 * takes one batch per partition per request, and a consumer reads each record's offset as the
 * batch's base plus its delta). Header fields the rewrite sets later (base offset, producer, CRC)
 * are left as the first batch has them. Records keep their bytes past the two deltas.
 */
export function concatUncompressedBatches (batches: readonly Buffer[]): Buffer {
  const first = batches[0]
  if (first === undefined) throw new RangeError('no batch to concatenate')
  if (batches.length === 1) return first
  const O = BATCH_OFFSETS
  const baseTimestamp = Number(first.readBigInt64BE(O.firstTimestamp))
  let maxTimestamp = -Infinity
  let size = BATCH_HEADER_BYTES
  // Each record can grow by the varints that change: at most 10 bytes for each of three.
  for (const batch of batches) size += batch.length - BATCH_HEADER_BYTES + 30 * batch.readInt32BE(O.recordCount)
  const out = Buffer.allocUnsafe(size)
  first.copy(out, 0, 0, BATCH_HEADER_BYTES)
  let at = BATCH_HEADER_BYTES
  let offsetDelta = 0
  const body = Buffer.allocUnsafe(30)
  for (const batch of batches) {
    const batchTimestamp = Number(batch.readBigInt64BE(O.firstTimestamp))
    maxTimestamp = Math.max(maxTimestamp, Number(batch.readBigInt64BE(O.maxTimestamp)))
    const count = batch.readInt32BE(O.recordCount)
    let read = BATCH_HEADER_BYTES
    for (let r = 0; r < count; r++) {
      const length = readUnsignedVarint(batch, read)
      const recordStart = length.end
      const recordEnd = recordStart + zigzagDecode(length.value)
      const attributes = batch[recordStart] as number
      const timestampDelta = readUnsignedVarint(batch, recordStart + 1)
      const ownOffsetDelta = readUnsignedVarint(batch, timestampDelta.end)
      const timestamp = batchTimestamp + zigzagDecode(timestampDelta.value)
      body[0] = attributes
      let bodyEnd = writeUnsignedVarint(body, 1, zigzagEncode(timestamp - baseTimestamp))
      bodyEnd = writeUnsignedVarint(body, bodyEnd, zigzagEncode(offsetDelta + zigzagDecode(ownOffsetDelta.value)))
      const rest = recordEnd - ownOffsetDelta.end
      at = writeUnsignedVarint(out, at, zigzagEncode(bodyEnd + rest))
      body.copy(out, at, 0, bodyEnd)
      at += bodyEnd
      batch.copy(out, at, ownOffsetDelta.end, recordEnd)
      at += rest
      read = recordEnd
    }
    offsetDelta += count
  }
  out.writeInt32BE(at - BATCH_PREFIX_BYTES, O.length)
  out.writeInt32BE(offsetDelta - 1, O.lastOffsetDelta)
  out.writeBigInt64BE(BigInt(maxTimestamp), O.maxTimestamp)
  out.writeInt32BE(offsetDelta, O.recordCount)
  return out.subarray(0, at)
}
