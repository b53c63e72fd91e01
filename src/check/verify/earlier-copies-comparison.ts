import { comparePartition, type DigestStream, type PartitionComparisonResult } from './partition-comparison.js'
import { FindingKinds, type ComparisonCounts, type Finding, type RecordComparatorOptions } from './record-comparator.js'
import { RecordFields } from '../../mirror-topics/record-digest.js'

/** What the target held before the copy compared record by record, and how it was classified. */
export interface EarlierCopies {
  /** Target offsets `fromTargetOffset..untilTargetOffset-1` were read as earlier copies. */
  readonly fromTargetOffset: number
  readonly untilTargetOffset: number
  /** Earlier copies of checked source records. */
  readonly duplicated: number
  /** Records there that are no copy of any source record read. */
  readonly extra: number
  /** Copies of checked source records with at most two fields changed. */
  readonly changed: number
  /** Records below `extrasUncountedBelowOffset` that match no source record read: neither extra nor changed (written before the mirror's copy, or copies of records the source no longer holds). */
  readonly uncounted?: number
}

export interface EarlierCopiesComparisonOptions extends RecordComparatorOptions {
  /** Source digests from `fromOffset` to the source end, in offset order. */
  readonly source: (fromOffset: number) => DigestStream
  /** Target digests from `fromOffset` up to `untilOffset` (exclusive; the end when undefined), in offset order. */
  readonly target: (fromOffset: number, untilOffset?: number) => DigestStream
  /** The checked source range: `sourceFromOffset..sourceUntilOffset-1`. */
  readonly sourceFromOffset: number
  readonly sourceUntilOffset: number
  /** The source's earliest offset: copies of records before the checked range are recognised (and not counted) from here on. */
  readonly sourceEarliestOffset: number
  /** Target offset of the copy compared record by record (where the alignment, e.g. the offset syncs, points). */
  readonly matchTargetOffset: number
  /** Lowest target offset that may hold an earlier copy of the checked range; at or above `matchTargetOffset`: none. */
  readonly earliestCopyTargetOffset: number
  /**
   * Target records below this offset that match no source record read are not counted (extra or
   * changed): written before the mirror's copy, or copies of records the source no longer holds.
   * Duplicates there count.
   */
  readonly extrasUncountedBelowOffset?: number
  readonly digestRangeRecords?: number
  readonly onProgress?: (sourceOffset: number, bytes: number) => void
}

export interface EarlierCopiesComparisonResult extends PartitionComparisonResult {
  /** Set when target records before `matchTargetOffset` were read. */
  readonly earlierCopies?: EarlierCopies
}

async function closeAll (...streams: DigestStream[]): Promise<void> {
  await Promise.allSettled(streams.map(async s => await s.close?.()))
}

/**
 * Accounts for every target record from the earliest copy of the checked source range on:
 *
 * 1. target `earliestCopyTargetOffset..matchTargetOffset-1` (copies made before the one the
 *    alignment points at, e.g. by a mirror killed before its offset syncs were durable), compared
 *    with the source by a `RecordComparator` in `earlierCopies` mode: a copy of a checked source
 *    record is duplicated, a copy of a record outside the checked range is not counted, anything
 *    else is extra (or changed);
 * 2. target `matchTargetOffset..` compared record by record with the checked range, as
 *    `comparePartition` does: matched, missing, duplicated, extra, changed, out of order.
 *
 * The counts are the sum of both; the source is read twice only where step 1 has records to
 * classify, and only as far as they reach. Memory is bounded as in `comparePartition`.
 */
