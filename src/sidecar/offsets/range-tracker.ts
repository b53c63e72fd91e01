import type { MirrorPosition, OffsetRange } from '../../mirror-topics/offset-sync-record.js'
import { partitionKey } from '../../shared/partition-key.js'

interface OpenRange {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly sourceStart: bigint
  readonly targetStart: bigint
  length: bigint
}

interface PartitionRanges {
  /** The range the next acknowledged record may extend. */
  open: OpenRange | undefined
  /** Ranges created or grown since they were last written, by target start. */
  readonly unwritten: Map<bigint, OpenRange>
  /** Target offset after the last acknowledged record, and of which target topic. */
  targetNext: bigint | undefined
  targetTopic: string
}

/**
 * The writer side of exact offset syncs: turns acknowledged records (source offset, target offset)
 * into ranges. A record extends the open range of its partition when both its source and target
 * offsets follow on; otherwise it opens a new range. Only ranges not yet written are kept (the open
 * one stays to be extended), so memory is bounded by what changed since the last flush.
 * Acknowledgements of a partition must arrive in target-offset order (a partition is in one produce request at a time).
 *
 * Invariants, per source partition (`checkInvariants` asserts them):
 * - A: a range covers consecutive source and target offsets, one for one: `length >= 1` source
 *   offsets from `sourceStart` on `length` target offsets from `targetStart` (a record extends a
 *   range only when both its offsets follow on, else it opens a new one).
 * - B: the ranges not yet written never overlap in target offsets of one target topic (each target
 *   offset holds one record). Source offsets may repeat across ranges: records copied again
 *   (exactly-once, after a lane was taken again) get a new range at new target offsets.
 * - C: a range not yet written is filed under its own partition and its target start (its key on
 *   the offset-syncs topic, so a rewrite of a grown range replaces the old one).
 * - D: the open range belongs to the partition's current target topic and ends at or before the
 *   target offset after the last acknowledged record (`targetNext`; before it with fan-out, whose
 *   further outputs extend nothing), which is known whenever a range is open.
 */
export class RangeTracker {
  readonly #partitions = new Map<string, PartitionRanges>()

  /**
   * Throws an Error naming the first invariant (A-D in the class comment) the state breaks. For
   * tests: they call it after every step.
   */
  checkInvariants (): void {
    for (const [k, state] of this.#partitions) {
      const ranges = [...state.unwritten]
      for (const [targetStart, range] of ranges) {
        const at = `range ${range.sourceTopic}/${range.partition} ${range.sourceStart}+${range.length} -> ${range.targetTopic}@${range.targetStart}`
        if (range.length < 1n) throw new Error(`Invariant A broken: ${at} is empty`)
        if (partitionKey(range.sourceTopic, range.partition) !== k || targetStart !== range.targetStart) {
          throw new Error(`Invariant C broken: ${at} filed under another key`)
        }
        for (const [, other] of ranges) {
          if (other === range || other.targetTopic !== range.targetTopic) continue
          if (other.targetStart < range.targetStart + range.length && range.targetStart < other.targetStart + other.length) {
            throw new Error(`Invariant B broken: ${at} overlaps the target offsets of the range from ${other.targetStart}`)
          }
        }
      }
      const { open } = state
      if (open === undefined) continue
      if (open.length < 1n) throw new Error(`Invariant A broken: the open range of ${open.sourceTopic}/${open.partition} is empty`)
      if (open.targetTopic !== state.targetTopic || state.targetNext === undefined || open.targetStart + open.length > state.targetNext) {
        throw new Error(`Invariant D broken: the open range of ${open.sourceTopic}/${open.partition} ends past the last acknowledged target offset ${state.targetNext}`)
      }
    }
  }

  /**
   * Records `sourceOffsets[i]` (ascending) were written to `targetBase + i`.
   *
   * With `fanOut` (a flow with a message handler, where one source record becomes 0..n target
   * records, each carrying its source offset): an offset equal to the last one recorded, written
   * right after the previous record, is a further output of that source record. It extends and
   * opens nothing, so a source offset maps to the target offset of its first output, and a source
   * record with no output is a gap (it maps to the first output of the next record that has one).
   *
   * With `durable` (exactly-once: the ranges were written in the records' own transaction) the
   * ranges move on and the position follows, but nothing becomes unwritten.
   */
  record (
    sourceTopic: string,
    targetTopic: string,
    partition: number,
    sourceOffsets: readonly bigint[],
    targetBase: bigint,
    fanOut = false,
    durable = false
  ): void {
    if (sourceOffsets.length === 0) return
    const state = this.#state(sourceTopic, targetTopic, partition)
    let open = state.open
    for (let i = 0; i < sourceOffsets.length; i++) {
      const source = sourceOffsets[i] as bigint
      const target = targetBase + BigInt(i)
      if (fanOut && open !== undefined && source === open.sourceStart + open.length - 1n && (i > 0 || target === state.targetNext)) continue
      // Invariant A: a range grows only by a record whose source and target offsets both follow on.
      if (open !== undefined && source === open.sourceStart + open.length && target === open.targetStart + open.length) {
        open.length++
      } else {
        open = { sourceTopic, targetTopic, partition, sourceStart: source, targetStart: target, length: 1n }
      }
      // Invariant C: filed under its target start, so a grown range replaces itself.
      if (!durable) state.unwritten.set(open.targetStart, open)
    }
    state.open = open
    state.targetNext = targetBase + BigInt(sourceOffsets.length)
  }

