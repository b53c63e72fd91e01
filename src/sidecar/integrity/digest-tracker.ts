import { HashAccumulator } from '../../mirror-topics/record-digest.js'
import type { RangeDigest } from '../../mirror-topics/range-digest.js'
import { partitionKey } from '../../shared/partition-key.js'

interface OpenDigest {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly sourceFirst: bigint
  sourceLast: bigint
  readonly targetStart: bigint
  readonly accumulator: HashAccumulator
}

interface PartitionDigests {
  /** The digest the next acknowledged record may extend. */
  open: OpenDigest | undefined
  /** Digests created or grown since they were last written, by target start. */
  readonly unwritten: Map<bigint, OpenDigest>
}

/** One acknowledged record: its source offset and `digestRecord(record).hash`. */
export interface DigestedRecord {
  readonly sourceOffset: bigint
  readonly hash: number
}

function snapshot (open: OpenDigest): RangeDigest {
  return {
    sourceTopic: open.sourceTopic,
    targetTopic: open.targetTopic,
    partition: open.partition,
    sourceFirst: open.sourceFirst,
    sourceLast: open.sourceLast,
    targetStart: open.targetStart,
    count: open.accumulator.count,
    hash: open.accumulator.value,
  }
}

/**
 * Turns acknowledged records into range digests (`RangeDigest`): a record extends the open digest
 * of its partition when its target offset follows on and the digest holds fewer than
 * `maxRecords`; otherwise it opens a new one. Only digests not yet written are kept (plus the open
 * one, three numbers of hash state whatever its size), so memory is bounded by what changed since
 * the last write. Records of a partition must arrive in target-offset order.
 */
export class DigestTracker {
  readonly #partitions = new Map<string, PartitionDigests>()

  constructor (readonly maxRecords: number) {}

  /** `records[i]` was written to `targetBase + i` of `targetTopic`. */
  record (sourceTopic: string, targetTopic: string, partition: number, targetBase: bigint, records: readonly DigestedRecord[]): void {
    if (records.length === 0) return
    const k = partitionKey(sourceTopic, partition)
    let state = this.#partitions.get(k)
    if (state === undefined) {
      state = { open: undefined, unwritten: new Map() }
      this.#partitions.set(k, state)
    }
    let open = state.open
    for (let i = 0; i < records.length; i++) {
      const { sourceOffset, hash } = records[i] as DigestedRecord
      const target = targetBase + BigInt(i)
      const follows =
        open !== undefined &&
        open.targetTopic === targetTopic &&
        target === open.targetStart + BigInt(open.accumulator.count) &&
        open.accumulator.count < this.maxRecords
      if (!follows) {
        open = {
          sourceTopic,
          targetTopic,
          partition,
          sourceFirst: sourceOffset,
          sourceLast: sourceOffset,
          targetStart: target,
          accumulator: new HashAccumulator(),
        }
      }
      const current = open as OpenDigest
      current.accumulator.add(hash)
      current.sourceLast = sourceOffset
      state.unwritten.set(current.targetStart, current)
    }
    state.open = open
  }

  /** The digests created or grown since last written, as they are now. */
  unwritten (): RangeDigest[] {
    const out: RangeDigest[] = []
    for (const state of this.#partitions.values()) for (const open of state.unwritten.values()) out.push(snapshot(open))
    return out
  }

  /** The digests in `written` are durable; digests that grew meanwhile stay unwritten. */
  markWritten (written: readonly RangeDigest[]): void {
    for (const digest of written) {
      const state = this.#partitions.get(partitionKey(digest.sourceTopic, digest.partition))
      const current = state?.unwritten.get(digest.targetStart)
      if (current !== undefined && current.accumulator.count === digest.count) state?.unwritten.delete(digest.targetStart)
    }
  }
}
