import type { CopyVerification } from '../verify/copy-verification.js'
import { type ComparisonCounts, type FindingKind, FindingKinds } from '../verify/record-comparator.js'
import {
  beyondCommittedTotal,
  describeFinding,
  findMisplaced,
  type MisplacedRecord,
  type PartitionVerification,
  totalCounts,
  unverifiable,
  verificationPassed,
  vouchedRange,
} from '../verify/verification-report.js'
import { alignedBy, type AlignedBy, type AlignmentChoice } from '../verify/alignment-choice.js'
import { render, type Column } from '../cli/output.js'
import type { VerifyArgs } from './verify-args.js'

function partitionList (partitions: readonly number[]): string {
  return `partition${partitions.length === 1 ? '' : 's'} ${partitions.join(',')}`
}

/** One footer line: which partitions were aligned how. */
function alignmentLine (choice: AlignmentChoice, byPartition: ReadonlyArray<[number, AlignedBy]>): string {
  const synced = byPartition.filter(([, by]) => by === 'offset-syncs').map(([p]) => p)
  const ordered = byPartition.filter(([, by]) => by === 'order').map(([p]) => p)
  const parts = [
    ...(synced.length > 0 ? [`offset-syncs (${choice.offsetSyncsTopic}) on ${partitionList(synced)}`] : []),
    ...(ordered.length > 0
      ? [`order on ${partitionList(ordered)} (${choice.orderReason ?? `no offset sync in ${choice.offsetSyncsTopic} covers the start`})`]
      : []),
  ]
  return `alignment: ${parts.length > 0 ? parts.join('; ') : 'no partitions'}`
}

/** Partitions named one by one in the table's summary; past that, in total (per partition in --format json). */
const COVERAGE_PARTITIONS_LISTED = 8

/**
 * The summary's lines on what was covered: the source range checked per partition (or in total)
 * and what bounds it, then the target's records beyond the mirror's committed position (copies
 * not committed yet, and duplicates among them), which are counted but not compared.
 */
function coverageLines (
  partitions: readonly PartitionVerification[],
  upTo: 'to-offset' | 'committed' | 'end',
  args: Pick<VerifyArgs, 'group' | 'to-offset'>
): string[] {
  const bound =
    upTo === 'to-offset'
      ? `--to-offset ${args['to-offset']}`
      : upTo === 'committed'
        ? `the committed position of group '${args.group}'`
        : `the source end offsets (no group '${args.group}' on the source)`
  const ranges = (p: PartitionVerification): string => (p.sourceUntilOffset > p.sourceFromOffset ? `${p.sourceFromOffset}..${p.sourceUntilOffset - 1}` : 'none')
  const checked =
    partitions.length <= COVERAGE_PARTITIONS_LISTED
      ? `checked: source offsets ${partitions.map(p => `${ranges(p)} of partition ${p.partition}`).join(', ')} (up to ${bound})`
      : `checked: source offsets of ${partitions.length} partitions from their start up to ${bound}, ${partitions.reduce((n, p) => n + Math.max(0, p.sourceUntilOffset - p.sourceFromOffset), 0)} offsets in all (per partition: SOURCE-RANGE above)`
  const beyond = beyondCommittedTotal(partitions)
  if (beyond.records === 0) return [checked, 'beyond the committed position: no records on the target']
  const where = partitions
    .filter(p => (p.beyondCommitted?.records ?? 0) > 0)
    .slice(0, COVERAGE_PARTITIONS_LISTED)
    .map(p => `${p.alignment.targetPartition}@${p.beyondCommitted!.fromTargetOffset}..${p.beyondCommitted!.untilTargetOffset - 1}`)
    .join(', ')
  const more = beyond.partitions > COVERAGE_PARTITIONS_LISTED ? ` and ${beyond.partitions - COVERAGE_PARTITIONS_LISTED} more partitions` : ''
  const verdict =
    beyond.duplicated > 0
      ? `${beyond.duplicated} of them duplicated (one more copy of a source record already on the target)`
      : 'copies not committed yet, no duplicates among them'
  const unmatched = beyond.unmatched > 0 ? `; ${beyond.unmatched} match no source record past the committed position` : ''
  return [checked, `beyond the committed position: ${beyond.records} records on the target (target ${where}${more}), not compared: ${verdict}${unmatched}`]
}

/** Where the target was read from: the aligned copy, or the earliest copy before it and then the aligned one (`0@0, match 0@2000`). */
function targetFrom (v: PartitionVerification): string {
  const { targetPartition, targetOffset } = v.alignment
  return v.earlierCopies === undefined
    ? `${targetPartition}@${targetOffset}`
    : `${targetPartition}@${v.earlierCopies.fromTargetOffset}, match ${targetPartition}@${targetOffset}`
}

type Row = { label: string | number, v?: PartitionVerification, counts: PartitionVerification['counts'], first?: string }

