import type { MirrorPosition, OffsetRange, OffsetSyncEntry } from './offset-sync-record.js'
import { partitionKey } from '../shared/partition-key.js'

/** The outcome of translating one source offset. */
export type Translation =
  /** `targetOffset` is where the next record at or after the source offset is (or will be) on the target. */
  | { readonly status: 'translated', readonly targetTopic: string, readonly targetOffset: bigint, readonly basis: 'range' | 'position' }
  /** The source offset is beyond what the mirror has copied; `mirroredUpTo` is how far it got (exclusive). */
  | { readonly status: 'not-yet-mirrored', readonly mirroredUpTo: bigint | undefined }
  /** The mirror never wrote a sync for this partition. */
  | { readonly status: 'no-syncs' }

/**
 * Everything the offset-syncs topic says, replayed in order: ranges by key (a rewrite of a key
 * replaces it, a tombstone removes it) and the last position written per partition. Pure: the
 * Kafka reader feeds it with `apply`.
 *
 * Invariants (`checkInvariants` asserts them):
 * - A: each range held covers consecutive source and target offsets, one for one, and is not
 *   empty (`length >= 1`; `decodeOffsetSync` refuses an empty one).
 * - B: each range is filed under its own source partition and its target start, as its key on the
 *   topic is, so at most one range per key: the last one written.
 * - C: each position is filed under its own source partition: at most one, the last one written.
 * - D: no more ranges and positions are held than records were applied.
 *
 * Ranges are not required to be disjoint: what the topic says is kept. Source offsets copied
 * again (after a crash, at-least-once) are in several ranges at different target offsets, and a
 * target topic deleted and made again starts its offsets over; `translateOffset` takes the copy
 * with the highest target start.
 */
export class OffsetSyncIndex {
  readonly #ranges = new Map<string, Map<string, OffsetRange>>()
  readonly #positions = new Map<string, MirrorPosition>()
  #records = 0

  /**
   * Throws an Error naming the first invariant (A-D in the class comment) the state breaks. For
   * tests: they call it after every step.
   */
  checkInvariants (): void {
    let held = this.#positions.size
    for (const [k, byKey] of this.#ranges) {
      held += byKey.size
      for (const [targetStart, range] of byKey) {
        const at = `range ${range.sourceTopic}/${range.partition} ${range.sourceStart}+${range.length} -> ${range.targetTopic}@${range.targetStart}`
        if (range.length < 1n) throw new Error(`Invariant A broken: ${at} is empty`)
        if (partitionKey(range.sourceTopic, range.partition) !== k || targetStart !== range.targetStart.toString()) {
          throw new Error(`Invariant B broken: ${at} filed under another key`)
        }
      }
    }
    for (const [k, position] of this.#positions) {
      if (partitionKey(position.sourceTopic, position.partition) !== k) {
        throw new Error(`Invariant C broken: the position of ${position.sourceTopic}/${position.partition} filed under another partition`)
      }
    }
    if (held > this.#records) throw new Error(`Invariant D broken: ${held} ranges and positions held from ${this.#records} records`)
  }

  /** How many sync records were applied. */
  get records (): number { return this.#records }

  apply (entry: OffsetSyncEntry): void {
    this.#records++
    if (entry.kind === 'range') {
      const { range } = entry
      const k = partitionKey(range.sourceTopic, range.partition)
      let byKey = this.#ranges.get(k)
      if (byKey === undefined) this.#ranges.set(k, byKey = new Map())
      // Invariant B: keyed as on the topic, so a rewrite of the key replaces the range.
      byKey.set(range.targetStart.toString(), range)
    } else if (entry.kind === 'position') {
      const { position } = entry
      // Invariant C: the last position written per partition wins.
      this.#positions.set(partitionKey(position.sourceTopic, position.partition), position)
    } else {
      const parsed = JSON.parse(entry.key) as [string, string, number, string?]
      const k = partitionKey(parsed[1], parsed[2])
      if (parsed[0] === 'position') this.#positions.delete(k)
      else this.#ranges.get(k)?.delete(String(parsed[3]))
    }
  }

  ranges (sourceTopic: string, partition: number): OffsetRange[] {
    return [...(this.#ranges.get(partitionKey(sourceTopic, partition))?.values() ?? [])]
  }

  /** The range starting at the lowest source offset of a partition: where this flow's copy of it begins. */
  firstRange (sourceTopic: string, partition: number): OffsetRange | undefined {
    let first: OffsetRange | undefined
    for (const range of this.#ranges.get(partitionKey(sourceTopic, partition))?.values() ?? []) {
      if (first === undefined || range.sourceStart < first.sourceStart) first = range
    }
    return first
  }

  position (sourceTopic: string, partition: number): MirrorPosition | undefined {
    return this.#positions.get(partitionKey(sourceTopic, partition))
  }

  /** Source topics and partitions the syncs know about. */
  partitions (): Array<{ sourceTopic: string, partition: number }> {
    const keys = new Set([...this.#ranges.keys(), ...this.#positions.keys()])
    return [...keys].map(k => {
      const at = k.lastIndexOf('\u0000')
      return { sourceTopic: k.slice(0, at), partition: Number(k.slice(at + 1)) }
    })
  }

  translate (sourceTopic: string, partition: number, sourceOffset: bigint): Translation {
    return translateOffset(this.ranges(sourceTopic, partition), this.position(sourceTopic, partition), sourceOffset)
  }
}

/**
 * Maps a source offset (a group's committed offset: the next record it would read) to the target
 * offset of that record's copy, exactly:
 * - the next mirrored record at or after `sourceOffset` is found in the ranges (offsets in a gap -
 *   control records, compacted or aborted data - map to the next record that exists);
 * - when several ranges cover it (the mirror copied it again after a crash), the newest copy wins:
 *   the range with the highest target start, so the reader skips the older copies;
 * - past the last mirrored record but not past the mirror's position, it is the target offset
 *   the next mirrored record will get (`position.targetNext`);
 * - past the position, it is not yet mirrored: no guess.
 */
export function translateOffset (ranges: readonly OffsetRange[], position: MirrorPosition | undefined, sourceOffset: bigint): Translation {
  if (ranges.length === 0 && position === undefined) return { status: 'no-syncs' }
  let next: bigint | undefined
  let mirroredEnd: bigint | undefined
  for (const range of ranges) {
    const end = range.sourceStart + range.length
    if (mirroredEnd === undefined || end > mirroredEnd) mirroredEnd = end
    if (end <= sourceOffset) continue
    const candidate = range.sourceStart > sourceOffset ? range.sourceStart : sourceOffset
    if (next === undefined || candidate < next) next = candidate
  }
  if (next !== undefined) {
    let best: OffsetRange | undefined
    for (const range of ranges) {
      if (range.sourceStart <= next && next < range.sourceStart + range.length && (best === undefined || range.targetStart > best.targetStart)) best = range
    }
    const winner = best as OffsetRange
    return { status: 'translated', targetTopic: winner.targetTopic, targetOffset: winner.targetStart + (next - winner.sourceStart), basis: 'range' }
  }
  if (position !== undefined && sourceOffset <= position.sourceNext) {
    return { status: 'translated', targetTopic: position.targetTopic, targetOffset: position.targetNext, basis: 'position' }
  }
  const upTo = position === undefined ? mirroredEnd : mirroredEnd === undefined || position.sourceNext > mirroredEnd ? position.sourceNext : mirroredEnd
  return { status: 'not-yet-mirrored', mirroredUpTo: upTo }
}
