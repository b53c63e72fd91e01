import { setTimeout as sleep } from 'node:timers/promises'
import type { AuditClient } from '../../kafka/audit-client.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { OrderAligner, type Aligner, type AlignmentLookup, type AlignmentPoint } from './aligner.js'
import { committedOffsets, groupExists } from '../lag/group-offsets.js'
import { compareWithEarlierCopies } from './earlier-copies-comparison.js'
import { examineBeyondCommitted, type BeyondCommitted } from './beyond-committed.js'
import { digestStreamOf, digestStreamOfChunks } from './partition-comparison.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import type { PartitionVerification } from './verification-report.js'

/** Where the comparison of each partition stops on the source side. */
export type VerifyUntil = { readonly offset: number } | 'mirrored' | 'default'

export interface CopyVerificationOptions {
  readonly source: AuditClient
  readonly target: AuditClient
  readonly topic: string
  readonly targetTopic: string
  /** Source partitions to verify; default all. */
  readonly partitions?: readonly number[]
  readonly from?: { readonly offset: number } | { readonly timestampMs: number }
  /** `mirrored`: up to the mirror group's committed offsets (the group must exist); `default`: the same when the group exists, else the end offsets. */
  readonly until: VerifyUntil
  /** The mirror's consumer group on the source cluster. */
  readonly group: string
  /** Wait up to this long for the copy to catch up with the source end offsets seen at start. */
  readonly waitSeconds?: number
  readonly digestRangeRecords?: number
  readonly lookaheadRecords?: number
  readonly maxFindingsPerKind?: number
  readonly fetchMaxBytes?: number
  /** Makes the aligner; default the order aligner (first common record). */
  readonly aligner?: (lookup: AlignmentLookup) => Aligner
  readonly onProgress?: (progress: { partition: number, sourceOffset: number, fromOffset: number, untilOffset: number, bytes: number }) => void
}

export interface CopyVerification {
  readonly partitions: PartitionVerification[]
  readonly notes: string[]
  /** `waitSeconds` passed before the copy caught up (a note says how far it got). */
  readonly waitTimedOut: boolean
  /** Where each partition's compared range ends: `until.offset`, the mirror group's committed position, or (no such group) the source end offsets. */
  readonly checkedUpTo: 'to-offset' | 'committed' | 'end'
}

/** Waits until the copy caught up; false when `waitSeconds` passed first (and a note says why). */
async function waitForCopy (
  options: CopyVerificationOptions,
  partitions: readonly number[],
  sourceStarts: Map<number, number>,
  sourceEnds: Map<number, number>,
  hasGroup: boolean,
  notes: string[]
): Promise<boolean> {
  const deadline = Date.now() + (options.waitSeconds ?? 0) * 1000
  if (hasGroup) {
    for (;;) {
      const committed = await committedOffsets(options.source, options.group, options.topic)
      // A partition without a committed offset is behind only when it holds records.
      const behind = partitions.filter(p => (committed.get(p) ?? sourceStarts.get(p)!) < sourceEnds.get(p)!)
      if (behind.length === 0) return true
      if (Date.now() >= deadline) {
        notes.push(`--wait: group '${options.group}' still behind the source end offsets on partition(s) ${behind.join(',')} after ${options.waitSeconds} s`)
        return false
      }
      await sleep(500)
    }
  }
  let previous = ''
  for (;;) {
    const ends = await options.target.listOffsets(options.targetTopic, partitions, 'latest', 'read_committed')
    const now = JSON.stringify([...ends])
    if (now === previous) return true
    if (Date.now() >= deadline) {
      notes.push(`--wait: the target was still growing after ${options.waitSeconds} s`)
      return false
    }
    previous = now
    await sleep(1000)
  }
}

/** What every partition's verification reads: both clusters' offsets, the mirror's committed position, the aligner. */
interface VerifyContext {
  readonly options: CopyVerificationOptions
  readonly targetPartitions: readonly number[]
  readonly sourceStarts: Map<number, number>
  readonly sourceEnds: Map<number, number>
  readonly targetStarts: Map<number, number>
  readonly targetEnds: Map<number, number>
  readonly hasGroup: boolean
  readonly committed: Map<number, number>
  readonly fromByTime: Map<number, number> | undefined
  readonly aligner: Aligner
  readonly sourceReader: (partition: number) => PartitionReader
  readonly targetReader: (partition: number) => PartitionReader
}

