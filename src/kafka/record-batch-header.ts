/**
 * The header of a Kafka record batch (magic v2), as bytes: where its fields are, and the rewrite
 * a forwarded batch needs before the target takes it (see ../shared/REFERENCE.md section 8 and
 * Kafka's `DefaultRecordBatch`). Pure functions over a Buffer holding one whole batch.
 */
import { crc32c } from './crc32c.js'

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
 * Rewrites `bytes` (one whole v2 batch, not a control batch) in place so the target takes it as
 * the mirror's producer's batch: base offset 0 and leader epoch -1 (the broker assigns both),
 * the producer's id, epoch and first sequence, the transactional bit set only for the mirror's
 * own transaction, and the CRC over everything from the attributes on. Returns `bytes`.
 */
export function rewriteForTarget (bytes: Buffer, fields: ProducerFields): Buffer {
  const O = BATCH_OFFSETS
  bytes.writeBigInt64BE(0n, O.baseOffset)
  bytes.writeInt32BE(-1, O.partitionLeaderEpoch)
  const attributes = bytes.readInt16BE(O.attributes) & ~Attributes.TRANSACTIONAL
  bytes.writeInt16BE(fields.transactional ? attributes | Attributes.TRANSACTIONAL : attributes, O.attributes)
  bytes.writeBigInt64BE(fields.producerId, O.producerId)
  bytes.writeInt16BE(fields.producerEpoch, O.producerEpoch)
  bytes.writeInt32BE(fields.baseSequence, O.baseSequence)
  bytes.writeUInt32BE(crc32c(bytes.subarray(O.attributes)) >>> 0, O.crc)
  return bytes
}

/** The CRC a batch carries, and the one its bytes give: equal for an intact batch. */
export function batchCrc (bytes: Buffer): { stored: number, computed: number } {
  return { stored: bytes.readUInt32BE(BATCH_OFFSETS.crc), computed: crc32c(bytes.subarray(BATCH_OFFSETS.attributes)) >>> 0 }
}
