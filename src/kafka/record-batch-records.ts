import type { RecordFieldsVisitor, WireHeader } from '../pipeline/forwarded-batch.js'
import { decompressRecords } from './kafkajs-internals.js'

class WireReader {
  at: number
  constructor (readonly bytes: Buffer, at: number) { this.at = at }

  /** A zigzag varint of up to 64 bits, as a Number (exact within 2^53). */
  varlong (): number {
    let result = 0
    let scale = 1
    for (;;) {
      if (this.at >= this.bytes.length) throw new RangeError('record batch ends inside a varint')
      const byte = this.bytes[this.at++] as number
      result += (byte & 0x7f) * scale
      if ((byte & 0x80) === 0) break
      scale *= 128
    }
    return result % 2 === 0 ? result / 2 : -(result + 1) / 2
  }

  bytesOrNull (): Buffer | null {
    const length = this.varlong()
    if (length < 0) return null
    const end = this.at + length
    if (end > this.bytes.length) throw new RangeError('record batch ends inside a record field')
    const view = this.bytes.subarray(this.at, end)
    this.at = end
    return view
  }
}

/**
 * Walks the records of one v2 record batch (header included, as fetched) without building
 * records: per record the key, value, headers and timestamp (CreateTime: the batch's base
 * timestamp plus the record's delta), as kafkajs' decoder would give them, in far fewer
 * allocations. Compressed batches are decompressed first. Throws a RangeError on a truncated batch.
 */
export async function visitBatchRecords (batch: Buffer, visit: RecordFieldsVisitor): Promise<number> {
  if (batch.length < 61) throw new RangeError(`record batch of ${batch.length} bytes is shorter than its 61-byte header`)
  const attributes = batch.readInt16BE(21)
  const baseTimestamp = Number(batch.readBigInt64BE(27))
  const count = batch.readInt32BE(57)
  const section = await decompressRecords(attributes, batch.subarray(61))
  const reader = new WireReader(section, 0)
  for (let i = 0; i < count; i++) {
    reader.varlong() // record length
    reader.at++ // record attributes (unused)
    const timestampDelta = reader.varlong()
    reader.varlong() // offset delta
    const key = reader.bytesOrNull()
    const value = reader.bytesOrNull()
    const headerCount = reader.varlong()
    const headers: WireHeader[] = []
    for (let h = 0; h < headerCount; h++) {
      const name = reader.bytesOrNull() ?? Buffer.alloc(0)
      headers.push({ key: name, value: reader.bytesOrNull() })
    }
    visit(key, value, headers, baseTimestamp + timestampDelta)
  }
  return count
}