/** The source offsets compared on `partition`: from the start asked for (clamped to the log start) up to the committed position, `until` or the end. */
function comparedRange (ctx: VerifyContext, partition: number, notes: string[]): { from: number, until: number } {
  const { options } = ctx
  const earliest = ctx.sourceStarts.get(partition)!
  const end = ctx.sourceEnds.get(partition)!
  let from = earliest
  if (options.from !== undefined && 'offset' in options.from) {
    from = Math.max(earliest, options.from.offset)
    if (options.from.offset < earliest) notes.push(`source partition ${partition} starts at offset ${earliest} (retention); compared from there`)
  } else if (ctx.fromByTime !== undefined) {
    from = Math.max(earliest, ctx.fromByTime.get(partition) ?? end)
  }
  let until = end
  if (typeof options.until === 'object') {
    until = Math.min(end, options.until.offset)
  } else if (ctx.hasGroup) {
    const position = ctx.committed.get(partition)
    if (position !== undefined) until = Math.min(end, position)
    else if (options.until === 'mirrored') {
      until = from
      notes.push(`group '${options.group}' has no committed offset on partition ${partition}: nothing mirrored to compare`)
    }
  }
  until = Math.max(from, until)
  if (until < end) {
    notes.push(typeof options.until === 'object' && until >= options.until.offset
      ? `source offsets ${until}..${end - 1} are past --to-offset and not checked`
      : `source offsets ${until}..${end - 1} are in flight (past the mirror's committed position) and not checked`)
  }
  return { from, until }
}

/** The target's records past the copy of the compared range: counted, and duplicates among them found. */
async function beyondCompared (
  ctx: VerifyContext,
  at: { partition: number, targetPartition: number, until: number, targetStopOffset: number, targetEnd: number },
  matchedRecently: (hash: number) => boolean,
  notes: string[]
): Promise<BeyondCommitted> {
  const { options } = ctx
  const { partition, targetPartition, until, targetStopOffset, targetEnd } = at
  const end = ctx.sourceEnds.get(partition)!
  // The source's end read again, after the target's: a target record read was copied from a source record written before it.
  const sourceEndNow = (await options.source.listOffsets(options.topic, [partition], 'latest', 'read_committed')).get(partition) ?? end
  const sourceBeyond = digestStreamOfChunks(ctx.sourceReader(partition).digestChunks(until, Math.max(end, sourceEndNow)))
  const targetBeyond = digestStreamOfChunks(ctx.targetReader(targetPartition).digestChunks(targetStopOffset, targetEnd))
  let beyondCommitted: BeyondCommitted
  try {
    beyondCommitted = await examineBeyondCommitted({
      source: sourceBeyond,
      target: targetBeyond,
      fromTargetOffset: targetStopOffset,
      untilTargetOffset: targetEnd,
      matchedRecently,
      ...(options.maxFindingsPerKind === undefined ? {} : { maxFindings: options.maxFindingsPerKind }),
    })
  } finally {
    await Promise.allSettled([sourceBeyond.close?.(), targetBeyond.close?.()])
  }
  if (beyondCommitted.examined < beyondCommitted.records) {
    notes.push(
      `target partition ${targetPartition}: only the first ${beyondCommitted.examined} of ${beyondCommitted.records} records beyond the compared range were examined for duplicates`
    )
  }
  return beyondCommitted
}

/**
 * Where the target is read from: the earliest copy of the compared range. A range compared from
 * the source's start vouches for the whole target partition before it: every target record
 * before the alignment point is read (from the target's log start, the first the data still
 * holds), so a duplicate placed before the first compared record is found. Records below the
 * target's log start are gone (retention): no earlier copy can be read there. Below the stretch
 * the aligner points at, a target record that matches no source record was written there before
 * the mirror's copy (or copies a record retention deleted from the source): duplicates there
 * count, such records do not (`extrasUnknownBelow`).
 */
function earliestCopyOf (
  alignment: AlignmentPoint,
  targetStart: number,
  fromSourceStart: boolean
): { earliestCopy: number, extrasUnknownBelow: number | undefined } {
  const alignerEarliest = alignment.earliestCopyOffset ?? alignment.targetOffset
  const earliestCopy = Math.min(alignment.targetOffset, Math.max(targetStart, fromSourceStart ? Math.min(targetStart, alignerEarliest) : alignerEarliest))
  const extrasUnknownBelow = earliestCopy < alignerEarliest ? Math.min(alignerEarliest, alignment.targetOffset) : undefined
  return { earliestCopy, extrasUnknownBelow }
}

