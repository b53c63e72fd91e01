import type { PartitionWrite } from '../ports/ports.js'
import { partitionKey } from '../shared/partition-key.js'
import type { HeaderValue, KafkaRecord } from '../shared/kafka-record.js'
import { KafkaForwardedBatch } from './forwarded-record-batch.js'
import { compressRecords } from './kafkajs-internals.js'
import { BATCH_HEADER_BYTES, BATCH_OFFSETS, BATCH_PREFIX_BYTES } from './record-batch-header.js'

/** A header as written: its name, and its value (null or undefined: a null value). */
interface OutHeader {
  readonly key: string
  readonly value: Buffer | string | null | undefined
}

/** The record's headers in the order to write: its wire-order list, else the grouped form as kafkajs flattens it. */
function headersOf (record: KafkaRecord): readonly OutHeader[] {
  if (record.headerList !== undefined) return record.headerList
  const grouped = record.headers
  if (grouped === undefined) return []
  const list: OutHeader[] = []
  for (const key of Object.keys(grouped)) {
    const value: HeaderValue = grouped[key]
    if (Array.isArray(value)) for (const item of value as ReadonlyArray<Buffer | string | null>) list.push({ key, value: item })
    else list.push({ key, value: value as Buffer | string | null | undefined })
  }
  return list
}

function zigzag (n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1
}

/** Bytes of the unsigned varint `z` (< 2^53). */
function varintBytes (z: number): number {
  let bytes = 1
  while (z >= 128) {
    z = Math.floor(z / 128)
    bytes++
  }
  return bytes
}

function writeVarint (out: Buffer, at: number, z: number): number {
  while (z >= 128) {
    out[at++] = (z % 128) | 0x80
    z = Math.floor(z / 128)
  }
  out[at++] = z
  return at
}

function lengthOf (field: Buffer | string | null | undefined): number {
  if (field == null) return -1
  return typeof field === 'string' ? Buffer.byteLength(field) : field.length
}

function writeField (out: Buffer, at: number, field: Buffer | string | null | undefined, length: number): number {
  at = writeVarint(out, at, zigzag(length))
  if (length <= 0) return at
  if (typeof field === 'string') return at + out.write(field, at, 'utf8')
  ;(field as Buffer).copy(out, at)
  return at + length
}

/**
 * The records section of a v2 batch holding `records` (uncompressed), after `room` bytes left
 * free for the batch header, and the batch's timestamps: as kafkajs' producer encodes messages
 * (offset deltas 0, 1, ...; the smallest timestamp as the batch's first, each record's delta from
 * it; headers in wire order, null keys, values and header values as length -1), sized once.
 */
export function encodeRecordsSection (records: readonly KafkaRecord[], room: number): { bytes: Buffer, firstTimestampMs: number, maxTimestampMs: number } {
  let firstTimestampMs = Infinity
  let maxTimestampMs = -Infinity
  for (const record of records) {
    const timestamp = Number(record.timestamp)
    if (timestamp < firstTimestampMs) firstTimestampMs = timestamp
    if (timestamp > maxTimestampMs) maxTimestampMs = timestamp
  }
  // An upper bound: every varint at its longest (10 bytes).
  let bound = room
  const headerLists: Array<readonly OutHeader[]> = new Array(records.length)
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as KafkaRecord
    const headers = headersOf(record)
    headerLists[i] = headers
    bound += 60 + Math.max(0, lengthOf(record.key)) + Math.max(0, lengthOf(record.value))
    for (const header of headers) bound += 20 + 3 * header.key.length + Math.max(0, lengthOf(header.value))
  }
  const out = Buffer.allocUnsafe(bound)
  let at = room
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as KafkaRecord
    const headers = headerLists[i] as readonly OutHeader[]
    const timestampDelta = zigzag(Number(record.timestamp) - firstTimestampMs)
    const offsetDelta = zigzag(i)
    const keyLength = lengthOf(record.key)
    const valueLength = lengthOf(record.value)
    let body = 1 + varintBytes(timestampDelta) + varintBytes(offsetDelta) +
      varintBytes(zigzag(keyLength)) + Math.max(0, keyLength) + varintBytes(zigzag(valueLength)) + Math.max(0, valueLength) +
      varintBytes(zigzag(headers.length))
    const headerKeyLengths: number[] = []
    for (const header of headers) {
      const nameLength = Buffer.byteLength(header.key)
      headerKeyLengths.push(nameLength)
      const headerValueLength = lengthOf(header.value)
      body += varintBytes(zigzag(nameLength)) + nameLength + varintBytes(zigzag(headerValueLength)) + Math.max(0, headerValueLength)
    }
    at = writeVarint(out, at, zigzag(body))
    out[at++] = 0 // record attributes: none are used
    at = writeVarint(out, at, timestampDelta)
    at = writeVarint(out, at, offsetDelta)
    at = writeField(out, at, record.key, keyLength)
    at = writeField(out, at, record.value, valueLength)
    at = writeVarint(out, at, zigzag(headers.length))
    for (let h = 0; h < headers.length; h++) {
      const header = headers[h] as OutHeader
      at = writeField(out, at, header.key, headerKeyLengths[h] as number)
      at = writeField(out, at, header.value, lengthOf(header.value))
    }
  }
  return { bytes: out.subarray(0, at), firstTimestampMs, maxTimestampMs }
}

