import type { Argv, CommandModule } from 'yargs'
import { listConsumerGroups } from '../lag/group-offsets.js'
import { boardColumns, boardJson, boardTotalsText, groupBoard, type GroupBoardRow } from '../translate/group-board.js'
import { DEFAULT_SELECTION_EXCLUDE, groupSelection, selectGroups } from '../translate/group-selection.js'
import {
  executeGroupFailover,
  type FailoverOutcome,
  type FailoverPartitionPlan,
  type GroupFailoverPlan,
  planGroupFailover,
  type PlanGroupFailoverOptions,
} from '../translate/group-failover-plan.js'
import { mm2OffsetSyncsOf, mm2TranslateFrom } from '../translate/mm2-offsets.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import type { GroupTranslationRow } from '../translate/translate-group.js'
import type { ClusterConnection } from '../../config/cluster-connection.js'
import { type ReplicationPolicyKind, ReplicationPolicyKinds, targetTopicName } from '../../config/mirror-config.js'
import { mm2OffsetSyncsTopicName } from '../../mirror-topics/mm2-records.js'
import { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { clusterPair, connectClient, withClusterPairArgs, withCommonArgs, type ClusterPairArgs, type CommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import { chooseAlignment } from '../verify/alignment-choice.js'
import { collectMissingRecords } from '../verify/missing-records.js'

export interface FailoverArgs extends CommonArgs, ClusterPairArgs {
  group?: string[]
  groups?: string
  'group-regex'?: string
  'all-groups'?: boolean
  'groups-exclude': string
  topic?: string[]
  execute: boolean
  'dry-run'?: boolean
  /** Alias of the source cluster in the flow source -> target (names its offset-syncs topic on the target). */
  'source-alias'?: string
  /** Alias of the target cluster in the flow target -> source (names its offset-syncs topic on the source). */
  'target-alias'?: string
  'offset-syncs-topic'?: string
  'reverse-offset-syncs-topic'?: string
  /** failover only: the flow is MirrorMaker 2. */
  mm2?: boolean
  'mm2-offset-syncs-topic'?: string
  'replication-policy'?: ReplicationPolicyKind
  separator?: string
  /** failover only: also list the source records of the moved topics that are not on the target (`mirror-check rpo`). */
  rpo?: boolean
}

/** Which way consumers move: failover leaves the source for the target, failback the target for the source. */
export type FailoverDirection = 'failover' | 'failback'

interface Side {
  /** `source` or `target`, as the flags name the clusters. */
  readonly role: 'source' | 'target'
  readonly connection: ClusterConnection
}

interface PlanRow {
  readonly plan: GroupFailoverPlan
  readonly partition: FailoverPartitionPlan
  readonly outcome: FailoverOutcome | undefined
}

const num = (value: bigint | undefined): number | undefined => value === undefined ? undefined : Number(value)

function where (side: Side): string {
  return `the ${side.role} cluster (${side.connection.brokers.join(',')})`
}

function blockedText (plan: GroupFailoverPlan, to: Side): string {
  if (plan.blocker === 'active') return `not written: the group has ${plan.to.members} member(s) on the ${to.role}`
  return 'not written: another partition cannot be translated'
}

function actionText (row: PlanRow, to: Side): string {
  const { partition: p, plan, outcome } = row
  if (p.action === 'untranslatable') {
    if (p.toTopicMissing === true) return `cannot translate: ${p.toTopic} does not exist on the ${to.role}`
    return p.translation === 'no-syncs' ? 'cannot translate: no offset syncs' : `cannot translate: not yet mirrored (mirrored up to ${p.mirroredUpTo ?? '-'})`
  }
  if (p.action === 'keep-ahead') return `keep ${p.toCommittedOffset} (ahead of ${p.translatedOffset}; never rewound)`
  if (p.action === 'keep-equal') return `keep ${p.toCommittedOffset} (already there)`
  if (plan.blocker !== undefined) return blockedText(plan, to)
  if (outcome?.status === 'refused') return `not written: refused (${outcome.kafkaCode}), a member joined`
  if (outcome?.status === 'failed') return 'not written: the commit failed'
  const reRead = p.reReads === undefined || p.reReads === 0n ? '' : ` (re-reads ${p.reReads})`
  if (outcome?.status === 'written') return `committed ${p.plannedOffset}${reRead}`
  return `commit ${p.plannedOffset}${reRead}`
}

function columns (to: Side): Column<PlanRow>[] {
  return [
    { header: 'GROUP', value: r => r.plan.group },
    { header: 'TOPIC', value: r => r.partition.topic },
    { header: 'PARTITION', value: r => r.partition.partition },
    { header: 'CURRENT-OFFSET', value: r => num(r.partition.currentOffset) },
    { header: 'LAG', value: r => num(r.partition.lag) },
    { header: 'MEMBERS', value: r => r.plan.from.members },
    { header: 'TO-TOPIC', value: r => r.partition.toTopic },
    { header: 'TRANSLATED-OFFSET', value: r => num(r.partition.translatedOffset) },
    { header: 'TO-COMMITTED-OFFSET', value: r => num(r.partition.toCommittedOffset) },
    { header: 'TO-LAG', value: r => num(r.partition.toLag) },
    { header: 'TO-MEMBERS', value: r => r.plan.to.members },
    { header: 'ACTION', value: r => actionText(r, to) },
  ]
}

function outcomeName (plan: GroupFailoverPlan, outcome: FailoverOutcome | undefined, execute: boolean): string {
  if (plan.blocker !== undefined) return 'blocked'
  if (!execute) return plan.writes.length === 0 ? 'nothing-to-write' : 'planned'
  return outcome?.status ?? 'planned'
}

function toJson (
  direction: FailoverDirection,
  execute: boolean,
  from: Side,
  to: Side,
  syncsTopic: string,
  syncRecords: number,
  reverse: { topic: string | null, records: number },
  plans: readonly GroupFailoverPlan[],
  outcomes: readonly FailoverOutcome[]
): string {
  const outcomeOf = (group: string): FailoverOutcome | undefined => outcomes.find(o => o.group === group)
  return (
    JSON.stringify(
      {
        command: direction,
        mode: execute ? 'execute' : 'dry-run',
        from: {
          cluster: from.role,
          bootstrap: from.connection.brokers.join(','),
          reverseOffsetSyncsTopic: reverse.topic,
          reverseOffsetSyncRecords: reverse.records,
        },
        to: { cluster: to.role, bootstrap: to.connection.brokers.join(','), offsetSyncsTopic: syncsTopic, offsetSyncRecords: syncRecords },
        ...boardJson(groupBoard(plans, outcomes)),
        groups: plans.map(plan => {
          const outcome = outcomeOf(plan.group)
          return {
            group: plan.group,
            from: plan.from,
            to: plan.to,
            blocker: plan.blocker ?? null,
            outcome: outcomeName(plan, outcome, execute),
            ...(outcome?.status === 'refused' ? { kafkaCode: outcome.kafkaCode } : {}),
            ...(outcome?.status === 'failed' ? { error: outcome.error.message } : {}),
            writes: plan.writes.map(w => ({ topic: w.topic, partition: w.partition, offset: Number(w.offset) })),
            partitions: plan.partitions.map(p => ({
              topic: p.topic,
              partition: p.partition,
              currentOffset: Number(p.currentOffset),
              logEndOffset: num(p.logEndOffset) ?? null,
              lag: num(p.lag) ?? null,
              translation: p.translation,
              mirroredUpTo: num(p.mirroredUpTo) ?? null,
              toTopic: p.toTopic ?? null,
              translatedOffset: num(p.translatedOffset) ?? null,
              reReads: num(p.reReads) ?? null,
              toCommittedOffset: num(p.toCommittedOffset) ?? null,
              toLogEndOffset: num(p.toLogEndOffset) ?? null,
              plannedOffset: num(p.plannedOffset) ?? null,
              toLag: num(p.toLag) ?? null,
              action: p.action,
              toTopicMissing: p.toTopicMissing ?? false,
              actionText: actionText({ plan, partition: p, outcome }, to),
            })),
          }
        }),
      },
      null,
      2
    ) + '\n'
  )
}

function groupNotes (
  direction: FailoverDirection,
  plan: GroupFailoverPlan,
  outcome: FailoverOutcome | undefined,
  execute: boolean,
  from: Side,
  to: Side,
  topics: readonly string[] | undefined
): string[] {
  const notes: string[] = []
  if (plan.from.members > 0) {
    notes.push(
      `mirror-check: warning: group '${plan.group}' still has ${plan.from.members} member(s) on ${where(from)}: they may commit past this plan; stop them before moving the group`
    )
  }
  if (plan.blocker === 'no-offsets') {
    notes.push(
      `mirror-check: group '${plan.group}' has no committed offsets${topics === undefined ? '' : ` on ${topics.join(', ')}`} on ${where(from)}; check --group${topics === undefined ? '' : ' and --topic'}`
    )
  }
  if (plan.blocker === 'untranslatable') {
    const reason = (p: FailoverPartitionPlan): string =>
      p.toTopicMissing === true
        ? `${p.toTopic} does not exist on the ${to.role}`
        : p.translation === 'no-syncs'
          ? 'no offset syncs'
          : `not yet mirrored, mirrored up to ${p.mirroredUpTo ?? '-'}`
    const bad = plan.partitions.filter(p => p.action === 'untranslatable').map(p => `${p.topic}-${p.partition} (${reason(p)})`)
    const advice: string[] = []
    if (plan.partitions.some(p => p.toTopicMissing === true)) advice.push(`check the topics on the ${to.role}`)
    if (plan.partitions.some(p => p.translation === 'no-syncs')) {
      advice.push(direction === 'failback' ? 'mirror those topics back with the target -> source flow' : 'check that the sidecar mirrors those topics')
    }
    if (plan.partitions.some(p => p.translation === 'not-yet-mirrored')) advice.push('wait until the mirror copied that far')
    notes.push(
      `mirror-check: group '${plan.group}': ${bad.join(', ')} cannot be translated exactly; nothing of the group ${execute ? 'was' : 'would be'} written. ${advice.join(' and ').replace(/^./, c => c.toUpperCase())}, or limit the move with --topic`
    )
  }
  if (plan.blocker === 'active') {
    notes.push(
      execute
        ? `mirror-check: group '${plan.group}' has ${plan.to.members} active member(s) on ${where(to)}: refused, nothing written; stop its consumers there, then run again`
        : `mirror-check: group '${plan.group}' has ${plan.to.members} active member(s) on ${where(to)}: --execute would refuse it; stop its consumers there first`
    )
  }
  const reRead = plan.partitions.filter(p => p.action === 'commit' && p.reReads !== undefined && p.reReads > 0n)
  if (reRead.length > 0) {
    notes.push(
      `mirror-check: group '${plan.group}': ${reRead.map(p => `${p.toTopic}-${p.partition} (${p.reReads})`).join(', ')}: the two clusters hold those records in different orders (both took writes while the flows copied them), so no offset is exact; the plan starts at the first record the group has not read (nothing skipped) and the group reads that many records again`
    )
  }
  const kept = plan.partitions.filter(p => p.action === 'keep-ahead')
  if (kept.length > 0) {
    notes.push(
      `mirror-check: group '${plan.group}': ${kept.map(p => `${p.toTopic}-${p.partition}`).join(', ')} already committed past the translation on the ${to.role}; kept (offsets are never rewound)`
    )
  }
  if (outcome?.status === 'written') notes.push(`mirror-check: committed ${outcome.offsets} offset(s) of group '${plan.group}' on ${where(to)}`)
  if (outcome?.status === 'failed') notes.push(`mirror-check: group '${plan.group}': ${outcome.error.message}; nothing of the group written`)
  if (outcome?.status === 'refused') {
    notes.push(
      `mirror-check: group '${plan.group}': ${where(to)} refused the commit (${outcome.kafkaCode}): a member joined since the plan; nothing of the group written`
    )
  }
  return notes
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

/** The board alone (`mirror-check groups`): one line per group, or json with the totals per status. */
function boardText (format: FailoverArgs['format'], from: Side, to: Side, board: readonly GroupBoardRow[]): string {
  if (format !== 'json') return render(format, boardColumns, board)
  return JSON.stringify({ command: 'groups', from: from.role, to: to.role, groupCount: board.length, ...boardJson(board) }, null, 2) + '\n'
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

/**
 * Plans (and with --execute writes) the move of the selected groups; the exit code is 1 unless
 * every group moved, or would move, exactly, and 2 when a commit failed (the plan is still
 * printed).
 */
/** The mirror's consumer group on the source (the sidecar's default `group.id`), whose commits `--rpo` reads. */
const MIRROR_GROUP = 'mirror-sidecar'

/** Missing ranges listed in the notes of `failover --rpo`; `mirror-check rpo` lists them all. */
const RPO_RANGES_LISTED = 10

/**
 * The record-level RPO of the topics a failover moves (`--rpo`): per topic the source records not
 * on the target, as notes and as the JSON report's `rpo`.
 */
async function failoverRpo (
  args: FailoverArgs,
  source: Side,
  target: Side,
  syncsTopic: string,
  plans: readonly GroupFailoverPlan[]
): Promise<{ notes: string[], json: Array<{ topic: string, targetTopic: string, missingRecords: number, ranges: unknown[] }> }> {
  const pairs = new Map(plans.flatMap(p => p.partitions.flatMap(r => (r.toTopic === undefined ? [] : [[r.topic, r.toTopic] as const]))))
  const notes: string[] = []
  const json: Array<{ topic: string, targetTopic: string, missingRecords: number, ranges: unknown[] }> = []
  const sourceClient = await connectClient(source.connection, args)
  try {
    const targetClient = await connectClient(target.connection, args)
    try {
      for (const [topic, targetTopic] of pairs) {
        const alignment = {
          'offset-syncs': true,
          'offset-syncs-topic': syncsTopic,
          'source-alias': args['source-alias'] ?? 'source',
          topic,
          verbose: args.verbose,
          'timeout-ms': args['timeout-ms'],
        }
        const choice = await chooseAlignment(alignment, targetClient, target.connection, targetTopic, notes)
        const { partitions } = await collectMissingRecords({
          source: sourceClient,
          target: targetClient,
          topic,
          targetTopic,
          group: MIRROR_GROUP,
          keys: false,
          ...(choice.aligner === undefined ? {} : { aligner: choice.aligner }),
        })
        const ranges = partitions.flatMap(p => p.ranges.map(r => ({ partition: p.partition, ...r })))
        const missing = partitions.reduce((n, p) => n + p.missing, 0)
        json.push({ topic, targetTopic, missingRecords: missing, ranges })
        const verdict = missing === 0 ? 'every source record up to the end offsets is on the target' : `${missing} source record(s) not on the target`
        notes.push(`mirror-check: rpo: ${topic}: ${verdict}`)
        for (const r of ranges.slice(0, RPO_RANGES_LISTED)) {
          notes.push(
            `mirror-check: rpo: ${topic}-${r.partition} offsets ${r.fromOffset}..${r.toOffset}: ${r.records} record(s), ${new Date(r.firstTimestampMs).toISOString()} .. ${new Date(r.lastTimestampMs).toISOString()}`
          )
        }
        if (ranges.length > RPO_RANGES_LISTED) {
          notes.push(`mirror-check: rpo: ${topic}: ${ranges.length - RPO_RANGES_LISTED} more range(s); mirror-check rpo lists them all`)
        }
      }
    } finally {
      await targetClient.close()
    }
  } finally {
    await sourceClient.close()
  }
  return { notes, json }
}

export async function failoverOutput (
  direction: FailoverDirection,
  args: FailoverArgs,
  view: 'plan' | 'board' = 'plan'
): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  const selection = validate(args)
  if (args.rpo === true && (direction !== 'failover' || mm2Flow(direction, args) !== undefined)) {
    throw new UsageError('--rpo: failover of a sidecar flow only (it reads its offset syncs); run mirror-check rpo for other flows')
  }
  const pair = clusterPair(args)
  const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
  const source: Side = { role: 'source', connection: { ...pair.source, ...timeouts } }
  const target: Side = { role: 'target', connection: { ...pair.target, ...timeouts } }
  const [from, to] = direction === 'failover' ? [source, target] : [target, source]
  const sourceAlias = args['source-alias'] ?? 'source'
  const targetAlias = args['target-alias'] ?? 'source'
  // The flow from -> to (its syncs are on `to`) and the flow back to -> from (its syncs are on `from`).
  const syncsTopic = args['offset-syncs-topic'] ?? offsetSyncsTopicName(direction === 'failover' ? sourceAlias : targetAlias)
  const mm2 = mm2Flow(direction, args)
  const reverseTopic = args['reverse-offset-syncs-topic'] ?? offsetSyncsTopicName(direction === 'failover' ? targetAlias : sourceAlias)
  const logger = args.verbose ? createLogger({ level: 'debug' }) : silentLogger
  const notes: string[] = []
  // The offset-sync reads and the plan retry a lost connection as the sidecar does; an unreachable
  // cluster is found here first, within --timeout-ms and with the wording of the other commands.
  for (const side of [source, target]) await (await connectClient(side.connection, args)).close()

  let groups = [...selection.named]
  if (selection.pattern !== undefined) {
    const client = await connectClient(from.connection, args)
    try {
      groups = selectGroups(selection, await listConsumerGroups(client))
      if (groups.length === selection.named.length) {
        notes.push(
          `mirror-check: no consumer group on ${where(from)} matches ${selection.patternSource ?? ''}${selection.exclude === undefined ? '' : ` (excluding "${args['groups-exclude']}")`}`
        )
      }
    } finally {
      await client.close()
    }
  }
  if (groups.length === 0) {
    if (view === 'board') return { text: boardText(args.format, from, to, []), notes, exitCode: ExitCode.CHECK_FAILED }
    const text =
      args.format === 'json'
        ? toJson(direction, args.execute, from, to, syncsTopic, 0, { topic: reverseTopic, records: 0 }, [], [])
        : render(args.format, columns(to), [])
    return { text, notes, exitCode: ExitCode.CHECK_FAILED }
  }

  let translation: Pick<PlanGroupFailoverOptions, 'syncs' | 'reverseSyncs' | 'translate'>
  let syncRecords: number
  let reverseRecords = 0
  let mm2Topic: string | undefined
  if (mm2 !== undefined) {
    const loaded = await mm2Translation(args, mm2, from, to)
    translation = { syncs: new OffsetSyncIndex(), translate: loaded.translate }
    syncRecords = loaded.records
    mm2Topic = loaded.topic
    if (syncRecords === 0) notes.push(`mirror-check: no MirrorMaker 2 offset syncs in ${loaded.topic}: is MirrorMaker 2 copying these topics?`)
    notes.push('mirror-check: MirrorMaker 2\'s translation (the newest offset sync at or below, + 1) lands at or before the exact offset: the group re-reads up to offset.lag.max (default 100) records per partition, never skips')
  } else {
    const syncs = await loadOffsetSyncs(to.connection, syncsTopic, logger)
    syncRecords = syncs.records
    if (syncs.records === 0) notes.push(missingSyncsNote(direction, to, syncsTopic))
    // Records produced on `to` and copied to `from` (failback after a failover, active-active): the
    // group may have read some of them on `from`; without these syncs they are unknown.
    const reverseSyncs = syncs.records === 0 ? undefined : await loadOffsetSyncs(from.connection, reverseTopic, logger)
    reverseRecords = reverseSyncs?.records ?? 0
    if (direction === 'failback' && reverseSyncs?.records === 0) {
      notes.push(
        `mirror-check: warning: no offset syncs in ${reverseTopic} on ${where(from)} (the source -> target flow): records that came from the source are not told apart from the target's own; a group still reading them on the target would skip the rest of them. Name that flow's topic with --source-alias or --reverse-offset-syncs-topic`
      )
    }
    translation = { syncs, ...(reverseSyncs === undefined || reverseSyncs.records === 0 ? {} : { reverseSyncs }) }
  }
  const plans = await planGroupFailover({
    from: from.connection,
    to: to.connection,
    groups,
    ...(args.topic === undefined ? {} : { topics: args.topic }),
    ...translation,
    logger,
  })
  const outcomes = args.execute ? await executeGroupFailover(to.connection, plans, logger) : []

  for (const plan of plans) notes.push(...groupNotes(direction, plan, outcomes.find(o => o.group === plan.group), args.execute, from, to, args.topic))
  const writes = plans.filter(p => p.blocker === undefined).reduce((n, p) => n + p.writes.length, 0)
  if (!args.execute) {
    notes.push(
      writes === 0
        ? 'mirror-check: dry run: nothing to write'
        : `mirror-check: dry run, nothing written; --execute would commit ${writes} offset(s) on ${where(to)}`
    )
  }

  const ok = plans.every(p => p.blocker === undefined) && outcomes.every(o => o.status === 'written' || o.status === 'nothing-to-write')
  const board = groupBoard(plans, outcomes)
  const text =
    args.format === 'json'
      ? toJson(
        direction,
        args.execute,
        from,
        to,
        mm2Topic ?? syncsTopic,
        syncRecords,
        { topic: mm2 === undefined ? reverseTopic : null, records: reverseRecords },
        plans,
        outcomes
      )
      : render(
        args.format,
        columns(to),
        plans.flatMap(plan => plan.partitions.map(partition => ({ plan, partition, outcome: outcomes.find(o => o.group === plan.group) })))
      )
  if (plans.length > 1) notes.push(`mirror-check: ${plans.length} groups: ${boardTotalsText(board)}`)
  const exitCode = outcomes.some(o => o.status === 'failed') ? ExitCode.ERROR : ok ? ExitCode.OK : ExitCode.CHECK_FAILED
  if (view === 'board') return { text: boardText(args.format, from, to, board), notes, exitCode }
  if (args.rpo === true) {
    const rpo = await failoverRpo(args, source, target, syncsTopic, plans)
    notes.push(...rpo.notes)
    if (args.format === 'json') return { text: JSON.stringify({ ...JSON.parse(text) as object, rpo: rpo.json }, null, 2) + '\n', notes, exitCode }
  }
  return { text, notes, exitCode }
}

export function builder (direction: FailoverDirection) {
  return (yargs: Argv<object>): Argv<FailoverArgs> => {
    const leaving = direction === 'failover' ? 'source' : 'target'
    const written = direction === 'failover' ? 'target' : 'source'
    const common: Argv<object> = withClusterPairArgs(withCommonArgs(yargs))
    const aliased: Argv<object> = common
      .option('source-alias', {
        type: 'string',
        describe:
          'Source cluster alias of the source -> target flow (default "source"); names its offset-syncs topic on the target (with --mm2: MirrorMaker 2\'s source alias, which names the target topics).',
      })
      .option('target-alias', {
        type: 'string',
        describe:
          'Alias of the target cluster as the source of the target -> source flow (default "source": a sidecar run with the MirrorMaker 1 command line); names its offset-syncs topic on the source (with --mm2: MirrorMaker 2\'s target alias, which names its offset-syncs topic).',
      })
    return aliased
      .option('group', { type: 'string', array: true, describe: `Consumer group to move (repeatable); its committed offsets are read on the ${leaving}.` })
      .option('group-regex', {
        type: 'string',
        alias: 'groups',
        describe: `Every consumer group on the ${leaving} matching this regex (MirrorMaker list syntax: "orders-.*,billing", whole names); one line per group.`,
      })
      .option('all-groups', { type: 'boolean', describe: `Every consumer group on the ${leaving} but those --groups-exclude names; one line per group.` })
      .option('groups-exclude', {
        type: 'string',
        default: DEFAULT_SELECTION_EXCLUDE,
        describe: "Groups --group-regex and --all-groups leave out (regex list); the default is MirrorMaker 2's groups.exclude plus the sidecar's own group.",
      })
      .option('topic', { type: 'string', array: true, describe: `Only these topics (names on the ${leaving}).` })
      .option('dry-run', { type: 'boolean', describe: 'Print the plan and write nothing (the default).' })
      .option('execute', {
        type: 'boolean',
        default: false,
        describe: `Write the translated offsets into the groups on the ${written}; refused for a group with members there.`,
      })
      .option('rpo', {
        type: 'boolean',
        describe:
          "failover only: also list the source records of the moved topics not on the target at this moment (record-level RPO, as mirror-check rpo; JSON: rpo); the exit code stays the plan's.",
      })
      .option('offset-syncs-topic', {
        type: 'string',
        describe: `Offset-syncs topic on the ${written} (default mirror-offset-syncs.<${direction === 'failover' ? 'source' : 'target'}-alias>.internal).`,
      })
      .option('mm2', {
        type: 'boolean',
        describe:
          'failover only: the flow is MirrorMaker 2; translate with its offset syncs (mm2-offset-syncs.<target-alias>.internal on the source, or mm2-offset-syncs.<source-alias>.internal on the target) and its rule (the group re-reads up to offset.lag.max records, never skips).',
      })
      .option('mm2-offset-syncs-topic', {
        type: 'string',
        describe: "MirrorMaker 2's offset-syncs topic (default mm2-offset-syncs.<target-alias>.internal); implies --mm2.",
      })
      .option('replication-policy', {
        choices: ReplicationPolicyKinds,
        describe: 'With --mm2: target topic naming, default (<source-alias><separator><topic>, the default with --mm2) or identity.',
      })
      .option('separator', { type: 'string', describe: 'replication.policy.separator for the default policy (default ".").' })
      .option('reverse-offset-syncs-topic', {
        type: 'string',
        describe: `Offset-syncs topic of the flow back on the ${leaving}, read when present: records produced on the ${written} and copied to the ${leaving} (default mirror-offset-syncs.<${direction === 'failover' ? 'target' : 'source'}-alias>.internal).`,
      })
      .example(`$0 ${direction} --source 127.0.0.1:19092 --target 127.0.0.1:29092 --group orders-app`, 'The plan per partition; nothing is written.')
      .example(
        `$0 ${direction} --source 127.0.0.1:19092 --target 127.0.0.1:29092 --groups 'orders-.*' --execute`,
        `Write the translated offsets into the groups on the ${written}.`
      ) as unknown as Argv<FailoverArgs>
  }
}

function handler (direction: FailoverDirection) {
  return async (args: FailoverArgs): Promise<void> => {
    await runCommand(args, async () => {
      const { text, notes, exitCode } = await failoverOutput(direction, args)
      await write(text)
      for (const line of notes) note(line)
      return exitCode
    })
  }
}

export const failoverCommand: CommandModule<object, FailoverArgs> = {
  command: 'failover',
  describe: 'Move consumer groups from the source to the target: per partition the committed offset, its exact translation, lag and group members; --execute writes the translations (exit 1 when a partition cannot be translated or a group is active on the target).',
  builder: builder('failover'),
  handler: handler('failover'),
}

export const failbackCommand: CommandModule<object, FailoverArgs> = {
  command: 'failback',
  describe: 'Move consumer groups back from the target to the source, with the offset syncs of a target -> source flow; as failover otherwise.',
  builder: builder('failback'),
  handler: handler('failback'),
}
