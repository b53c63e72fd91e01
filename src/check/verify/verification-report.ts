import type { AlignmentPoint } from './aligner.js'
import type { BeyondCommitted } from './beyond-committed.js'
import type { EarlierCopies } from './earlier-copies-comparison.js'
import { emptyCounts, type ComparisonCounts, type Finding } from './record-comparator.js'
import { RecordFields } from '../../mirror-topics/record-digest.js'

/** The verification of one partition: its range, where the copy was aligned, and what differed. */
export interface PartitionVerification {
  readonly partition: number
  /** First source offset compared. */
  readonly sourceFromOffset: number
  /** Source offsets from here on were not checked (in flight or past `--to-offset`). */
  readonly sourceUntilOffset: number
  /**
   * Target offsets `targetFromOffset..targetUntilOffset-1` of `alignment.targetPartition` were
   * compared: every record there is a copy of the checked source range (or counted as a problem);
   * from the target's log start when the range starts at the source's start.
   */
  readonly targetFromOffset: number
  readonly targetUntilOffset: number
  readonly alignment: AlignmentPoint
  readonly counts: ComparisonCounts
  readonly findings: readonly Finding[]
  readonly notes: readonly string[]
  /** Target records before `alignment.targetOffset` read as earlier copies, when there were any; their counts are in `counts`. */
  readonly earlierCopies?: EarlierCopies
  /** Target records past the copy of the compared range (copies beyond the mirror's committed position), when there are any; not in `counts`. */
  readonly beyondCommitted?: BeyondCommitted
  /**
   * Set when the source partition holds no records any more (all below `sourceLogStart` deleted or
   * expired) while its target partition holds `targetRecords`: the copy cannot be judged against
   * the source (`verify --digests` can, from the target alone).
   */
  readonly sourceGone?: { readonly sourceLogStart: number, readonly targetRecords: number }
}

/** Partitions whose copy could not be compared at all: the source's records are gone, the target's are not. */
export function unverifiable (partitions: readonly PartitionVerification[]): PartitionVerification[] {
  return partitions.filter(p => p.sourceGone !== undefined && p.counts.checked === 0)
}

/** A record missing from one partition of the copy and found as extra in another. */
export interface MisplacedRecord {
  readonly sourcePartition: number
  readonly sourceOffset: number
  readonly targetPartition: number
  readonly targetOffset: number
}

/** Pairs missing records with extra records of other partitions that have the same identity (key, value, headers, timestamp). */
export function findMisplaced (partitions: readonly PartitionVerification[]): MisplacedRecord[] {
  const extras = new Map<number, Array<{ partition: number, offset: number }>>()
  for (const p of partitions) {
    for (const f of p.findings) {
      if (f.kind !== 'extra' || f.targetOffset === undefined) continue
      const list = extras.get(f.hash) ?? []
      list.push({ partition: p.alignment.targetPartition, offset: f.targetOffset })
      extras.set(f.hash, list)
    }
  }
  const out: MisplacedRecord[] = []
  for (const p of partitions) {
    for (const f of p.findings) {
      if (f.kind !== 'missing' || f.sourceOffset === undefined) continue
      const candidates = extras.get(f.hash)
      const index = candidates?.findIndex(c => c.partition !== p.alignment.targetPartition) ?? -1
      if (candidates === undefined || index < 0) continue
      const [hit] = candidates.splice(index, 1)
      out.push({ sourcePartition: p.partition, sourceOffset: f.sourceOffset, targetPartition: hit!.partition, targetOffset: hit!.offset })
    }
  }
  return out
}

export function totalCounts (partitions: readonly PartitionVerification[]): ComparisonCounts {
  const total = emptyCounts()
  for (const { counts } of partitions) {
    total.checked += counts.checked
    total.matched += counts.matched
    total.missing += counts.missing
    total.duplicated += counts.duplicated
    total.extra += counts.extra
    total.changed += counts.changed
    total.outOfOrder += counts.outOfOrder
    total.bytes += counts.bytes
    for (const field of RecordFields) total.changedFields[field] += counts.changedFields[field]
  }
  return total
}

/** Records on the target beyond the mirror's committed position, and duplicates among them, over `partitions`. */
export function beyondCommittedTotal (partitions: readonly PartitionVerification[]): {
  records: number
  duplicated: number
  unmatched: number
  partitions: number
} {
  const total = { records: 0, duplicated: 0, unmatched: 0, partitions: 0 }
  for (const { beyondCommitted: b } of partitions) {
    if (b === undefined || b.records === 0) continue
    total.records += b.records
    total.duplicated += b.duplicated
    total.unmatched += b.unmatched
    total.partitions++
  }
  return total
}

/**
 * A copy passes when nothing is missing, extra, changed or out of order; duplicates fail it
 * unless allowed, those in the compared range and those beyond the committed position
 * (`beyondDuplicated`) alike. Target records beyond the committed position that match no source
 * record there (`beyondUnmatched`: a wrong copy in flight, or no copy at all; the caller passes 0
 * when `--allow-in-flight` allows them) fail it too; copies of source records there do not: they
 * are the mirror's work in flight.
 */
export function verificationPassed (total: ComparisonCounts, allowDuplicates: boolean, beyondDuplicated = 0, beyondUnmatched = 0): boolean {
  return (
    total.missing === 0 &&
    total.extra === 0 &&
    total.changed === 0 &&
    total.outOfOrder === 0 &&
    (allowDuplicates || (total.duplicated === 0 && beyondDuplicated === 0)) &&
    beyondUnmatched === 0
  )
}

/**
 * What a PASSED verdict vouches for: per partition the source range checked and the target range
 * holding its copy (`0: source 0..99 = target 0@0..99`), or in total past `listed` partitions.
 */
export function vouchedRange (partitions: readonly PartitionVerification[], listed: number): string {
  const range = (from: number, until: number): string => (until > from ? `${from}..${until - 1}` : 'none')
  if (partitions.length > listed) {
    const sourceOffsets = partitions.reduce((n, p) => n + Math.max(0, p.sourceUntilOffset - p.sourceFromOffset), 0)
    const targetOffsets = partitions.reduce((n, p) => n + Math.max(0, p.targetUntilOffset - p.targetFromOffset), 0)
    const what = `${sourceOffsets} source offsets of ${partitions.length} partitions and the ${targetOffsets} target offsets holding their copies`
    return `${what} (per partition: SOURCE-RANGE, TARGET-FROM)`
  }
  const one = (p: PartitionVerification): string =>
    `source ${p.partition}@${range(p.sourceFromOffset, p.sourceUntilOffset)} = target ${p.alignment.targetPartition}@${range(p.targetFromOffset, p.targetUntilOffset)}`
  return partitions.map(one).join(', ')
}

/** One line per finding, e.g. `changed value: source 0@23 -> target 0@23`. */
export function describeFinding (finding: Finding, sourcePartition: number, targetPartition: number): string {
  const src = finding.sourceOffset === undefined ? '' : `source ${sourcePartition}@${finding.sourceOffset}`
  const tgt = finding.targetOffset === undefined ? '' : `target ${targetPartition}@${finding.targetOffset}`
  switch (finding.kind) {
    case 'missing': return `missing: ${src} has no copy`
    case 'duplicated': return `duplicated: ${tgt} is one more copy of a source record copied elsewhere on the target`
    case 'extra': return `extra: ${tgt} has no source record`
    case 'changed': return `changed ${(finding.fields ?? []).join('+')}: ${src} -> ${tgt}`
    case 'out-of-order': return `out of order: ${src} copied at ${tgt}`
  }
}