  /**
   * Records `count` consecutive source offsets from `sourceStart` written to `count` consecutive
   * target offsets from `targetBase`: what `record` does with those offsets (without fan-out), in
   * one step instead of one per record (a forwarded batch has no offset gaps).
   */
  recordRun (sourceTopic: string, targetTopic: string, partition: number, sourceStart: bigint, count: number, targetBase: bigint, durable = false): void {
    if (count <= 0) return
    const state = this.#state(sourceTopic, targetTopic, partition)
    let open = state.open
    // Invariant A: as in `record`, both offsets must follow on.
    if (open !== undefined && sourceStart === open.sourceStart + open.length && targetBase === open.targetStart + open.length) {
      open.length += BigInt(count)
    } else {
      open = { sourceTopic, targetTopic, partition, sourceStart, targetStart: targetBase, length: BigInt(count) }
    }
    if (!durable) state.unwritten.set(open.targetStart, open)
    state.open = open
    state.targetNext = targetBase + BigInt(count)
  }

  #state (sourceTopic: string, targetTopic: string, partition: number): PartitionRanges {
    const k = partitionKey(sourceTopic, partition)
    let state = this.#partitions.get(k)
    if (state === undefined) {
      state = { open: undefined, unwritten: new Map(), targetNext: undefined, targetTopic }
      this.#partitions.set(k, state)
    }
    if (state.targetTopic !== targetTopic) {
      // Invariant D: a range never runs from one target topic into another.
      state.open = undefined
      state.targetTopic = targetTopic
    }
    return state
  }

  /** Copies of the ranges created or grown since last written, to write now. */
  unwritten (): OffsetRange[] {
    const out: OffsetRange[] = []
    for (const state of this.#partitions.values()) for (const range of state.unwritten.values()) out.push({ ...range })
    return out
  }

  /** The ranges in `written` are durable; ranges that grew meanwhile stay unwritten. */
  markWritten (written: readonly OffsetRange[]): void {
    for (const range of written) {
      const state = this.#partitions.get(partitionKey(range.sourceTopic, range.partition))
      const current = state?.unwritten.get(range.targetStart)
      if (current !== undefined && current.length === range.length) state?.unwritten.delete(range.targetStart)
    }
  }

  /**
   * The mirror's position for a commit of `sourceNext`, or undefined when this process has
   * written nothing to that partition (then its target position is unknown here).
   */
  position (sourceTopic: string, partition: number, sourceNext: bigint): MirrorPosition | undefined {
    const state = this.#partitions.get(partitionKey(sourceTopic, partition))
    if (state?.targetNext === undefined) return undefined
    return { sourceTopic, targetTopic: state.targetTopic, partition, sourceNext, targetNext: state.targetNext }
  }

  /**
   * For each partition with ranges not yet written, the mirror's position after its last
   * acknowledged record: source offset after that record, target offset after it. Every source
   * offset below is in a range or was passed over in order (acknowledgements arrive in offset
   * order), and the target acknowledged everything below the target offset: it claims nothing
   * the target has not acknowledged.
   */
  acknowledgedPositions (): MirrorPosition[] {
    const out: MirrorPosition[] = []
    for (const state of this.#partitions.values()) {
      const { open, targetNext } = state
      if (state.unwritten.size === 0 || open === undefined || targetNext === undefined) continue
      const { sourceTopic, targetTopic, partition } = open
      out.push({ sourceTopic, targetTopic, partition, sourceNext: open.sourceStart + open.length, targetNext })
    }
    return out
  }

  /** Forgets a partition (after it was reassigned): the next record opens a new range. */
  forget (sourceTopic: string, partition: number): void {
    const state = this.#partitions.get(partitionKey(sourceTopic, partition))
    if (state !== undefined && state.unwritten.size === 0) this.#partitions.delete(partitionKey(sourceTopic, partition))
  }
}
