import type { ClusterConnection } from '../../config/cluster-connection.js'
import { GroupAdmin, type GroupOffset, type PartitionLogOffsets } from '../../kafka/group-admin.js'
import { errorLabel } from '../../shared/errors.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { translateCommittedOffsets, withoutForeignPrefix, type GroupTranslationRow } from './translate-group.js'
import { partitionKey } from '../../shared/partition-key.js'

/**
 * What a failover does with one partition of a group:
 * - `commit`: write `plannedOffset` (the exact translation) into the group on the other cluster;
 * - `keep-ahead`: the group's committed offset there is already past the translation; it is kept
 *   (never rewound, MirrorMaker 2's rule: consumers there went further);
 * - `keep-equal`: the group is already at the translation there;
 * - `untranslatable`: no offset syncs for the partition, the group is beyond what was mirrored, or
 *   the topic the syncs point into does not exist on the other cluster.
 */
export type FailoverAction = 'commit' | 'keep-ahead' | 'keep-equal' | 'untranslatable'

/** One partition of a group's plan. Offsets are the next record to read. */
export interface FailoverPartitionPlan {
  readonly group: string
  readonly topic: string
  readonly partition: number
  /** Committed offset on the cluster the consumers leave. */
  readonly currentOffset: bigint
  /** Log end offset of the partition there, and the group's lag (records it had not read). */
  readonly logEndOffset?: bigint
  readonly lag?: bigint
  readonly translation: GroupTranslationRow['status']
  /** How far the mirror got (exclusive source offset) when `not-yet-mirrored`. */
  readonly mirroredUpTo?: bigint
  /** The topic on the other cluster and the exact translation of `currentOffset` into it. */
  readonly toTopic?: string
  /** The syncs point into `toTopic` but it does not exist on the other cluster (deleted since): untranslatable. */
  readonly toTopicMissing?: true
  readonly translatedOffset?: bigint
  /**
   * Records the group already consumed that it reads again from `translatedOffset`: 0 when exact.
   * More only where the two clusters hold the records in different orders (both took writes while
   * the flows copied them); the translation then skips nothing (`translateBothWays`).
   */
  readonly reReads?: bigint
  /** The group's committed offset on the other cluster before the failover. */
  readonly toCommittedOffset?: bigint
  readonly toLogEndOffset?: bigint
  /** The group's offset on the other cluster after the plan ran: the translation, or the committed offset when ahead. */
  readonly plannedOffset?: bigint
  /** Records the group will read on the other cluster from `plannedOffset`. */
  readonly toLag?: bigint
  readonly action: FailoverAction
}

/** A group's state on one cluster: `Dead` when the group does not exist there. */
export interface GroupPresence {
  readonly state: string
  readonly members: number
}

/**
 * Why a group's plan is not executed: it has members on the cluster to be written (the broker
 * would refuse the commit anyway), a partition cannot be translated exactly (a partial failover
 * would leave that partition to `auto.offset.reset`), or it has no committed offsets to move.
 */
export type FailoverBlocker = 'active' | 'untranslatable' | 'no-offsets'

/** One group's plan. `writes` is exactly what `executeGroupFailover` commits. */
export interface GroupFailoverPlan {
  readonly group: string
  readonly from: GroupPresence
  readonly to: GroupPresence
  readonly partitions: readonly FailoverPartitionPlan[]
  readonly writes: readonly GroupOffset[]
  readonly blocker?: FailoverBlocker
}

/** The outcome of executing one group's plan. */
export type FailoverOutcome =
  | { readonly group: string, readonly status: 'written', readonly offsets: number }
  | { readonly group: string, readonly status: 'nothing-to-write' }
  | { readonly group: string, readonly status: 'skipped', readonly blocker: FailoverBlocker }
  /** Members joined between plan and commit: the broker refused, nothing of the group was written. */
  | { readonly group: string, readonly status: 'refused', readonly kafkaCode: string }
  /** Any other error of the commit (the group's offsets were not written); the other groups are still tried. */
  | { readonly group: string, readonly status: 'failed', readonly error: Error }

export interface PlanGroupFailoverOptions {
  /** The cluster the consumers leave (they committed there). */
  readonly from: ClusterConnection
  /** The cluster the translated offsets are written to; the offset syncs of the flow from -> to are there. */
  readonly to: ClusterConnection
  readonly groups: readonly string[]
  /** Only these topics (names on `from`); default every topic the group committed on. */
  readonly topics?: readonly string[]
  /** The offset syncs of the flow from -> to, already loaded (`loadOffsetSyncs`). */
  readonly syncs: OffsetSyncIndex
  /**
   * Translates instead of `syncs` (a MirrorMaker 2 flow: its offset syncs with its rule, which
   * lands at or before the exact offset, so the group re-reads and never skips).
   */
  readonly translate?: (group: string, committed: readonly GroupOffset[]) => GroupTranslationRow[]
  /**
   * The offset syncs of the flow to -> from (on `from`), when there is one: records produced on
   * `to` and copied to `from`, which the group may have consumed on `from` (failback after a
   * failover, active-active).
   */
  readonly reverseSyncs?: OffsetSyncIndex
  readonly logger?: Logger
}

