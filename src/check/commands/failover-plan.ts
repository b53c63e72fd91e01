import { listConsumerGroups } from '../lag/group-offsets.js'
import { groupSelection, selectGroups } from '../translate/group-selection.js'
import { planGroupFailover, type GroupFailoverPlan, type PlanGroupFailoverOptions } from '../translate/group-failover-plan.js'
import { mm2OffsetSyncsOf, mm2TranslateFrom } from '../translate/mm2-offsets.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import type { GroupTranslationRow } from '../translate/translate-group.js'
import { targetTopicName } from '../../config/mirror-config.js'
import { mm2OffsetSyncsTopicName } from '../../mirror-topics/mm2-records.js'
import { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { createLogger, silentLogger, type Logger } from '../../shared/logger.js'
import { clusterPair, connectClient } from '../cli/cluster-args.js'
import { UsageError } from '../cli/exit-codes.js'
import { where, type FailoverArgs, type FailoverDirection, type Side } from './failover-args.js'

/**
 * What a failover works on, all read before anything is written: the two clusters, the offset
 * syncs that translate (and those of the flow back), and the plan of each selected group.
 */
export interface FailoverPlan {
  readonly direction: FailoverDirection
  readonly source: Side
  readonly target: Side
  /** The cluster the groups leave, and the one they move to. */
  readonly from: Side
  readonly to: Side
  /** The offset-syncs topic of the flow from -> to (on `to`), the one `--rpo` reads. */
  readonly syncsTopic: string
  /** The offset syncs the plan translated with (MirrorMaker 2's with --mm2): topic and records read. */
  readonly syncs: { readonly topic: string, readonly records: number }
  /** The offset syncs of the flow back to -> from (on `from`; null topic with --mm2). */
  readonly reverseSyncs: { readonly topic: string | null, readonly records: number }
  /** No group selected: nothing was read but the group list, and `plans` is empty. */
  readonly noGroups: boolean
  readonly plans: readonly GroupFailoverPlan[]
  readonly logger: Logger
  /** What the plan found to say (stderr lines, in order). */
  readonly notes: string[]
}

type Translation = Pick<PlanGroupFailoverOptions, 'syncs' | 'reverseSyncs' | 'translate'>

/** The sides and topics a failover names, checked before anything connects. */
function failoverSides (direction: FailoverDirection, args: FailoverArgs) {
  const pair = clusterPair(args)
  const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
  const source: Side = { role: 'source', connection: { ...pair.source, ...timeouts } }
  const target: Side = { role: 'target', connection: { ...pair.target, ...timeouts } }
  const [from, to] = direction === 'failover' ? [source, target] : [target, source]
  const sourceAlias = args['source-alias'] ?? 'source'
  const targetAlias = args['target-alias'] ?? 'source'
  // The flow from -> to (its syncs are on `to`) and the flow back to -> from (its syncs are on `from`).
  const syncsTopic = args['offset-syncs-topic'] ?? offsetSyncsTopicName(direction === 'failover' ? sourceAlias : targetAlias)
  const reverseTopic = args['reverse-offset-syncs-topic'] ?? offsetSyncsTopicName(direction === 'failover' ? targetAlias : sourceAlias)
  return { source, target, from, to, syncsTopic, reverseTopic }
}

/** The groups named, and those on `from` the pattern selects (a note when it selects none). */
async function selectedGroups (args: FailoverArgs, selection: ReturnType<typeof groupSelection>, from: Side, notes: string[]): Promise<string[]> {
  if (selection.pattern === undefined) return [...selection.named]
  const client = await connectClient(from.connection, args)
  try {
    const groups = selectGroups(selection, await listConsumerGroups(client))
    if (groups.length === selection.named.length) {
      notes.push(
        `mirror-check: no consumer group on ${where(from)} matches ${selection.patternSource ?? ''}${selection.exclude === undefined ? '' : ` (excluding "${args['groups-exclude']}")`}`
      )
    }
    return groups
  } finally {
    await client.close()
  }
}

/** MirrorMaker 2's offset syncs and its rule, as the plan's translation. */
async function mm2PlanTranslation (args: FailoverArgs, mm2: { topic: string, onTarget: string }, from: Side, to: Side, notes: string[]) {
  const loaded = await mm2Translation(args, mm2, from, to)
  if (loaded.records === 0) notes.push(`mirror-check: no MirrorMaker 2 offset syncs in ${loaded.topic}: is MirrorMaker 2 copying these topics?`)
  notes.push('mirror-check: MirrorMaker 2\'s translation (the newest offset sync at or below, + 1) lands at or before the exact offset: the group re-reads up to offset.lag.max (default 100) records per partition, never skips')
  const translation: Translation = { syncs: new OffsetSyncIndex(), translate: loaded.translate }
  return { translation, syncs: { topic: loaded.topic, records: loaded.records }, reverseSyncs: { topic: null, records: 0 } }
}

/** The sidecar's offset syncs of the flow from -> to, and of the flow back when there are any, as the plan's translation. */
async function sidecarPlanTranslation (direction: FailoverDirection, sides: ReturnType<typeof failoverSides>, logger: Logger, notes: string[]) {
  const { from, to, syncsTopic, reverseTopic } = sides
  const syncs = await loadOffsetSyncs(to.connection, syncsTopic, logger)
  if (syncs.records === 0) notes.push(missingSyncsNote(direction, to, syncsTopic))
  // Records produced on `to` and copied to `from` (failback after a failover, active-active): the
  // group may have read some of them on `from`; without these syncs they are unknown.
  const reverseSyncs = syncs.records === 0 ? undefined : await loadOffsetSyncs(from.connection, reverseTopic, logger)
  if (direction === 'failback' && reverseSyncs?.records === 0) {
    notes.push(
      `mirror-check: warning: no offset syncs in ${reverseTopic} on ${where(from)} (the source -> target flow): records that came from the source are not told apart from the target's own; a group still reading them on the target would skip the rest of them. Name that flow's topic with --source-alias or --reverse-offset-syncs-topic`
    )
  }
  const translation: Translation = { syncs, ...(reverseSyncs === undefined || reverseSyncs.records === 0 ? {} : { reverseSyncs }) }
  return { translation, syncs: { topic: syncsTopic, records: syncs.records }, reverseSyncs: { topic: reverseTopic, records: reverseSyncs?.records ?? 0 } }
}

/**
 * Checks the flags, reads the groups and the offset syncs, and plans the move of each selected
 * group; writes nothing (`executeGroupFailover` does, with the plans).
 */
export async function planFailover (direction: FailoverDirection, args: FailoverArgs): Promise<FailoverPlan> {
  const selection = validate(args)
  if (args.rpo === true && (direction !== 'failover' || mm2Flow(direction, args) !== undefined)) {
    throw new UsageError('--rpo: failover of a sidecar flow only (it reads its offset syncs); run mirror-check rpo for other flows')
  }
  const sides = failoverSides(direction, args)
  const { source, target, from, to, syncsTopic, reverseTopic } = sides
  const mm2 = mm2Flow(direction, args)
  const logger = args.verbose ? createLogger({ level: 'debug' }) : silentLogger
  const notes: string[] = []
  // The offset-sync reads and the plan retry a lost connection as the sidecar does; an unreachable
  // cluster is found here first, within --timeout-ms and with the wording of the other commands.
  for (const side of [source, target]) await (await connectClient(side.connection, args)).close()
  const groups = await selectedGroups(args, selection, from, notes)
  const plan = { direction, source, target, from, to, syncsTopic, logger, notes }
  if (groups.length === 0) {
    return { ...plan, syncs: { topic: syncsTopic, records: 0 }, reverseSyncs: { topic: reverseTopic, records: 0 }, noGroups: true, plans: [] }
  }
  const loaded = mm2 !== undefined ? await mm2PlanTranslation(args, mm2, from, to, notes) : await sidecarPlanTranslation(direction, sides, logger, notes)
  const plans = await planGroupFailover({
    from: from.connection,
    to: to.connection,
    groups,
    ...(args.topic === undefined ? {} : { topics: args.topic }),
    ...loaded.translation,
    logger,
  })
  return { ...plan, syncs: loaded.syncs, reverseSyncs: loaded.reverseSyncs, noGroups: false, plans }
}

function missingSyncsNote (direction: FailoverDirection, to: Side, topic: string): string {
  if (direction === 'failback') {
    return `mirror-check: no offset syncs in ${topic} on ${where(to)}: failback needs the offset syncs of a flow target -> source (a second sidecar mirroring the target cluster back to the source cluster); start one, or name its topic with --target-alias or --offset-syncs-topic`
  }
  return `mirror-check: no offset syncs in ${topic} on ${where(to)}: is a sidecar mirroring source -> target? Name the topic with --source-alias or --offset-syncs-topic`
}

/** With --mm2 (failover only): MirrorMaker 2's offset-syncs topic, checked before anything connects. */
function mm2Flow (direction: FailoverDirection, args: FailoverArgs): { topic: string, onTarget: string } | undefined {
  if (args.mm2 !== true && args['mm2-offset-syncs-topic'] === undefined) return undefined
  if (direction === 'failback') {
    throw new UsageError(
      'failback --mm2: MirrorMaker 2 records no translation back (its checkpoints map source offsets to the target only); failing back without re-reading needs a sidecar flow target -> source and its offset syncs'
    )
  }
  const alias = args['target-alias']
  if (args['mm2-offset-syncs-topic'] === undefined && alias === undefined) {
    throw new UsageError(
      "--mm2 needs --target-alias (MirrorMaker 2's alias of the target cluster; names its offset-syncs topic mm2-offset-syncs.<target-alias>.internal) or --mm2-offset-syncs-topic"
    )
  }
  const explicit = args['mm2-offset-syncs-topic']
  // MirrorMaker 2 names the topic after the other cluster than the one holding it (offset-syncs.topic.location).
  return { topic: explicit ?? mm2OffsetSyncsTopicName(alias as string), onTarget: explicit ?? mm2OffsetSyncsTopicName(args['source-alias'] ?? 'source') }
}

/** MirrorMaker 2's offset syncs (on the source by default, `offset-syncs.topic.location`; else on the target) and a translator with its rule. */
async function mm2Translation (
  args: FailoverArgs,
  mm2: { topic: string, onTarget: string },
  from: Side,
  to: Side
): Promise<{ topic: string, records: number, translate: NonNullable<PlanGroupFailoverOptions['translate']> }> {
  const policy =
    (args['replication-policy'] ?? 'default') === 'identity' ? { kind: 'identity' as const } : { kind: 'default' as const, separator: args.separator ?? '.' }
  const sourceAlias = args['source-alias'] ?? 'source'
  let syncs: Map<string, ReadonlyArray<{ upstream: bigint, downstream: bigint }>> | undefined
  let topic = mm2.topic
  for (const [side, name] of [
    [from, mm2.topic],
    [to, mm2.onTarget],
  ] as const) {
    const client = await connectClient(side.connection, args)
    try {
      if (await client.hasTopic(name)) {
        syncs = await mm2OffsetSyncsOf(client, name)
        topic = name
        break
      }
    } finally {
      await client.close()
    }
  }
  if (syncs === undefined) {
    throw new UsageError(
      `--mm2: no topic ${mm2.topic} on ${where(from)} nor ${mm2.onTarget} on ${where(to)}; give --target-alias and --source-alias as MirrorMaker 2's aliases, or --mm2-offset-syncs-topic`
    )
  }
  const found = syncs
  const translate = (group: string, committed: ReadonlyArray<{ topic: string, partition: number, offset: bigint }>): GroupTranslationRow[] =>
    committed
      .map(({ topic, partition, offset }): GroupTranslationRow => {
        const targetOffset = mm2TranslateFrom(found, topic, partition, offset)
        const base = { group, topic, partition, sourceOffset: offset }
        return targetOffset === undefined
          ? { ...base, status: 'no-syncs' }
          : { ...base, status: 'translated', targetTopic: targetTopicName(policy, sourceAlias, topic), targetOffset }
      })
      .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
  return { topic, records: [...found.values()].reduce((n, list) => n + list.length, 0), translate }
}
/** Flags checked before anything connects: the group selection and the mode. */
function validate (args: FailoverArgs): ReturnType<typeof groupSelection> {
  const selection = groupSelection(args)
  if (args.execute && args['dry-run'] === true) {
    throw new UsageError('--dry-run and --execute exclude each other; give --execute to write, nothing for a dry run')
  }
  if (args['dry-run'] === false && !args.execute) throw new UsageError('--no-dry-run writes nothing by itself; give --execute to write the offsets')
  return selection
}