/** Verifies one source partition against its copy. */
async function verifyPartition (ctx: VerifyContext, partition: number): Promise<PartitionVerification> {
  const { options, targetPartitions } = ctx
  const partitionNotes: string[] = []
  const earliest = ctx.sourceStarts.get(partition)!
  const end = ctx.sourceEnds.get(partition)!
  const { from, until } = comparedRange(ctx, partition, partitionNotes)
  if (!targetPartitions.includes(partition)) {
    partitionNotes.push(`target topic ${options.targetTopic} has no partition ${partition}`)
  }
  const alignment = targetPartitions.includes(partition)
    ? await ctx.aligner.align({ sourcePartition: partition, sourceOffset: from, sourceUntilOffset: until })
    : { sourceOffset: from, targetPartition: partition, targetOffset: 0, method: 'no target partition' }
  const targetPartition = alignment.targetPartition
  const hasTarget = targetPartitions.includes(targetPartition)
  const targetEnd = ctx.targetEnds.get(targetPartition) ?? 0
  const targetStart = ctx.targetStarts.get(targetPartition) ?? 0
  const { earliestCopy, extrasUnknownBelow } = earliestCopyOf(alignment, targetStart, from === earliest)
  const result = await compareWithEarlierCopies({
    source: at => digestStreamOfChunks(ctx.sourceReader(partition).digestChunks(at, end)),
    target: (at, upTo) => hasTarget ? digestStreamOfChunks(ctx.targetReader(targetPartition).digestChunks(at, upTo ?? targetEnd)) : digestStreamOf([]),
    sourceFromOffset: from,
    sourceUntilOffset: until,
    sourceEarliestOffset: earliest,
    matchTargetOffset: alignment.targetOffset,
    earliestCopyTargetOffset: hasTarget ? earliestCopy : alignment.targetOffset,
    ...(extrasUnknownBelow === undefined ? {} : { extrasUncountedBelowOffset: extrasUnknownBelow }),
    ...(options.digestRangeRecords === undefined ? {} : { digestRangeRecords: options.digestRangeRecords }),
    ...(options.lookaheadRecords === undefined ? {} : { lookaheadRecords: options.lookaheadRecords }),
    ...(options.maxFindingsPerKind === undefined ? {} : { maxFindingsPerKind: options.maxFindingsPerKind }),
    onProgress: (sourceOffset, bytes) => options.onProgress?.({ partition, sourceOffset, fromOffset: from, untilOffset: until, bytes }),
  })
  if (result.earlierCopies !== undefined) {
    const e = result.earlierCopies
    partitionNotes.push(`target offsets ${e.fromTargetOffset}..${e.untilTargetOffset - 1} of partition ${targetPartition} lie before the copy the alignment points at (${targetPartition}@${alignment.targetOffset}): read as earlier copies, ${e.duplicated} duplicated, ${e.extra} extra, ${e.changed} changed`)
    if ((e.uncounted ?? 0) > 0) {
      partitionNotes.push(`target offsets ${e.fromTargetOffset}..${(extrasUnknownBelow ?? e.fromTargetOffset) - 1} of partition ${targetPartition}: ${e.uncounted} records match no source record read (written before the mirror's copy, or copies of records the source no longer holds): not counted`)
    }
  }
  const stop = result.targetStopOffset
  const matchedRecently = result.matchedRecently ?? (() => false)
  const beyondCommitted = hasTarget && stop !== undefined && stop < targetEnd
    ? await beyondCompared(ctx, { partition, targetPartition, until, targetStopOffset: stop, targetEnd }, matchedRecently, partitionNotes)
    : undefined
  // Nothing left on the source (deleted or expired) while the target holds records: nothing to compare them with.
  const targetRecords = hasTarget ? targetEnd - (ctx.targetStarts.get(targetPartition) ?? 0) : 0
  const sourceGone = earliest === end && earliest > 0 && targetRecords > 0 ? { sourceLogStart: earliest, targetRecords } : undefined
  if (sourceGone !== undefined) {
    partitionNotes.push(
      `source partition ${partition} holds no records (everything below offset ${earliest} was deleted or expired) while target partition ${targetPartition} holds offsets ${targetEnd - targetRecords}..${targetEnd - 1}: nothing could be compared; mirror-check verify --digests checks the copy from the target alone`
    )
  }
  return {
    partition,
    sourceFromOffset: from,
    sourceUntilOffset: until,
    targetFromOffset: hasTarget ? earliestCopy : alignment.targetOffset,
    targetUntilOffset: hasTarget ? result.targetStopOffset ?? targetEnd : alignment.targetOffset,
    alignment,
    counts: result.counts,
    findings: result.findings,
    notes: partitionNotes,
    ...(result.earlierCopies === undefined ? {} : { earlierCopies: result.earlierCopies }),
    ...(beyondCommitted === undefined ? {} : { beyondCommitted }),
    ...(sourceGone === undefined ? {} : { sourceGone }),
  }
}