/**
 * The decision for one partition, pure: commit the exact translation unless the group is already
 * at or past it on the other cluster (never rewound).
 */
export function decidePartition (translated: bigint | undefined, toCommitted: bigint | undefined): { action: FailoverAction, plannedOffset?: bigint } {
  if (translated === undefined) return toCommitted === undefined ? { action: 'untranslatable' } : { action: 'untranslatable', plannedOffset: toCommitted }
  if (toCommitted === undefined || toCommitted < translated) return { action: 'commit', plannedOffset: translated }
  return { action: toCommitted === translated ? 'keep-equal' : 'keep-ahead', plannedOffset: toCommitted }
}

/** The blocker of a group's plan, if any; pure. */
export function planBlocker (to: GroupPresence, partitions: readonly FailoverPartitionPlan[]): FailoverBlocker | undefined {
  if (partitions.length === 0) return 'no-offsets'
  if (partitions.some(p => p.action === 'untranslatable')) return 'untranslatable'
  if (to.members > 0) return 'active'
  return undefined
}

/** Log end offsets (high watermarks) of `topics` on one cluster, in one pass; a topic that does not exist there is left out. */
async function endOffsets (admin: GroupAdmin, topics: Iterable<string>, existing: ReadonlySet<string>): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>()
  const logs = await admin.logOffsetsOf([...new Set(topics)].filter(topic => existing.has(topic)))
  for (const [topic, partitions] of logs) for (const [partition, { highWatermark }] of partitions) out.set(partitionKey(topic, partition), highWatermark)
  return out
}

/**
 * Plans moving `groups` from one cluster to the other: per partition the committed offset on
 * `from`, its exact translation on `to` (offset syncs of the flow from -> to), the group's offset
 * already on `to`, and what executing would do. Reads only; writes nothing.
 *
 * One pass for all groups, so hundreds of groups cost a few requests more than one: the offset
 * syncs are read once by the caller; the groups are described with one DescribeGroups request
 * per coordinator on each cluster; each group's committed offsets are one OffsetFetch (several in
 * flight); log offsets of every topic involved are one ListOffsets pair per leader on each cluster.
 */
