import { createHash, type Hash } from 'node:crypto'
import type { AuditClient } from '../../kafka/audit-client.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import { headerPairs } from '../../mirror-topics/record-digest.js'
import type { KafkaRecord } from '../../shared/kafka-record.js'

/** The hashed target records of a range: how many, where the last one ends, and their SHA-256. */
export interface TargetRecordsHash {
  readonly records: number
  /** One past the offset of the last record hashed (the range's start when none was). */
  readonly untilOffset: number
  readonly sha256: string
}

function int32 (n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeInt32BE(n)
  return b
}

function bytesField (hash: Hash, bytes: Buffer | string | null): void {
  if (bytes === null) {
    hash.update(int32(-1))
    return
  }
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes
  hash.update(int32(b.length))
  hash.update(b)
}

/**
 * Adds one record to `hash`: offset and timestamp (signed 64-bit big-endian), key and value
 * (length-prefixed, -1 for null), then the header count and each header's name and value in
 * wire order. Length prefixes make the encoding unambiguous, so a different record, or the same
 * record at another offset, changes the hash.
 */
function addRecord (hash: Hash, record: KafkaRecord): void {
  const head = Buffer.alloc(16)
  head.writeBigInt64BE(BigInt(record.offset), 0)
  head.writeBigInt64BE(BigInt(record.timestamp), 8)
  hash.update(head)
  bytesField(hash, record.key)
  bytesField(hash, record.value)
  const headers = headerPairs(record)
  hash.update(int32(headers.length))
  for (const { key, value } of headers) {
    bytesField(hash, key)
    bytesField(hash, value)
  }
}

/**
 * SHA-256 of the data records (read_committed: no transaction markers, no aborted records) of
 * `topic` partition `partition` from `fromOffset`, up to `untilOffset` (exclusive), stopping
 * after `maxRecords` when given. What the certificate names as a range's `sha256`.
 */
export async function hashTargetRecords (
  client: AuditClient,
  topic: string,
  partition: number,
  fromOffset: number,
  untilOffset: number,
  maxRecords = Number.POSITIVE_INFINITY
): Promise<TargetRecordsHash> {
  const hash = createHash('sha256')
  let records = 0
  let last = fromOffset
  if (maxRecords > 0 && untilOffset > fromOffset) {
    const reader = new PartitionReader(client, topic, partition)
    const chunks = reader.chunks(fromOffset, untilOffset)
    for await (const chunk of chunks) {
      for (const record of chunk) {
        addRecord(hash, record)
        records++
        last = Number(record.offset) + 1
        if (records >= maxRecords) break
      }
      if (records >= maxRecords) {
        await chunks.return(undefined)
        break
      }
    }
  }
  return { records, untilOffset: last, sha256: hash.digest('hex') }
}