/**
 * `records` (at least one) as one whole v2 data batch in codec `codec` (a kafkajs codec id, 0 for
 * none), the producer's fields (id, epoch, sequence) and the CRC left for `batchForTarget`, which
 * sets them for each produce request. Compression runs in the registered codecs (native code on
 * libuv's thread pool where their packages load).
 */
export async function encodeDecodedBatch (records: readonly KafkaRecord[], codec: number): Promise<Buffer> {
  if (records.length === 0) throw new RangeError('no record to encode into a batch')
  const section = encodeRecordsSection(records, codec === 0 ? BATCH_HEADER_BYTES : 0)
  let batch: Buffer
  if (codec === 0) {
    batch = section.bytes
  } else {
    const compressed = await compressRecords(codec, section.bytes)
    batch = Buffer.allocUnsafe(BATCH_HEADER_BYTES + compressed.length)
    compressed.copy(batch, BATCH_HEADER_BYTES)
  }
  const O = BATCH_OFFSETS
  batch.writeBigInt64BE(0n, O.baseOffset)
  batch.writeInt32BE(batch.length - BATCH_PREFIX_BYTES, O.length)
  batch.writeInt32BE(-1, O.partitionLeaderEpoch)
  batch.writeInt8(2, O.magic)
  batch.writeUInt32BE(0, O.crc)
  batch.writeInt16BE(codec, O.attributes)
  batch.writeInt32BE(records.length - 1, O.lastOffsetDelta)
  batch.writeBigInt64BE(BigInt(section.firstTimestampMs), O.firstTimestamp)
  batch.writeBigInt64BE(BigInt(section.maxTimestampMs), O.maxTimestamp)
  batch.writeBigInt64BE(-1n, O.producerId)
  batch.writeInt16BE(-1, O.producerEpoch)
  batch.writeInt32BE(-1, O.baseSequence)
  batch.writeInt32BE(records.length, O.recordCount)
  return batch
}

/**
 * `writes` with the decoded records of each partition encoded here into one batch in codec
 * `codec`, which the sink hands kafkajs as an encoded batch (as it does a forwarded one): kafkajs'
 * producer would otherwise build an encoder per record and header and copy each into the request.
 * The partitions' batches are encoded together (their compression runs in parallel on the pool).
 * `writes` come back as they are when a partition has both forwarded and decoded writes in one
 * request (the worker never makes such a request). Only for building the request: acknowledgements
 * and failures are still matched against the writes as given.
 */
export async function withEncodedBatches (writes: readonly PartitionWrite[], codec: number): Promise<readonly PartitionWrite[]> {
  const decoded = new Map<string, { topic: string, partition: number, records: KafkaRecord[] }>()
  const forwarded = new Set<string>()
  for (const write of writes) {
    const key = partitionKey(write.topic, write.partition)
    if (write.forwarded !== undefined) {
      forwarded.add(key)
      continue
    }
    if (write.records.length === 0) continue
    const entry = decoded.get(key) ?? { topic: write.topic, partition: write.partition, records: [] }
    for (const record of write.records) entry.records.push(record)
    decoded.set(key, entry)
  }
  if (decoded.size === 0) return writes
  for (const key of decoded.keys()) if (forwarded.has(key)) return writes
  const encoded = await Promise.all([...decoded.values()].map(async ({ topic, partition, records }): Promise<PartitionWrite> => {
    const batch = new KafkaForwardedBatch(await encodeDecodedBatch(records, codec), undefined, true)
    return { topic, partition, records: [], forwarded: batch }
  }))
  return [...writes.filter(write => write.forwarded !== undefined), ...encoded]
}
