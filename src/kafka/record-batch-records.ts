import type { RecordFieldsVisitor, WireHeader } from '../ports/forwarded-batch.js'
import { RawRecordBatch, WireRecord } from './raw-record-batch.js'

/**
 * Walks the records of one v2 record batch (header included, as fetched) without building
 * records: per record the key, value, headers and timestamp, as kafkajs' decoder would give them
 * (views into the batch, or into its decompressed records). The walk is `RawRecordBatch.visit`'s;
 * this hands its fields over as views. Throws a RangeError on a truncated batch.
 */
export async function visitBatchRecords (batch: Buffer, visit: RecordFieldsVisitor): Promise<number> {
  const raw = new RawRecordBatch(batch)
  return await raw.visit(raw.baseOffset, raw.endOffset, new WireRecord(), record => {
    const bytes = record.bytes
    const field = (start: number, length: number): Buffer | null => length < 0 ? null : bytes.subarray(start, start + length)
    const headers: WireHeader[] = []
    const positions = record.headers
    for (let h = 0; h < record.headerCount; h++) {
      const at = 4 * h
      headers.push({
        key: bytes.subarray(positions[at] as number, (positions[at] as number) + (positions[at + 1] as number)),
        value: field(positions[at + 2] as number, positions[at + 3] as number),
      })
    }
    visit(field(record.keyStart, record.keyLength), field(record.valueStart, record.valueLength), headers, record.timestampMs)
  })
}