export async function compareWithEarlierCopies (options: EarlierCopiesComparisonOptions): Promise<EarlierCopiesComparisonResult> {
  const { sourceFromOffset: from, sourceUntilOffset: until, matchTargetOffset: match } = options
  const comparatorOptions = {
    ...(options.lookaheadRecords === undefined ? {} : { lookaheadRecords: options.lookaheadRecords }),
    ...(options.duplicateWindowRecords === undefined ? {} : { duplicateWindowRecords: options.duplicateWindowRecords }),
    ...(options.maxFindingsPerKind === undefined ? {} : { maxFindingsPerKind: options.maxFindingsPerKind }),
    ...(options.digestRangeRecords === undefined ? {} : { digestRangeRecords: options.digestRangeRecords }),
  }
  let earlier: PartitionComparisonResult | undefined
  let earlierCopies: EarlierCopies | undefined
  if (options.earliestCopyTargetOffset < match) {
    const targetFrom = options.earliestCopyTargetOffset
    // A stretch of n target records holds at most n copies of records before the range: read that far back.
    const sourceFrom = Math.max(options.sourceEarliestOffset, from - (match - targetFrom))
    const classify = async (fromTarget: number, untilTarget: number): Promise<PartitionComparisonResult> => {
      const source = options.source(sourceFrom)
      const target = options.target(fromTarget, untilTarget)
      try {
        return await comparePartition({ ...comparatorOptions, source, target, earlierCopies: { sourceFromOffset: from, sourceUntilOffset: until } })
      } finally {
        await closeAll(source, target)
      }
    }
    // Below `extrasUncountedBelowOffset` only duplicates count; from there on, everything the comparator finds.
    const below = Math.min(match, Math.max(targetFrom, options.extrasUncountedBelowOffset ?? targetFrom))
    const head = below > targetFrom ? await classify(targetFrom, below) : undefined
    const rest = below < match ? await classify(below, match) : undefined
    const uncounted = head === undefined ? 0 : head.counts.extra + head.counts.changed
    const headDuplicates = head === undefined ? undefined : onlyDuplicates(head)
    earlier = headDuplicates === undefined ? rest! : rest === undefined ? headDuplicates : combine(headDuplicates, rest, options.maxFindingsPerKind ?? 100)
    earlierCopies = {
      fromTargetOffset: targetFrom,
      untilTargetOffset: match,
      duplicated: earlier.counts.duplicated,
      extra: earlier.counts.extra,
      changed: earlier.counts.changed,
      ...(uncounted === 0 ? {} : { uncounted }),
    }
  }
  const source = options.source(from)
  const target = options.target(match)
  let main: PartitionComparisonResult
  try {
    main = await comparePartition({
      ...comparatorOptions,
      source,
      target,
      sourceUntilOffset: until,
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    })
  } finally {
    await closeAll(source, target)
  }
  if (earlier === undefined) return main
  return { ...combine(earlier, main, options.maxFindingsPerKind ?? 100), ...(earlierCopies === undefined ? {} : { earlierCopies }) }
}

/** `later`'s comparison with what `earlier` (lower target offsets) added to it. */
function combine (earlier: PartitionComparisonResult, later: PartitionComparisonResult, perKind: number): PartitionComparisonResult {
  return {
    counts: addCounts(later.counts, earlier.counts),
    findings: mergeFindings(earlier.findings, later.findings, perKind),
    rangesEqual: later.rangesEqual + earlier.rangesEqual,
    rangesDiffering: later.rangesDiffering + earlier.rangesDiffering,
    ...(later.targetStopOffset === undefined ? {} : { targetStopOffset: later.targetStopOffset }),
    ...(later.matchedRecently === undefined ? {} : { matchedRecently: later.matchedRecently }),
  }
}

/** `result` with its duplicates only: its extra and changed records neither counted nor listed. */
function onlyDuplicates (result: PartitionComparisonResult): PartitionComparisonResult {
  const changedFields = { ...result.counts.changedFields }
  for (const field of RecordFields) changedFields[field] = 0
  return {
    ...result,
    counts: { ...result.counts, extra: 0, changed: 0, changedFields },
    findings: result.findings.filter(f => f.kind === 'duplicated'),
  }
}

/** The main comparison's counts plus what the earlier copies added (duplicated, extra, changed; nothing there is checked or missing). */
function addCounts (main: ComparisonCounts, earlier: ComparisonCounts): ComparisonCounts {
  const changedFields = { ...main.changedFields }
  for (const field of RecordFields) changedFields[field] += earlier.changedFields[field]
  return {
    ...main,
    duplicated: main.duplicated + earlier.duplicated,
    extra: main.extra + earlier.extra,
    changed: main.changed + earlier.changed,
    changedFields,
  }
}

/** Earlier copies' findings first (lower target offsets), at most `perKind` of each kind. */
function mergeFindings (earlier: readonly Finding[], main: readonly Finding[], perKind: number): Finding[] {
  const kept = new Map(FindingKinds.map(kind => [kind, 0]))
  const out: Finding[] = []
  for (const finding of [...earlier, ...main]) {
    const n = kept.get(finding.kind)!
    if (n >= perKind) continue
    kept.set(finding.kind, n + 1)
    out.push(finding)
  }
  return out
}
