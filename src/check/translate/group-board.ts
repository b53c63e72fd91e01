import type { Column } from '../cli/output.js'
import type { FailoverOutcome, GroupFailoverPlan } from './group-failover-plan.js'

/**
 * Where one group stands in a move of many groups:
 * - `moved`: on the other cluster the group is at (or past) the exact translation of every partition;
 * - `to-move`: idle there, its offsets would be written (`--execute`);
 * - `written`: `--execute` wrote them in this run;
 * - `active`: it has members on the other cluster: skipped, never overwritten;
 * - `refused`: a member joined between plan and commit, the broker refused, nothing written;
 * - `untranslatable`: a partition has no exact translation (not yet mirrored, no offset syncs);
 * - `no-offsets`: nothing committed on the cluster the consumers leave;
 * - `failed`: the commit failed for another reason.
 */
export type GroupBoardStatus = 'moved' | 'to-move' | 'written' | 'active' | 'refused' | 'untranslatable' | 'no-offsets' | 'failed'

/** One line of the board: a group's state on both clusters and what the move does with it. */
export interface GroupBoardRow {
  readonly group: string
  readonly fromState: string
  readonly fromMembers: number
  readonly toState: string
  readonly toMembers: number
  readonly partitions: number
  /** Records the group had not read on the cluster it leaves (sum over its partitions). */
  readonly lag: bigint
  /** Records it will read on the other cluster from its planned offsets. */
  readonly toLag: bigint
  /** Records it already consumed that it reads again after the move: 0 when every translation is exact. */
  readonly reReads: bigint
  /** Offsets the move writes (or wrote) for the group. */
  readonly writes: number
  readonly status: GroupBoardStatus
}

/** The board's status of one group, pure: the plan's blocker first, then what executing did. */
export function boardStatus (plan: GroupFailoverPlan, outcome: FailoverOutcome | undefined): GroupBoardStatus {
  if (plan.blocker === 'no-offsets' || plan.blocker === 'untranslatable') return plan.blocker
  if (plan.blocker === 'active') return 'active'
  if (outcome?.status === 'written') return 'written'
  if (outcome?.status === 'refused') return 'refused'
  if (outcome?.status === 'failed') return 'failed'
  return plan.writes.length === 0 ? 'moved' : 'to-move'
}

const sum = (values: ReadonlyArray<bigint | undefined>): bigint => values.reduce<bigint>((n, v) => n + (v ?? 0n), 0n)

/** One row per plan, in the plans' order. */
export function groupBoard (plans: readonly GroupFailoverPlan[], outcomes: readonly FailoverOutcome[]): GroupBoardRow[] {
  const outcomeOf = new Map(outcomes.map(o => [o.group, o]))
  return plans.map(plan => ({
    group: plan.group,
    fromState: plan.from.state,
    fromMembers: plan.from.members,
    toState: plan.to.state,
    toMembers: plan.to.members,
    partitions: plan.partitions.length,
    lag: sum(plan.partitions.map(p => p.lag)),
    toLag: sum(plan.partitions.map(p => p.toLag)),
    reReads: sum(plan.partitions.map(p => p.reReads)),
    writes: plan.writes.length,
    status: boardStatus(plan, outcomeOf.get(plan.group)),
  }))
}

/** Groups per status, every status present (0 when none). */
export function boardTotals (rows: readonly GroupBoardRow[]): Record<GroupBoardStatus, number> {
  const totals: Record<GroupBoardStatus, number> = { moved: 0, 'to-move': 0, written: 0, active: 0, refused: 0, untranslatable: 0, 'no-offsets': 0, failed: 0 }
  for (const row of rows) totals[row.status]++
  return totals
}

const num = (value: bigint): number => Number(value)

/** The board as a table: one line per group. */
export const boardColumns: ReadonlyArray<Column<GroupBoardRow>> = [
  { header: 'GROUP', value: r => r.group },
  { header: 'STATE', value: r => r.fromState },
  { header: 'MEMBERS', value: r => r.fromMembers },
  { header: 'TO-STATE', value: r => r.toState },
  { header: 'TO-MEMBERS', value: r => r.toMembers },
  { header: 'PARTITIONS', value: r => r.partitions },
  { header: 'LAG', value: r => num(r.lag) },
  { header: 'TO-LAG', value: r => num(r.toLag) },
  { header: 'RE-READS', value: r => num(r.reReads) },
  { header: 'WRITES', value: r => r.writes },
  { header: 'STATUS', value: r => r.status },
]

/** The board in json: its rows with numbers for offsets, and the totals per status. */
export function boardJson (rows: readonly GroupBoardRow[]): { totals: Record<GroupBoardStatus, number>, board: Array<Record<string, string | number>> } {
  return {
    totals: boardTotals(rows),
    board: rows.map(r => ({ ...r, lag: num(r.lag), toLag: num(r.toLag), reReads: num(r.reReads) })),
  }
}

/** The totals as one phrase, statuses with no group left out: `198 written, 2 active`. */
export function boardTotalsText (rows: readonly GroupBoardRow[]): string {
  return Object.entries(boardTotals(rows)).filter(([, n]) => n > 0).map(([status, n]) => `${n} ${status}`).join(', ')
}