/**
 * Verifies the copy of `topic` partition by partition, streaming both clusters in fetch-sized
 * chunks (memory bounded by the comparator windows, not by topic size). Bounds: from the source's
 * earliest offset (or `from`), until the mirror's committed position or the end offsets; the
 * target from the earliest copy of the compared range (`AlignmentPoint.earliestCopyOffset`, at
 * or above the target's log start) up to its end: records before where the aligner places the
 * first compared record are earlier copies (duplicated) or extra, those after are compared record
 * by record (`compareWithEarlierCopies`).
 */
export async function verifyCopy (options: CopyVerificationOptions): Promise<CopyVerification> {
  const { source, target, topic, targetTopic } = options
  const notes: string[] = []
  const all = await source.partitionsOf(topic)
  const partitions = options.partitions ?? all
  const unknown = partitions.filter(p => !all.includes(p))
  if (unknown.length > 0) throw new MirrorError(ErrorCodes.CONFIG, `--partition "${unknown[0]}": topic ${topic} has partitions 0..${all.length - 1}`)
  const targetPartitions = await target.partitionsOf(targetTopic, '--target-topic')

  const sourceEnds = await source.listOffsets(topic, partitions, 'latest', 'read_committed')
  const sourceStarts = await source.listOffsets(topic, partitions, 'earliest')
  const hasGroup = await groupExists(source, options.group)
  if (options.until === 'mirrored' && !hasGroup) {
    throw new MirrorError(
      ErrorCodes.CONFIG,
      `--until-mirrored: consumer group '${options.group}' does not exist on the source cluster; name the mirror's group with --group`
    )
  }
  const waitTimedOut =
    options.waitSeconds !== undefined && options.waitSeconds > 0 && !(await waitForCopy(options, partitions, sourceStarts, sourceEnds, hasGroup, notes))

  const committed = hasGroup ? await committedOffsets(source, options.group, topic) : new Map<number, number>()
  const fromByTime =
    options.from !== undefined && 'timestampMs' in options.from
      ? await source.listOffsets(topic, partitions, { timestampMs: options.from.timestampMs }, 'read_committed')
      : undefined
  const targetEnds = await target.listOffsets(targetTopic, partitions.filter(p => targetPartitions.includes(p)), 'latest', 'read_committed')
  const targetStarts = await target.listOffsets(targetTopic, partitions.filter(p => targetPartitions.includes(p)), 'earliest')

  const sourceReader = (p: number): PartitionReader => new PartitionReader(source, topic, p, { fetchMaxBytes: options.fetchMaxBytes })
  const targetReader = (p: number): PartitionReader => new PartitionReader(target, targetTopic, p, { fetchMaxBytes: options.fetchMaxBytes })
  const lookup: AlignmentLookup = {
    sourceRecords: async (p, from, count) => await sourceReader(p).digests(from, sourceEnds.get(p)!, count),
    targetRecords: async (p, from, count) => await targetReader(p).digests(from, targetEnds.get(p) ?? 0, count),
    targetOffsetForTimestamp: async (p, timestampMs) =>
      (await target.listOffsets(targetTopic, [p], { timestampMs }, 'read_committed')).get(p) ?? targetEnds.get(p) ?? 0,
    targetEarliestOffset: async p => targetStarts.get(p) ?? 0,
  }
  const aligner = options.aligner?.(lookup) ?? new OrderAligner(lookup)
  const ctx: VerifyContext = {
    options, targetPartitions, sourceStarts, sourceEnds, targetStarts, targetEnds, hasGroup, committed, fromByTime, aligner, sourceReader, targetReader,
  }
  const results: PartitionVerification[] = []
  for (const partition of partitions) results.push(await verifyPartition(ctx, partition))
  const checkedUpTo = typeof options.until === 'object' ? 'to-offset' : hasGroup ? 'committed' : 'end'
  return { partitions: results, notes, waitTimedOut, checkedUpTo }
}
