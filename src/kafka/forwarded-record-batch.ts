import type { DeepPathReason, ForwardedBatch, RecordFieldsVisitor } from '../ports/forwarded-batch.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import type { EncodedBatchMessage } from './kafkajs-internals.js'
import { decodeRecordBatch } from './kafkajs-internals.js'
import { retainedBuffers } from '../ports/mirror-batch.js'
import { visitBatchRecords } from './record-batch-records.js'
import { decodeBatchRecords } from './record-batch-decoder.js'
import {
  Attributes,
  BATCH_HEADER_BYTES,
  BATCH_OFFSETS,
  CODEC_NAMES,
  concatUncompressedBatches,
  readBatchHeader,
  batchForTarget,
} from './record-batch-header.js'
import { corruptBatchOf, type CorruptRecordBatch } from './corrupt-record-batch.js'

/**
 * A fetched v2 record batch on its way to the target undecoded: a view of the fetch response's
 * bytes, never written to (each produce request sends a header of its own, `batchForTarget`), and
 * the header fields the pipeline needs. The view keeps the whole response alive, so the batch
 * `retains` the response's buffer: the queue counts that buffer whole, once, while any batch (or
 * decoded record) of it is queued, in flight or read for its digest (`BoundedQueue`, Invariant A),
 * and the queue's byte bound bounds what the fetches hold. Among kafkajs' fetched messages it is
 * the `forwardedBatch` of the message that stands for the batch.
 */
export class KafkaForwardedBatch implements ForwardedBatch {
  /** The source producer id of the batch (-1 when none), decimal. */
  readonly producerId: string
  readonly baseOffset: bigint
  readonly recordCount: number
  readonly sizeBytes: number
  readonly firstTimestampMs: number
  readonly maxTimestampMs: number
  readonly codec: string
  readonly mergeable: boolean
  /** Why the batch must be decoded after all (the deep path), or undefined when it is forwarded as it is. */
  readonly deepReason: DeepPathReason | undefined
  /**
   * True for bytes the mirror made: a batch recompressed into the target's codec (`recompressed`),
   * its records untouched, or decoded records encoded (`withEncodedBatches`).
   */
  readonly transcoded: boolean
  readonly fetchedSizeBytes: number | undefined
  readonly retains: readonly ArrayBufferLike[]
  /**
   * The batch as fetched (a view of the response) or as the mirror made it; each produce request
   * sends a header of its own before its records (see `message`).
   */
  readonly #bytes: Buffer

  /**
   * `view` is kept, not copied; `owned`: bytes the mirror made (a transcoded batch's), not a view
   * of a fetch response, and `fetchedSizeBytes` the size of the batch they were made from.
   */
  constructor (view: Buffer, deepReason?: DeepPathReason, owned = false, fetchedSizeBytes?: number) {
    this.deepReason = deepReason
    this.transcoded = owned
    this.fetchedSizeBytes = fetchedSizeBytes
    const header = readBatchHeader(view)
    this.#bytes = view
    this.retains = retainedBuffers([view])
    this.baseOffset = header.baseOffset
    this.recordCount = header.recordCount
    this.producerId = header.producerId.toString()
    this.sizeBytes = view.length
    this.firstTimestampMs = Number(header.firstTimestamp)
    this.maxTimestampMs = Number(header.maxTimestamp)
    this.codec = CODEC_NAMES[header.attributes & Attributes.CODEC_MASK] ?? 'unknown'
    this.mergeable = this.codec === 'none'
  }

  /**
   * The kafkajs producer message for consecutive batches `parts` of one partition (mergeable ones
   * when more than one): concatenated into one batch once, sent after a header of each request's own.
   */
  static message (partition: number, parts: readonly KafkaForwardedBatch[]): EncodedBatchMessage {
    const { bytes, recordCount, crcChecked } = KafkaForwardedBatch.joined(partition, parts)
    return encodedMessage(partition, bytes, recordCount, crcChecked)
  }