export async function planGroupFailover (options: PlanGroupFailoverOptions): Promise<GroupFailoverPlan[]> {
  const logger = options.logger ?? silentLogger
  const from = new GroupAdmin(options.from, logger)
  const to = new GroupAdmin(options.to, logger)
  try {
    await from.start()
    await to.start()
    const fromTopics = await from.topicNames()
    const toTopics = await to.topicNames()
    const groups = [...new Set(options.groups)]
    const committedFrom = await from.committedOffsetsOfGroups(groups, options.topics)
    const fromDescriptions = await from.describeAll(groups)
    const toDescriptions = await to.describeAll(groups)
    // Target log offsets asked once per topic for all groups (withoutForeignPrefix reads them by topic).
    const toLogs = new Map<string, Promise<ReadonlyMap<number, PartitionLogOffsets>>>()
    const toLogOffsets = async (topic: string): Promise<ReadonlyMap<number, PartitionLogOffsets>> => {
      let log = toLogs.get(topic)
      if (log === undefined) toLogs.set(topic, (log = to.logOffsets(topic)))
      return await log
    }
    const rowsOf = new Map<string, GroupTranslationRow[]>()
    for (const group of groups) {
      const committed = committedFrom.get(group) ?? []
      rowsOf.set(
        group,
        options.translate === undefined
          ? await withoutForeignPrefix(
            translateCommittedOffsets(group, committed, options.syncs, options.reverseSyncs),
            options.syncs,
            toLogOffsets,
            options.reverseSyncs
          )
          : options.translate(group, committed)
      )
    }
    const allRows = [...rowsOf.values()].flat()
    const targetTopics = [...new Set(allRows.flatMap(r => r.targetTopic === undefined || !toTopics.has(r.targetTopic) ? [] : [r.targetTopic]))]
    const committedTo = targetTopics.length === 0 ? new Map<string, GroupOffset[]>() : await to.committedOffsetsOfGroups(groups, targetTopics)
    const fromEnds = await endOffsets(from, allRows.map(r => r.topic), fromTopics)
    const toEnds = await endOffsets(to, targetTopics, toTopics)
    const plans: GroupFailoverPlan[] = []
    for (const group of groups) {
      const rows = rowsOf.get(group) ?? []
      const fromDescription = fromDescriptions.get(group) ?? { state: 'Dead', members: 0 }
      const toDescription = toDescriptions.get(group) ?? { state: 'Dead', members: 0 }
      const toCommitted = new Map((committedTo.get(group) ?? []).map(o => [partitionKey(o.topic, o.partition), o.offset]))
      const partitions = rows.map((row): FailoverPartitionPlan => {
        const logEndOffset = fromEnds.get(partitionKey(row.topic, row.partition))
        const toKey = row.targetTopic === undefined ? undefined : partitionKey(row.targetTopic, row.partition)
        const toCommittedOffset = toKey === undefined ? undefined : toCommitted.get(toKey)
        const toLogEndOffset = toKey === undefined ? undefined : toEnds.get(toKey)
        const toTopicMissing = row.targetTopic !== undefined && !toTopics.has(row.targetTopic)
        const { action, plannedOffset } = decidePartition(toTopicMissing ? undefined : row.targetOffset, toCommittedOffset)
        return {
          group,
          topic: row.topic,
          partition: row.partition,
          currentOffset: row.sourceOffset,
          ...(logEndOffset === undefined ? {} : { logEndOffset, lag: logEndOffset > row.sourceOffset ? logEndOffset - row.sourceOffset : 0n }),
          translation: row.status,
          ...(row.mirroredUpTo === undefined ? {} : { mirroredUpTo: row.mirroredUpTo }),
          ...(row.targetTopic === undefined ? {} : { toTopic: row.targetTopic }),
          ...(toTopicMissing ? { toTopicMissing } : {}),
          ...(row.targetOffset === undefined ? {} : { translatedOffset: row.targetOffset }),
          ...(row.reReads === undefined ? {} : { reReads: row.reReads }),
          ...(toCommittedOffset === undefined ? {} : { toCommittedOffset }),
          ...(toLogEndOffset === undefined ? {} : { toLogEndOffset }),
          ...(plannedOffset === undefined ? {} : { plannedOffset }),
          ...(plannedOffset === undefined || toLogEndOffset === undefined
            ? {}
            : { toLag: toLogEndOffset > plannedOffset ? toLogEndOffset - plannedOffset : 0n }),
          action,
        }
      })
      const toPresence = { state: toDescription.state, members: toDescription.members }
      const blocker = planBlocker(toPresence, partitions)
      plans.push({
        group,
        from: { state: fromDescription.state, members: fromDescription.members },
        to: toPresence,
        partitions,
        writes: partitions
          .filter(p => p.action === 'commit')
          .map(p => ({ topic: p.toTopic as string, partition: p.partition, offset: p.plannedOffset as bigint })),
        ...(blocker === undefined ? {} : { blocker }),
      })
    }
    return plans
  } finally {
    await from.stop()
    await to.stop()
  }
}

/** Groups committed at once by `executeGroupFailover` (each group is its own request to its coordinator). */
const COMMITS_IN_FLIGHT = 16

/** Kafka errors with which a coordinator refuses an outside commit while the group has members. */
const GROUP_ACTIVE_CODES = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'REBALANCE_IN_PROGRESS'])

/**
 * Commits each plan's `writes` into its group on `to`, one request per group (16 groups at once), as an outside admin
 * (generation -1): the coordinator itself refuses it if a member joined since the plan, so a group
 * with members is never written. Plans with a blocker are skipped; nothing else is written. A
 * failed commit is reported in its group's outcome and the other groups are still written.
 */
export async function executeGroupFailover (
  to: ClusterConnection,
  plans: readonly GroupFailoverPlan[],
  logger: Logger = silentLogger
): Promise<FailoverOutcome[]> {
  const admin = new GroupAdmin(to, logger)
  const outcomes: FailoverOutcome[] = new Array(plans.length)
  const executeOne = async (plan: GroupFailoverPlan): Promise<FailoverOutcome> => {
    if (plan.blocker !== undefined) return { group: plan.group, status: 'skipped', blocker: plan.blocker }
    if (plan.writes.length === 0) return { group: plan.group, status: 'nothing-to-write' }
    try {
      await admin.commitOffsets(plan.group, plan.writes)
      return { group: plan.group, status: 'written', offsets: plan.writes.length }
    } catch (error) {
      const code = errorLabel(error)
      return GROUP_ACTIVE_CODES.has(code)
        ? { group: plan.group, status: 'refused', kafkaCode: code }
        : { group: plan.group, status: 'failed', error: error instanceof Error ? error : new Error(String(error)) }
    }
  }
  try {
    await admin.start()
    let next = 0
    const worker = async (): Promise<void> => {
      for (let i = next++; i < plans.length; i = next++) outcomes[i] = await executeOne(plans[i] as GroupFailoverPlan)
    }
    await Promise.all(Array.from({ length: Math.min(COMMITS_IN_FLIGHT, plans.length) }, worker))
    return outcomes
  } finally {
    await admin.stop()
  }
}
