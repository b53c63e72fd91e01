/**
 * The Kafka requests and answers of the bare forwarder (`bare-forwarder.ts`): Fetch v4 of
 * every partition of one topic, Produce v3 (acks=all, no producer id) of one batch per partition,
 * each as the pieces of its body after the request header.
 */
import { batchCrc, batchForTarget } from '../src/kafka/record-batch-header.js'

export const FETCH = { apiKey: 1, version: 4 } as const
export const PRODUCE = { apiKey: 0, version: 3 } as const
const FETCH_MAX_WAIT_MS = 500
const PARTITION_MAX_BYTES = 1_048_576
/** Batch header: base offset (8) and length (4) come before what the length counts. */
const BATCH_PREFIX_BYTES = 12
const LAST_OFFSET_DELTA_AT = 23

function int16 (value: number): Buffer { const b = Buffer.alloc(2); b.writeInt16BE(value); return b }
function int32 (value: number): Buffer { const b = Buffer.alloc(4); b.writeInt32BE(value); return b }
function kafkaString (value: string): Buffer {
  const b = Buffer.alloc(2 + Buffer.byteLength(value))
  b.writeInt16BE(b.length - 2)
  b.write(value, 2)
  return b
}

/** Fetch v4 of every partition of `topic` from `offsets`, read_uncommitted. */
export function fetchRequest (topic: string, offsets: readonly bigint[]): Buffer[] {
  const head = Buffer.alloc(17)
  head.writeInt32BE(-1, 0) // replica_id: a client
  head.writeInt32BE(FETCH_MAX_WAIT_MS, 4)
  head.writeInt32BE(1, 8) // min_bytes
  head.writeInt32BE(52_428_800, 12) // max_bytes
  head.writeInt8(0, 16) // isolation_level
  const partitions = offsets.map((offset, partition) => {
    const b = Buffer.alloc(16)
    b.writeInt32BE(partition, 0)
    b.writeBigInt64BE(offset, 4)
    b.writeInt32BE(PARTITION_MAX_BYTES, 12)
    return b
  })
  return [head, int32(1), kafkaString(topic), int32(offsets.length), ...partitions]
}

/**
 * Walks the `[topics [partitions]]` of an answer from `at`: `visit` reads one partition's entry,
 * which starts at the position it is given, and returns where the entry ends.
 */
function eachPartition (answer: Buffer, at: number, visit: (at: number) => number): void {
  const topics = answer.readInt32BE(at)
  at += 4
  for (let t = 0; t < topics; t++) {
    at += 2 + answer.readInt16BE(at)
    const partitions = answer.readInt32BE(at)
    at += 4
    for (let i = 0; i < partitions; i++) at = visit(at)
  }
}

/** The whole batches of each partition in a Fetch v4 answer, at or past that partition's offset (which moves past them). */
export function batchesOf (answer: Buffer, offsets: bigint[]): Array<{ partition: number, batch: Buffer }> {
  const found: Array<{ partition: number, batch: Buffer }> = []
  // After throttle_time_ms.
  eachPartition(answer, 4, entry => {
    const partition = answer.readInt32BE(entry)
    const errorCode = answer.readInt16BE(entry + 4)
    let at = entry + 4 + 2 + 8 + 8 // partition, error_code, high_watermark, last_stable_offset
    const aborted = answer.readInt32BE(at)
    at += 4 + Math.max(aborted, 0) * 16
    const length = Math.max(answer.readInt32BE(at), 0)
    at += 4
    if (errorCode !== 0) throw new Error(`fetch of partition ${partition}: error code ${errorCode}`)
    const end = at + length
    let from = at
    while (end - from >= BATCH_PREFIX_BYTES) {
      const batchEnd = from + BATCH_PREFIX_BYTES + answer.readInt32BE(from + 8)
      if (batchEnd > end) break // the broker cuts the last batch at the size limit
      const batch = answer.subarray(from, batchEnd)
      const lastOffset = batch.readBigInt64BE(0) + BigInt(batch.readInt32BE(LAST_OFFSET_DELTA_AT))
      if (lastOffset >= (offsets[partition] as bigint)) {
        const { stored, computed } = batchCrc(batch)
        if (stored !== computed) throw new Error(`partition ${partition}: a batch failed its CRC check`)
        found.push({ partition, batch })
        offsets[partition] = lastOffset + 1n
      }
      from = batchEnd
    }
    return end
  })
  return found
}

/** Produce v3 (acks=all, no producer id) of one batch per partition into `topic`. */
export function produceRequest (topic: string, round: ReadonlyMap<number, Buffer>): Buffer[] {
  const pieces = [int16(-1), int16(-1), int32(30_000), int32(1), kafkaString(topic), int32(round.size)]
  for (const [partition, batch] of round) {
    const [header, records] = batchForTarget(batch, { producerId: -1n, producerEpoch: -1, baseSequence: -1, transactional: false }, true)
    const head = Buffer.alloc(8)
    head.writeInt32BE(partition, 0)
    head.writeInt32BE(header.length + records.length, 4)
    pieces.push(head, header, records)
  }
  return pieces
}

/** Throws on the first partition a Produce v3 answer refused. */
export function checkProduced (answer: Buffer): void {
  eachPartition(answer, 0, at => {
    const errorCode = answer.readInt16BE(at + 4)
    if (errorCode !== 0) throw new Error(`produce to partition ${answer.readInt32BE(at)}: error code ${errorCode}`)
    return at + 4 + 2 + 8 + 8 // partition, error_code, base_offset, log_append_time
  })
}
