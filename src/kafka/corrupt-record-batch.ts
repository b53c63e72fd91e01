import type { CorruptBatch } from '../ports/ports.js'
import { Attributes, BATCH_OFFSETS } from './record-batch-header.js'
import { crc32c } from './crc32c.js'

/**
 * A fetched v2 record batch whose CRC-32C does not match its bytes (KIP-98: the CRC covers the
 * attributes to the end of the batch), the `forwardedBatch` of the message standing for the whole
 * batch among kafkajs' fetched messages. It holds no bytes: it is never forwarded nor decoded. Its base offset is outside the CRC, its last
 * offset delta inside: `endOffset` is what the header says and may be wrong when the header is
 * the part that is corrupt (the record source checks it against the fetch before trusting it).
 */
export class CorruptRecordBatch implements CorruptBatch {
  readonly baseOffset: bigint
  readonly endOffset: bigint
  readonly storedCrc: number
  readonly computedCrc: number
  readonly control: boolean
  readonly sizeBytes: number

  constructor (bytes: Buffer, storedCrc: number, computedCrc: number) {
    const O = BATCH_OFFSETS
    const attributes = bytes.readInt16BE(O.attributes)
    this.baseOffset = bytes.readBigInt64BE(O.baseOffset)
    const lastOffsetDelta = bytes.readInt32BE(O.lastOffsetDelta)
    this.endOffset = this.baseOffset + BigInt(Math.max(0, lastOffsetDelta)) + 1n
    this.control = (attributes & Attributes.CONTROL) !== 0
    this.storedCrc = storedCrc
    this.computedCrc = computedCrc
    this.sizeBytes = bytes.length
  }
}

/**
 * The batch in `bytes` (one whole v2 batch, base offset and length included) as a
 * `CorruptRecordBatch` when its CRC-32C does not match, else undefined. One native CRC-32C pass
 * over the batch (see `crc32c.ts`).
 */
export function corruptBatchOf (bytes: Buffer): CorruptRecordBatch | undefined {
  const stored = bytes.readUInt32BE(BATCH_OFFSETS.crc)
  const computed = crc32c(bytes.subarray(BATCH_OFFSETS.attributes)) >>> 0
  return stored === computed ? undefined : new CorruptRecordBatch(bytes, stored, computed)
}