  /**
   * Consecutive batches `parts` of one partition as one whole v2 batch (mergeable ones when more
   * than one, concatenated once; a single batch as it is), what the target gets for the partition
   * in one produce request. `crcChecked`: the bytes are a fetched batch whose CRC was checked.
   */
  static joined (partition: number, parts: readonly KafkaForwardedBatch[]): { bytes: Buffer, recordCount: number, crcChecked: boolean } {
    const [first] = parts
    if (first === undefined) throw new RangeError(`no forwarded batch for partition ${partition}`)
    // A batch as fetched had its CRC checked by `forwardingHook`; bytes the mirror made carry none yet.
    if (parts.length === 1) return { bytes: first.#bytes, recordCount: first.recordCount, crcChecked: !first.transcoded }
    if (!parts.every(part => part.mergeable)) throw new RangeError(`compressed forwarded batches of partition ${partition} cannot share a request`)
    const bytes = concatUncompressedBatches(parts.map(part => part.#bytes))
    return { bytes, recordCount: parts.reduce((sum, part) => sum + part.recordCount, 0), crcChecked: false }
  }

  /**
   * This batch in another codec (`transcode`: the bytes it gives, or undefined), forwarded as it
   * is; undefined when `transcode` gives none (the batch is decoded instead).
   */
  async recompressed (transcode: (bytes: Buffer) => Promise<Buffer | undefined>): Promise<KafkaForwardedBatch | undefined> {
    const bytes = await transcode(this.#bytes)
    return bytes === undefined ? undefined : new KafkaForwardedBatch(bytes, undefined, true, this.sizeBytes)
  }

  /** The records, decoded from the source's bytes (source offsets and all). */
  async decode (): Promise<readonly KafkaRecord[]> {
    // Reads no header field the rewrite for the target changes but the base offset, which it is given.
    const records = await decodeBatchRecords(this.#bytes, this.baseOffset)
    if (records !== undefined) return records
    const copy = Buffer.allocUnsafe(this.#bytes.length)
    this.#bytes.copy(copy)
    copy.writeBigInt64BE(this.baseOffset, BATCH_OFFSETS.baseOffset)
    return decodeRecordBatch(copy)
  }

  /** Each record's fields, read from the source's bytes without building records (`visitBatchRecords`). */
  async visitRecords (visit: RecordFieldsVisitor): Promise<number> {
    return await visitBatchRecords(this.#bytes, visit)
  }

  /** The kafkajs producer message for this batch on target partition `partition`. */
  message (partition: number): EncodedBatchMessage {
    return KafkaForwardedBatch.message(partition, [this])
  }
}

function encodedMessage (partition: number, bytes: Buffer, recordCount: number, crcChecked = false): EncodedBatchMessage {
  return {
    partition,
    value: null,
    recordCount,
    // Each request gets its own header; the records are sent from `bytes` as they are.
    encodeBatch: fields => batchForTarget(bytes, {
      producerId: BigInt(fields.producerId),
      producerEpoch: fields.producerEpoch,
      baseSequence: fields.firstSequence,
      transactional: fields.transactional,
    }, crcChecked),
  }
}

/** Which fetched batches are forwarded. */
export interface ForwardingPolicy {
  /** Set when every batch is decoded, and why: pass-through off (`disabled`) or a flow that changes records (`message_handler`). */
  readonly decodeAll: DeepPathReason | undefined
  /** The codec the user asked the target to be written in (`compression.type` set), else undefined: each batch keeps its own. */
  readonly targetCodec: string | undefined
  /** The largest batch one produce request may carry (`max.request.size` less the request's own fields). */
  readonly maxBatchBytes: number
}

/** Bytes of a produce request around one partition's batch, with room to spare (header, topic name, partition). */
const REQUEST_OVERHEAD_BYTES = 1024

export function forwardingPolicy (decodeAll: DeepPathReason | undefined, targetCodec: string | undefined, maxRequestSizeBytes: number): ForwardingPolicy {
  return { decodeAll, targetCodec, maxBatchBytes: Math.max(0, maxRequestSizeBytes - REQUEST_OVERHEAD_BYTES) }
}

/** Why the batch in `bytes` cannot be forwarded, or undefined when it can. Control batches are not forwarded either (kafkajs drops them). */
export function deepPathReason (bytes: Buffer, policy: ForwardingPolicy): DeepPathReason | 'control' | undefined {
  if (bytes.length < BATCH_HEADER_BYTES) return 'not_v2'
  const header = readBatchHeader(bytes)
  if (header.magic !== 2) return 'not_v2'
  if ((header.attributes & Attributes.CONTROL) !== 0) return 'control'
  if ((header.attributes & Attributes.LOG_APPEND_TIME) !== 0) return 'log_append_time'
  if ((header.attributes & Attributes.DELETE_HORIZON) !== 0) return 'delete_horizon'
  if (policy.decodeAll !== undefined) return policy.decodeAll
  if (header.recordCount <= 0 || header.recordCount !== header.lastOffsetDelta + 1) return 'offset_gaps'
  const codec = CODEC_NAMES[header.attributes & Attributes.CODEC_MASK]
  if (policy.targetCodec !== undefined && codec !== policy.targetCodec) return 'codec'
  if (bytes.length > policy.maxBatchBytes) return 'too_large'
  return undefined
}

/**
 * The hook the patched Fetch decoder calls per batch: a `KafkaForwardedBatch` for every v2 data
 * batch, undecoded. One that cannot be forwarded carries its `deepReason` (told to `declined`) and
 * is decoded later by the record source, one batch at a time as the queue takes its records, so a
 * fetch is never decompressed whole (memory stays bounded however well the source compresses).
 * Every v2 batch, control batches included, has its CRC-32C checked first: one that does not
 * match becomes a `CorruptRecordBatch` (never forwarded, never decoded), whichever path it would
 * have taken. Intact control batches and older formats are left to kafkajs (undefined).
 */
export function forwardingHook (
  policy: ForwardingPolicy,
  declined: (reason: DeepPathReason, bytes: number) => void
): (bytes: Buffer) => KafkaForwardedBatch | CorruptRecordBatch | undefined {
  return bytes => {
    if (bytes.length >= BATCH_HEADER_BYTES && bytes.readInt8(BATCH_OFFSETS.magic) === 2) {
      const corrupt = corruptBatchOf(bytes)
      if (corrupt !== undefined) return corrupt
    }
    const reason = deepPathReason(bytes, policy)
    if (reason === 'control' || reason === 'not_v2') return undefined
    if (reason !== undefined) declined(reason, bytes.length)
    return new KafkaForwardedBatch(bytes, reason)
  }
}
