import type { MirrorPosition, OffsetRange } from '../../mirror-topics/offset-sync-record.js'

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

function key (topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}

/**
 * The writer side of exact offset syncs: turns acknowledged records (source offset, target offset)
 * into ranges. A record extends the open range of its partition when both its source and target
 * offsets follow on; otherwise it opens a new range. Only ranges not yet written are kept (the open
 * one stays to be extended), so memory is bounded by what changed since the last flush.
 * Acknowledgements of a partition must arrive in target-offset order (a partition is in one produce request at a time).
 */
export class RangeTracker {
  readonly #partitions = new Map<string, PartitionRanges>()

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
      if (open !== undefined && source === open.sourceStart + open.length && target === open.targetStart + open.length) {
        open.length++
      } else {
        open = { sourceTopic, targetTopic, partition, sourceStart: source, targetStart: target, length: 1n }
      }
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
    const k = key(sourceTopic, partition)
    let state = this.#partitions.get(k)
    if (state === undefined) {
      state = { open: undefined, unwritten: new Map(), targetNext: undefined, targetTopic }
      this.#partitions.set(k, state)
    }
    if (state.targetTopic !== targetTopic) {
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
      const state = this.#partitions.get(key(range.sourceTopic, range.partition))
      const current = state?.unwritten.get(range.targetStart)
      if (current !== undefined && current.length === range.length) state?.unwritten.delete(range.targetStart)
    }
  }

  /**
   * The mirror's position for a commit of `sourceNext`, or undefined when this process has
   * written nothing to that partition (then its target position is unknown here).
   */
  position (sourceTopic: string, partition: number, sourceNext: bigint): MirrorPosition | undefined {
    const state = this.#partitions.get(key(sourceTopic, partition))
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
    const state = this.#partitions.get(key(sourceTopic, partition))
    if (state !== undefined && state.unwritten.size === 0) this.#partitions.delete(key(sourceTopic, partition))
  }
}