const columns: Column<Row>[] = [
  { header: 'PARTITION', value: r => r.label },
  {
    header: 'SOURCE-RANGE',
    value: r =>
      r.v === undefined ? undefined : r.v.sourceUntilOffset > r.v.sourceFromOffset ? `${r.v.sourceFromOffset}-${r.v.sourceUntilOffset - 1}` : 'none',
    json: 'sourceRange',
  },
  { header: 'TARGET-FROM', value: r => (r.v === undefined ? undefined : targetFrom(r.v)), json: 'targetFrom' },
  { header: 'CHECKED', value: r => r.counts.checked },
  { header: 'MISSING', value: r => r.counts.missing },
  { header: 'DUPLICATED', value: r => r.counts.duplicated },
  { header: 'EXTRA', value: r => r.counts.extra },
  { header: 'CHANGED', value: r => r.counts.changed },
  { header: 'OUT-OF-ORDER', value: r => r.counts.outOfOrder },
  { header: 'FIRST-PROBLEM', value: r => r.first },
]

const countOf: Record<FindingKind, keyof ComparisonCounts> = {
  missing: 'missing',
  duplicated: 'duplicated',
  extra: 'extra',
  changed: 'changed',
  'out-of-order': 'outOfOrder',
}

/** Findings counted but not listed because of `--max-findings`, per kind (kinds with none left out). */
function findingsNotListed (p: PartitionVerification): Partial<Record<FindingKind, number>> {
  const out: Partial<Record<FindingKind, number>> = {}
  for (const kind of FindingKinds) {
    const unlisted = (p.counts[countOf[kind]] as number) - p.findings.filter(f => f.kind === kind).length
    if (unlisted > 0) out[kind] = unlisted
  }
  return out
}

/** What a verify found, judged: the totals, and whether it passed (`matched` and every partition judged). */
export interface VerifyVerdict {
  readonly total: ComparisonCounts
  readonly misplaced: MisplacedRecord[]
  /** The copy did not catch up within --wait: fails the check even when what was mirrored matches. */
  readonly waitTimedOut: boolean
  /** Partitions whose source records are gone (deleted, expired) while the target holds some: not judged, so not passed. */
  readonly notVerified: number[]
  readonly beyond: ReturnType<typeof beyondCommittedTotal>
  readonly matched: boolean
  readonly passed: boolean
}

/** Judges a verify's result under the flags that allow duplicates and records in flight. */
export function judgeVerification (result: CopyVerification, args: Pick<VerifyArgs, 'allow-duplicates' | 'allow-in-flight'>): VerifyVerdict {
  const total = totalCounts(result.partitions)
  const waitTimedOut = result.waitTimedOut
  const notVerified = unverifiable(result.partitions).map(p => p.partition)
  const beyond = beyondCommittedTotal(result.partitions)
  // A record past the committed position (or the source end) that copies no source record fails the check unless
  // --allow-in-flight; past --to-offset the target is out of the range asked for.
  const inFlightFailing = args['allow-in-flight'] || result.checkedUpTo === 'to-offset' ? 0 : beyond.unmatched
  const matched = verificationPassed(total, args['allow-duplicates'], beyond.duplicated, inFlightFailing) && !waitTimedOut
  return { total, misplaced: findMisplaced(result.partitions), waitTimedOut, notVerified, beyond, matched, passed: matched && notVerified.length === 0 }
}

/** A verify's result with what it was compared by and how long it took, and its verdict: what the report shows. */
export interface VerifyReport {
  readonly targetTopic: string
  readonly choice: AlignmentChoice
  /** Notes of the alignment choice (before those of the verify). */
  readonly alignmentNotes: readonly string[]
  readonly result: CopyVerification
  readonly seconds: number
  readonly verdict: VerifyVerdict
}

/** The lines of records found in another target partition than their source partition's. */
export function misplacedLines (misplaced: readonly MisplacedRecord[]): string[] {
  return misplaced.map(
    m =>
      `wrong partition: source ${m.sourcePartition}@${m.sourceOffset} is missing from target partition ${m.sourcePartition} and is extra in target partition ${m.targetPartition} at offset ${m.targetOffset}`
  )
}

function byPartitionOf (result: CopyVerification): Array<[number, AlignedBy]> {
  return result.partitions.map(p => [p.partition, alignedBy(p.alignment)] as [number, AlignedBy])
}

/** The report as JSON (`--format json`). */
export function verifyJson (report: VerifyReport, args: Pick<VerifyArgs, 'topic'>): string {
  const { result, choice, verdict } = report
  return JSON.stringify(
    {
      topic: args.topic,
      targetTopic: report.targetTopic,
      passed: verdict.passed,
      waitTimedOut: verdict.waitTimedOut,
      notVerified: verdict.notVerified,
      seconds: report.seconds,
      checkedUpTo: result.checkedUpTo,
      total: verdict.total,
      beyondCommitted: verdict.beyond,
      alignment: { offsetSyncsTopic: choice.offsetSyncsTopic ?? null, byPartition: Object.fromEntries(byPartitionOf(result)) },
      partitions: result.partitions.map(p => ({
        partition: p.partition,
        sourceFromOffset: p.sourceFromOffset,
        sourceUntilOffset: p.sourceUntilOffset,
        targetFromOffset: p.targetFromOffset,
        targetUntilOffset: p.targetUntilOffset,
        alignment: p.alignment,
        earlierCopies: p.earlierCopies ?? null,
        beyondCommitted: p.beyondCommitted ?? null,
        counts: p.counts,
        findings: p.findings.map(({ hash: _hash, ...f }) => f),
        findingsNotListed: findingsNotListed(p),
        notes: p.notes,
      })),
      misplaced: verdict.misplaced,
      notes: [...report.alignmentNotes, ...result.notes],
    },
    null,
    2
  ) + '\n'
}

