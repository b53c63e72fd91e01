import type { DigestStream } from './partition-comparison.js'

/**
 * The target records past the copy of the compared range of one partition: what the mirror
 * copied of source records beyond its committed position (acknowledged by the target, not yet
 * committed on the source, or copied by a run that stopped before its commit), and the duplicates
 * among them. `verify` compares up to the committed position only; this accounts for the rest.
 */
export interface BeyondCommitted {
  /** Target offsets `fromTargetOffset..untilTargetOffset-1` lie beyond the compared range. */
  readonly fromTargetOffset: number
  readonly untilTargetOffset: number
  /** Records there (transaction markers excluded). */
  readonly records: number
  /**
   * Records there that are one more copy of a source record already on the target: more copies of
   * an identity (key, value, headers, timestamp) than the source holds past the committed
   * position, or a copy of a record just compared.
   */
  readonly duplicated: number
  /** Records there that match no source record past the committed position (read after the target's): a wrong copy in flight, or no copy at all. */
  readonly unmatched: number
  /** The first duplicated target offsets, at most `maxFindings`. */
  readonly duplicateOffsets: readonly number[]
  /** The first target offsets that match no source record past the committed position, at most `maxFindings`. */
  readonly unmatchedOffsets: readonly number[]
  /** How many records were examined: all of them, unless there were more than `maxRecords`. */
  readonly examined: number
}

export interface BeyondCommittedOptions {
  /** Source digests from the committed position (the end of the compared range) to the source end. */
  readonly source: DigestStream
  /** Target digests from `fromTargetOffset` to `untilTargetOffset`. */
  readonly target: DigestStream
  readonly fromTargetOffset: number
  readonly untilTargetOffset: number
  /** True for an identity the comparison of the range just matched (a copy of a compared record). */
  readonly matchedRecently: (hash: number) => boolean
  /** Records examined on each side at most (memory: one map entry per distinct identity); default 500000. */
  readonly maxRecords?: number
  readonly maxFindings?: number
}

/**
 * Reads the target's records beyond the compared range and the source's past the committed
 * position, and counts the copies of each identity: a target record is a duplicate when its
 * identity was copied more often than the source holds it there, or when it is a copy of a record
 * the range comparison just matched. Past `maxRecords` records are counted, not examined.
 */
export async function examineBeyondCommitted (options: BeyondCommittedOptions): Promise<BeyondCommitted> {
  const maxRecords = options.maxRecords ?? 500_000
  const maxFindings = options.maxFindings ?? 20
  const inSource = new Map<number, number>()
  let sourceRead = 0
  for (let chunk = await options.source.next(); chunk !== null && sourceRead < maxRecords; chunk = await options.source.next()) {
    for (const digest of chunk) {
      if (sourceRead++ >= maxRecords) break
      inSource.set(digest.hash, (inSource.get(digest.hash) ?? 0) + 1)
    }
  }
  const copies = new Map<number, number>()
  const duplicateOffsets: number[] = []
  const unmatchedOffsets: number[] = []
  let records = 0
  let examined = 0
  let duplicated = 0
  let unmatched = 0
  for (let chunk = await options.target.next(); chunk !== null; chunk = await options.target.next()) {
    for (const digest of chunk) {
      records++
      if (examined >= maxRecords) continue
      examined++
      const copy = (copies.get(digest.hash) ?? 0) + 1
      copies.set(digest.hash, copy)
      const held = inSource.get(digest.hash) ?? 0
      if (copy <= held) continue
      if (held > 0 || options.matchedRecently(digest.hash)) {
        duplicated++
        if (duplicateOffsets.length < maxFindings) duplicateOffsets.push(digest.offset)
      } else {
        unmatched++
        if (unmatchedOffsets.length < maxFindings) unmatchedOffsets.push(digest.offset)
      }
    }
  }
  return {
    fromTargetOffset: options.fromTargetOffset,
    untilTargetOffset: options.untilTargetOffset,
    records,
    duplicated,
    unmatched,
    duplicateOffsets,
    unmatchedOffsets,
    examined,
  }
}
