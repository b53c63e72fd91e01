import type { ClusterConnection } from '../../config/cluster-connection.js'
import { GroupAdmin, type GroupOffset, type PartitionLogOffsets } from '../../kafka/group-admin.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { loadOffsetSyncs } from './offset-sync-store.js'
import { translateBothWays } from './two-way-translation.js'

export interface TranslateGroupOptions {
  readonly source: ClusterConnection
  readonly target: ClusterConnection
  readonly group: string
  /** Only this source topic; default every topic the group committed on. */
  readonly topic?: string
  /** The offset-syncs topic on the target, e.g. `mirror-offset-syncs.source.internal`. */
  readonly offsetSyncsTopic: string
  /** Already loaded syncs (skips reading the topic). */
  readonly syncs?: OffsetSyncIndex
  /** The syncs of the flow back (target -> source, on the source), already loaded: see `translateCommittedOffsets`. */
  readonly reverseSyncs?: OffsetSyncIndex
  readonly logger?: Logger
}

/** One partition of a group: its committed source offset and where that is on the target. */
export interface GroupTranslationRow {
  readonly group: string
  readonly topic: string
  readonly partition: number
  /** The group's committed offset on the source: the next record it would read. */
  readonly sourceOffset: bigint
  readonly status: 'translated' | 'not-yet-mirrored' | 'no-syncs'
  readonly targetTopic?: string
  /** The target offset of that next record (or of the next record the mirror will write). */
  readonly targetOffset?: bigint
  /** How far the mirror got (exclusive source offset) when not yet mirrored. */
  readonly mirroredUpTo?: bigint
  /**
   * With the syncs of the flow back (target -> source): records the group already consumed that it
   * reads again from `targetOffset`, 0 when exact (see `translateBothWays`). Set when translated.
   */
  readonly reReads?: bigint
}

/**
 * Translates every committed offset of `group` on the source into the target offset of the next
 * record the group has not consumed, from the offset syncs: exact, or `not-yet-mirrored` when the
 * group is beyond what the mirror copied (never a guess). Rows sorted by topic and partition.
 */
export async function translateGroupOffsets (options: TranslateGroupOptions): Promise<GroupTranslationRow[]> {
  const logger = options.logger ?? silentLogger
  const syncs = options.syncs ?? await loadOffsetSyncs(options.target, options.offsetSyncsTopic, logger)
  const admin = new GroupAdmin(options.source, logger)
  await admin.start()
  let committed
  try {
    committed = await admin.committedOffsets(options.group, options.topic === undefined ? undefined : [options.topic])
  } finally {
    await admin.stop()
  }
  const target = new GroupAdmin(options.target, logger)
  await target.start()
  try {
    return await withoutForeignPrefix(
      translateCommittedOffsets(options.group, committed, syncs, options.reverseSyncs),
      syncs,
      topic => target.logOffsets(topic),
      options.reverseSyncs
    )
  } finally {
    await target.stop()
  }
}

/**
 * Rows translated from below the first record the flow copied, while the target still holds records
 * before that copy which the flow did not write (another mirror's, such as MirrorMaker 2's before a
 * takeover), become `no-syncs`: the rule maps them to the flow's first copy, a jump forward past
 * records the group has not read. With everything before the first copy gone from the target
 * (retention), that jump is right and the row stays. So does a row whose target partition is the
 * source of `reverseSyncs` (a failback: the records before the first copy are the target's own,
 * copied the other way, and `translateBothWays` already mapped the group through them).
 * `logOffsetsOf` reads a target topic's logs.
 */
export async function withoutForeignPrefix (
  rows: readonly GroupTranslationRow[],
  syncs: OffsetSyncIndex,
  logOffsetsOf: (topic: string) => Promise<ReadonlyMap<number, PartitionLogOffsets>>,
  reverseSyncs?: OffsetSyncIndex
): Promise<GroupTranslationRow[]> {
  const logs = new Map<string, Promise<ReadonlyMap<number, PartitionLogOffsets>>>()
  const out: GroupTranslationRow[] = []
  for (const row of rows) {
    const first = row.status === 'translated' ? syncs.firstRange(row.topic, row.partition) : undefined
    if (first !== undefined && row.sourceOffset < first.sourceStart && reverseSyncs?.firstRange(first.targetTopic, row.partition) === undefined) {
      let log = logs.get(first.targetTopic)
      if (log === undefined) logs.set(first.targetTopic, (log = logOffsetsOf(first.targetTopic)))
      const logStart = (await log).get(row.partition)?.logStartOffset
      // A target partition it cannot read (no such topic) is left as it is: the caller reports that itself.
      if (logStart !== undefined && logStart < first.targetStart) {
        out.push({ group: row.group, topic: row.topic, partition: row.partition, sourceOffset: row.sourceOffset, status: 'no-syncs' })
        continue
      }
    }
    out.push(row)
  }
  return out
}

/**
 * Translates committed offsets of `group` (read by the caller) with `syncs` (the flow source ->
 * target) and, when given, `reverseSyncs` (the flow target -> source, on the source: records
 * produced on the target and copied back); rows sorted by topic and partition.
 */
export function translateCommittedOffsets (
  group: string,
  committed: readonly GroupOffset[],
  syncs: OffsetSyncIndex,
  reverseSyncs?: OffsetSyncIndex
): GroupTranslationRow[] {
  const rows: GroupTranslationRow[] = committed.map(({ topic, partition, offset }) => {
    const base = { group, topic, partition, sourceOffset: offset }
    const t = translateBothWays(syncs, reverseSyncs, topic, partition, offset)
    if (t.status === 'translated') return { ...base, status: t.status, targetTopic: t.targetTopic, targetOffset: t.targetOffset, reReads: t.reReads }
    if (t.status === 'not-yet-mirrored') return { ...base, status: t.status, ...(t.mirroredUpTo === undefined ? {} : { mirroredUpTo: t.mirroredUpTo }) }
    return { ...base, status: t.status }
  })
  return rows.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
}
