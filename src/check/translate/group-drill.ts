import type { ClusterConnection } from '../../config/cluster-connection.js'
import { GroupAdmin, type GroupOffset } from '../../kafka/group-admin.js'
import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { executeGroupFailover, planGroupFailover, type FailoverOutcome, type GroupFailoverPlan } from './group-failover-plan.js'
import { unmirroredRecords, type UnmirroredPartition } from './unmirrored-records.js'
import { partitionKey } from '../../shared/partition-key.js'

export interface GroupDrillOptions {
  readonly source: ClusterConnection
  readonly target: ClusterConnection
  readonly group: string
  /** Reads the offset syncs of the flow source -> target (the drill's clock runs from before this read: it is part of the move). */
  readonly loadSyncs: () => Promise<OffsetSyncIndex>
  readonly logger?: Logger
  /** Clock for the RTO; default `performance.now`. */
  readonly nowMs?: () => number
}

/**
 * What a drill did, in order: the group's source offsets saved, the records not yet mirrored at
 * the moment of the move (RPO), the failover (plan and outcome) and its duration (RTO), the
 * failback (the saved offsets committed back on the source) and the offsets on both clusters
 * afterwards.
 */
export interface GroupDrillResult {
  readonly group: string
  /** Why nothing was moved: the group has members on the source (a drill moves an idle test group), or no committed offsets. */
  readonly refused?: 'members-on-source' | 'no-offsets'
  readonly sourceBefore: readonly GroupOffset[]
  readonly unmirrored: readonly UnmirroredPartition[]
  readonly rpoRecords: bigint
  /** Seconds from the start of the move (offset syncs read) to the target's answer to the commit. */
  readonly rtoSeconds?: number
  readonly plan?: GroupFailoverPlan
  readonly outcome?: FailoverOutcome
  /** The failback's commit failed (members joined on the source): its error code or message. */
  readonly failbackError?: string
  readonly sourceAfter: readonly GroupOffset[]
  readonly targetAfter: readonly GroupOffset[]
  /** Invariant checked: the group's source offsets after the drill equal those before it, partition for partition. */
  readonly failedBackExactly: boolean
  /** The failover wrote (or found already there) the exact translation of every partition. */
  readonly failedOverExactly: boolean
}

const sameOffsets = (a: readonly GroupOffset[], b: readonly GroupOffset[]): boolean => {
  const key = (o: GroupOffset): string => `${partitionKey(o.topic, o.partition)}\u0000${o.offset}`
  const left = a.map(key).sort()
  const right = b.map(key).sort()
  return left.length === right.length && left.every((k, i) => k === right[i])
}

/**
 * Fails an idle test group over to the target and back: saves its committed offsets on the
 * source, reads the offset syncs and the source's end offsets (RPO: records on the source not yet
 * copied, on the group's topics), moves the group with the failover plan (exact translations,
 * refused by the broker if a member joins on the target), times it (RTO), then commits the saved
 * offsets back on the source (refused by the broker if a member joined there) and reads both
 * clusters again. Writes only the group's offsets: its translation on the target, its own saved
 * offsets on the source. A group with members on the source is not moved at all: they would
 * commit while the drill runs and the failback would rewind them.
 */
export async function runGroupDrill (options: GroupDrillOptions): Promise<GroupDrillResult> {
  const logger = options.logger ?? silentLogger
  const now = options.nowMs ?? (() => performance.now())
  const source = new GroupAdmin(options.source, logger)
  const target = new GroupAdmin(options.target, logger)
  try {
    await source.start()
    await target.start()
    const group = options.group
    const sourceBefore = await source.committedOffsets(group)
    const description = await source.describe(group)
    const refused = description.members > 0 ? 'members-on-source' as const : sourceBefore.length === 0 ? 'no-offsets' as const : undefined
    if (refused !== undefined) {
      return {
        group,
        refused,
        sourceBefore,
        unmirrored: [],
        rpoRecords: 0n,
        sourceAfter: sourceBefore,
        targetAfter: await target.committedOffsets(group),
        failedBackExactly: true,
        failedOverExactly: false,
      }
    }
    const startedMs = now()
    const syncs = await options.loadSyncs()
    const topics = [...new Set(sourceBefore.map(o => o.topic))]
    const logs = await source.logOffsetsOf(topics)
    const unmirrored = unmirroredRecords(
      syncs,
      [...logs].flatMap(([topic, partitions]) =>
        [...partitions].map(([partition, log]) => ({ topic, partition, logStartOffset: log.logStartOffset, endOffset: log.highWatermark }))
      ).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
    )
    const [plan] = await planGroupFailover({ from: options.source, to: options.target, groups: [group], syncs, logger })
    const [outcome] = await executeGroupFailover(options.target, plan === undefined ? [] : [plan], logger)
    const rtoSeconds = (now() - startedMs) / 1000
    let failbackError: string | undefined
    try {
      await source.commitOffsets(group, sourceBefore)
    } catch (error) {
      failbackError = error instanceof Error ? error.message : String(error)
    }
    const sourceAfter = await source.committedOffsets(group)
    const targetAfter = await target.committedOffsets(group)
    const expected = plan?.partitions.map(p => ({ topic: p.toTopic, partition: p.partition, offset: p.plannedOffset })) ?? []
    const failedOverExactly =
      plan !== undefined &&
      plan.blocker === undefined &&
      (outcome?.status === 'written' || outcome?.status === 'nothing-to-write') &&
      expected.every(e => targetAfter.some(o => o.topic === e.topic && o.partition === e.partition && o.offset === e.offset))
    return {
      group,
      sourceBefore,
      unmirrored,
      rpoRecords: unmirrored.reduce((n, p) => n + p.records, 0n),
      rtoSeconds,
      ...(plan === undefined ? {} : { plan }),
      ...(outcome === undefined ? {} : { outcome }),
      ...(failbackError === undefined ? {} : { failbackError }),
      sourceAfter,
      targetAfter,
      failedBackExactly: sameOffsets(sourceBefore, sourceAfter),
      failedOverExactly,
    }
  } finally {
    await source.stop()
    await target.stop()
  }
}
