import type { OffsetSyncIndex, Translation } from '../../mirror-topics/offset-sync-index.js'
import type { OffsetRange } from '../../mirror-topics/offset-sync-record.js'

/**
 * A translation between the two clusters of an active-active pair (or of a failback, where the
 * cluster moved back to holds both its own records and copies of those produced on the other).
 * `reReads` is how many records the group has already consumed that it reads again from
 * `targetOffset`: 0 when the translation is exact.
 */
export type TwoWayTranslation =
  | (Extract<Translation, { status: 'translated' }> & { readonly reReads: bigint })
  | Exclude<Translation, { status: 'translated' }>

/** Half-open intervals [start, end) of offsets, sorted and merged. */
type Intervals = ReadonlyArray<readonly [bigint, bigint]>

function merged (intervals: Array<readonly [bigint, bigint]>): Intervals {
  const sorted = intervals.filter(([s, e]) => s < e).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const out: Array<[bigint, bigint]> = []
  for (const [s, e] of sorted) {
    const last = out.at(-1)
    if (last !== undefined && s <= last[1]) {
      if (e > last[1]) last[1] = e
    } else {
      out.push([s, e])
    }
  }
  return out
}

/** The first offset at or after `x` in none of `intervals`. */
function firstOutside (x: bigint, intervals: Intervals): bigint {
  for (const [s, e] of intervals) if (s <= x && x < e) return e
  return x
}

/** The smallest offset of `wanted` in none of `excluded`, or undefined. */
function minOutside (wanted: Intervals, excluded: Intervals): bigint | undefined {
  for (const [s, e] of wanted) {
    const x = firstOutside(s, excluded)
    if (x < e) return x
  }
  return undefined
}

/** How many offsets of `intervals` are at or after `from`. */
function countFrom (intervals: Intervals, from: bigint): bigint {
  let n = 0n
  for (const [s, e] of intervals) if (e > from) n += e - (s > from ? s : from)
  return n
}

const clamp = (value: bigint, max: bigint): bigint => value < 0n ? 0n : value > max ? max : value

/**
 * Translates a group's committed offset `offset` (the next record it would read) on partition
 * `partition` of `topic`, on the cluster F it leaves, into cluster T, when records flow both ways:
 * - `forward`: the offset syncs of the flow F -> T (on T): where F's own records are on T;
 * - `reverse`: the offset syncs of the flow T -> F (on F): where T's own records are on F.
 *
 * The group consumed exactly F's records below `offset`: some of F's own records and some copies
 * of T's. On T those are F's records' copies (forward ranges) and T's own records (reverse ranges
 * read backwards). When T holds them in the same order as F, the consumed records are a prefix
 * of T and the translation is exact (`reReads` 0). When the two flows interleaved them
 * differently (both clusters took writes at once), no offset is exact; the answer is the lowest
 * T offset of a record the group has not consumed, so nothing is skipped, and `reReads` counts
 * the consumed records at or after it. Records the group has not consumed on T:
 * 1. copies of F's records at or after `offset` (the forward translation, newest copy, or past
 *    the last copy where the next one will go);
 * 2. T's own records whose every copy on F is at or after `offset`;
 * 3. T's own records the reverse flow has not copied yet (at or after its position), which F's
 *    group never saw.
 *
 * Without reverse syncs for the partition (no record of T was ever mirrored to F) this is the
 * forward translation, exact as before. A forward translation that is not `translated` is returned
 * as it is (not yet mirrored: nothing is guessed).
 */
export function translateBothWays (
  forward: OffsetSyncIndex,
  reverse: OffsetSyncIndex | undefined,
  topic: string,
  partition: number,
  offset: bigint
): TwoWayTranslation {
  const fwd = forward.translate(topic, partition, offset)
  if (fwd.status !== 'translated') return fwd
  const toTopic = fwd.targetTopic
  const backRanges = reverse === undefined ? [] : reverse.ranges(toTopic, partition).filter(r => r.targetTopic === topic)
  const backPositionRaw = reverse?.position(toTopic, partition)
  const backPosition = backPositionRaw?.targetTopic === topic ? backPositionRaw : undefined
  if (backRanges.length === 0 && backPosition === undefined) return { ...fwd, reReads: 0n }

  const forwardRanges: OffsetRange[] = forward.ranges(topic, partition).filter(r => r.targetTopic === toTopic)
  // T offsets of copies of F's records the group consumed (F offset below `offset`).
  const consumedCopies = merged(forwardRanges.map(r => [r.targetStart, r.targetStart + clamp(offset - r.sourceStart, r.length)] as const))
  // T's own records (T offsets) with a copy on F below `offset` (consumed), and with copies at or after it.
  const consumedOwn = merged(backRanges.map(r => [r.sourceStart, r.sourceStart + clamp(offset - r.targetStart, r.length)] as const))
  const notConsumedOwn = merged(backRanges.map(r => [r.sourceStart + clamp(offset - r.targetStart, r.length), r.sourceStart + r.length] as const))

  const consumed = merged([...consumedCopies, ...consumedOwn])
  // 1. The forward translation: a copy the group has not read, or (past the last copy) where the
  // next copy will go; T's own records there that the group read on F are passed over.
  let landing = firstOutside(fwd.targetOffset, consumed)
  const own = minOutside(notConsumedOwn, consumedOwn)
  if (own !== undefined && own < landing) landing = own
  if (backPosition !== undefined) {
    const notCopiedYet = firstOutside(backPosition.sourceNext, consumed)
    if (notCopiedYet < landing) landing = notCopiedYet
  }
  const reReads = countFrom(consumedCopies, landing) + countFrom(consumedOwn, landing)
  return { ...fwd, targetOffset: landing, reReads }
}
