/**
 * The record batches of one partition of a Fetch response, cut out of its `records` bytes as views (never
 * copied, never decoded), with the batches a consumer must not see left out: those wholly before the fetch
 * offset, control batches, and with read_committed the batches of aborted transactions.
 */
import { Attributes, BATCH_HEADER_BYTES, BATCH_OFFSETS, BATCH_PREFIX_BYTES } from '../record-batch-header.js'
import { WireReader } from './wire-reader.js'

/** Kafka's `isolation.level` on the wire (FetchRequest `IsolationLevel`). */
export const IsolationLevel = {
  READ_UNCOMMITTED: 0,
  READ_COMMITTED: 1,
} as const
export type IsolationLevel = typeof IsolationLevel[keyof typeof IsolationLevel]

/** One record batch of a fetch response, as the broker stored it. */
export interface RawBatch {
  /** The whole batch (base offset to the last byte of its last record): a view of the response. */
  readonly bytes: Buffer
  readonly baseOffset: bigint
  readonly lastOffset: bigint
  /** The leader epoch the batch was written in (the header's partition leader epoch; -1 for magic 0 and 1). */
  readonly leaderEpoch: number
}

/** An aborted transaction as a Fetch response lists it (read_committed). */
export interface AbortedTransaction {
  readonly producerId: bigint
  readonly firstOffset: bigint
}

/** What `fetchedBatches` found in a partition's records. */
export interface FetchedBatches {
  /** The batches to hand out, in offset order. */
  readonly batches: readonly RawBatch[]
  /** The next offset to fetch: past every whole batch read, handed out or skipped; the fetch offset when none was whole. */
  readonly nextFetchOffset: bigint
  /** The leader epoch of the last whole batch read (handed out or skipped); undefined when none was whole. */
  readonly lastEpoch: number | undefined
  /** Batches read and not handed out (control batches, aborted transactions' batches). */
  readonly skippedBatches: number
}

/** A control record's type (the int16 after the version in its key): KIP-98. */
const CONTROL_TYPE_ABORT = 0

/**
 * Cuts `records` (one partition's records of a Fetch response) into whole batches. A batch cut off at the end
 * (the broker fills up to `partitionMaxBytes` and may end inside a batch) is not a batch: it is fetched again
 * from its start. A batch that ends before `fetchOffset` is dropped (a fetch from inside a batch returns the
 * whole batch, KIP-98); one that straddles it is handed out whole and the caller reads from `fetchOffset`.
 *
 * read_committed (KIP-98, as Kafka's consumer does in `CompletedFetch`): the aborted transactions, in the order
 * they began, open as the batches reach their first offset; a transactional batch of a producer with an open
 * aborted transaction is skipped, and that producer's ABORT marker closes it. Control batches are never handed out.
 */
export function fetchedBatches (
  records: Buffer | null,
  fetchOffset: bigint,
  isolationLevel: IsolationLevel,
  abortedTransactions: readonly AbortedTransaction[] | null
): FetchedBatches {
  const batches: RawBatch[] = []
  let nextFetchOffset = fetchOffset
  let lastEpoch: number | undefined
  let skippedBatches = 0
  const aborted = [...(abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const abortedProducers = new Set<bigint>()
  let nextAborted = 0
  const bytes = records ?? Buffer.alloc(0)
  for (let at = 0; at + BATCH_PREFIX_BYTES <= bytes.length;) {
    const end = at + BATCH_PREFIX_BYTES + bytes.readInt32BE(at + BATCH_OFFSETS.length)
    if (end > bytes.length || end - at < BATCH_OFFSETS.magic + 1) break
    const batch = bytes.subarray(at, end)
    at = end
    const { baseOffset, lastOffset, leaderEpoch, attributes, producerId } = batchFields(batch)
    if (lastOffset < fetchOffset) continue
    nextFetchOffset = lastOffset + 1n
    lastEpoch = leaderEpoch
    const control = (attributes & Attributes.CONTROL) !== 0
    if (isolationLevel === IsolationLevel.READ_COMMITTED && producerId >= 0n) {
      while (nextAborted < aborted.length && aborted[nextAborted]!.firstOffset <= lastOffset) abortedProducers.add(aborted[nextAborted++]!.producerId)
      if (control && controlType(batch) === CONTROL_TYPE_ABORT) {
        abortedProducers.delete(producerId)
      } else if ((attributes & Attributes.TRANSACTIONAL) !== 0 && abortedProducers.has(producerId)) {
        skippedBatches++
        continue
      }
    }
    if (control) {
      skippedBatches++
      continue
    }
    batches.push({ bytes: batch, baseOffset, lastOffset, leaderEpoch })
  }
  return { batches, nextFetchOffset, lastEpoch, skippedBatches }
}

interface BatchFields {
  readonly baseOffset: bigint
  readonly lastOffset: bigint
  readonly leaderEpoch: number
  readonly attributes: number
  readonly producerId: bigint
}

/** The header fields of a v2 batch; a magic 0 or 1 entry (one message, or a compressed wrapper named by its last offset) has no producer. */
function batchFields (batch: Buffer): BatchFields {
  const offset = batch.readBigInt64BE(BATCH_OFFSETS.baseOffset)
  if (batch.readInt8(BATCH_OFFSETS.magic) < 2 || batch.length < BATCH_HEADER_BYTES) {
    return { baseOffset: offset, lastOffset: offset, leaderEpoch: -1, attributes: 0, producerId: -1n }
  }
  return {
    baseOffset: offset,
    lastOffset: offset + BigInt(batch.readInt32BE(BATCH_OFFSETS.lastOffsetDelta)),
    leaderEpoch: batch.readInt32BE(BATCH_OFFSETS.partitionLeaderEpoch),
    attributes: batch.readInt16BE(BATCH_OFFSETS.attributes),
    producerId: batch.readBigInt64BE(BATCH_OFFSETS.producerId),
  }
}

/** The type of a control batch's first record (its key: int16 version, int16 type); -1 when it holds none. Control batches are never compressed. */
function controlType (batch: Buffer): number {
  if (batch.readInt32BE(BATCH_OFFSETS.recordCount) < 1) return -1
  const reader = new WireReader(batch, BATCH_HEADER_BYTES)
  reader.varint() // record length
  reader.int8() // attributes
  reader.varlong() // timestamp delta
  reader.varint() // offset delta
  if (reader.varint() < 4) return -1 // key length
  reader.int16() // key version
  return reader.int16()
}
