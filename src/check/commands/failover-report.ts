import { boardColumns, boardJson, groupBoard, type GroupBoardRow } from '../translate/group-board.js'
import type { FailoverOutcome, FailoverPartitionPlan, GroupFailoverPlan } from '../translate/group-failover-plan.js'
import { render, type Column } from '../cli/output.js'
import { where, type FailoverArgs, type FailoverDirection, type Side } from './failover-args.js'
import type { FailoverPlan } from './failover-plan.js'

interface PlanRow {
  readonly plan: GroupFailoverPlan
  readonly partition: FailoverPartitionPlan
  readonly outcome: FailoverOutcome | undefined
}

const num = (value: bigint | undefined): number | undefined => value === undefined ? undefined : Number(value)
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

export function groupNotes (
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

/** The board alone (`mirror-check groups`): one line per group, or json with the totals per status. */
export function boardText (format: FailoverArgs['format'], from: Side, to: Side, board: readonly GroupBoardRow[]): string {
  if (format !== 'json') return render(format, boardColumns, board)
  return JSON.stringify({ command: 'groups', from: from.role, to: to.role, groupCount: board.length, ...boardJson(board) }, null, 2) + '\n'
}

/** The plan per partition, as a table or as JSON (with the offset syncs read and each group's outcome). */
export function planText (plan: FailoverPlan, args: Pick<FailoverArgs, 'format' | 'execute'>, outcomes: readonly FailoverOutcome[]): string {
  const { direction, from, to, plans } = plan
  if (args.format === 'json') return toJson(direction, args.execute, from, to, plan.syncs.topic, plan.syncs.records, plan.reverseSyncs, plans, outcomes)
  const rows = plans.flatMap(p => p.partitions.map(partition => ({ plan: p, partition, outcome: outcomes.find(o => o.group === p.group) })))
  return render(args.format, columns(to), rows)
}