/** One row per partition, its first problem (lowest offset) named, and the total. */
function verifyRows (result: CopyVerification, total: ComparisonCounts): Row[] {
  const rows: Row[] = result.partitions.map(p => ({
    label: p.partition,
    v: p,
    counts: p.counts,
    ...(p.findings[0] === undefined
      ? {}
      : {
          first: describeFinding(
            [...p.findings].sort((a, b) => (a.sourceOffset ?? a.targetOffset ?? 0) - (b.sourceOffset ?? b.targetOffset ?? 0))[0]!,
            p.partition,
            p.alignment.targetPartition
          ),
        }),
  }))
  rows.push({ label: 'TOTAL', counts: total })
  return rows
}

/** Under the table: every finding, the findings not listed, and the target records beyond the committed position that fail the check. */
function findingsLines (report: VerifyReport, args: Pick<VerifyArgs, 'max-findings'>): string[] {
  const { result, verdict } = report
  const findingLines = result.partitions.flatMap(p => p.findings.map(f => describeFinding(f, p.partition, p.alignment.targetPartition)))
  const unlistedLines = result.partitions.flatMap(p => {
    const unlisted = Object.entries(findingsNotListed(p)).map(([kind, n]) => `${n} more ${kind}`)
    return unlisted.length === 0 ? [] : [`partition ${p.partition}: ${unlisted.join(', ')} not listed (--max-findings ${args['max-findings']})`]
  })
  const beyondLines = result.partitions.flatMap(p =>
    (p.beyondCommitted?.duplicateOffsets ?? []).map(
      offset =>
        `duplicated beyond the committed position: target ${p.alignment.targetPartition}@${offset} is one more copy of a source record already on the target`
    )
  )
  const unmatchedLines = result.partitions.flatMap(p =>
    (result.checkedUpTo === 'to-offset' ? [] : p.beyondCommitted?.unmatchedOffsets ?? []).map(
      offset =>
        `no source record beyond the committed position: target ${p.alignment.targetPartition}@${offset} matches no source record past offset ${p.sourceUntilOffset} of partition ${p.partition}`
    )
  )
  return [...misplacedLines(verdict.misplaced), ...findingLines, ...unlistedLines, ...beyondLines, ...unmatchedLines]
}

/** The verdict line: PASSED, NOT VERIFIED or FAILED, with the speed and every reason. */
function verdictLine (report: VerifyReport, args: Pick<VerifyArgs, 'allow-duplicates' | 'allow-in-flight' | 'wait'>): string {
  const { result, seconds } = report
  const { total, passed, matched, waitTimedOut, beyond, notVerified } = report.verdict
  const changed = Object.entries(total.changedFields).filter(([, n]) => n > 0).map(([field, n]) => `${field} ${n}`)
  return `${passed ? 'PASSED' : matched ? 'NOT VERIFIED' : 'FAILED'}: ${total.checked} records checked in ${seconds.toFixed(1)} s (${(total.bytes / 1_048_576 / Math.max(seconds, 0.001)).toFixed(1)} MB/s)` +
    `${changed.length > 0 ? `; changed fields: ${changed.join(', ')}` : ''}${total.duplicated > 0 && args['allow-duplicates'] ? '; duplicates allowed' : ''}${waitTimedOut ? `; the copy did not catch up within --wait ${args.wait} s` : ''}${passed ? `; vouches for ${vouchedRange(result.partitions, COVERAGE_PARTITIONS_LISTED)}` : ''}${beyond.unmatched > 0 && result.checkedUpTo !== 'to-offset' ? `; ${beyond.unmatched} records beyond the committed position match no source record${args['allow-in-flight'] ? ' (allowed: --allow-in-flight)' : ''}` : ''}${notVerified.length > 0 ? `; partition(s) ${notVerified.join(', ')}: the source holds no records any more, nothing to compare the target with (--digests checks it from the target alone)` : ''}`
}

/** The report as a table (`--format table`: with the findings, the verdict, the coverage and the alignment under it) or csv. */
export function verifyTable (report: VerifyReport, args: VerifyArgs): string {
  const { result, verdict } = report
  let text = render(args.format, columns, verifyRows(result, verdict.total), { isTotal: r => r.label === 'TOTAL', keep: args.totals === true })
  if (args.format !== 'table') return text
  const lines = findingsLines(report, args)
  if (lines.length > 0) text += '\n' + lines.join('\n') + '\n'
  text +=
    `\n${verdictLine(report, args)}\n` +
    coverageLines(result.partitions, result.checkedUpTo, args).join('\n') +
    '\n' +
    alignmentLine(report.choice, byPartitionOf(result)) +
    '\n'
  return text
}
