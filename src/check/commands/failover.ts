import type { Argv, CommandModule } from 'yargs'
import { boardTotalsText, groupBoard } from '../translate/group-board.js'
import { DEFAULT_SELECTION_EXCLUDE } from '../translate/group-selection.js'
import { executeGroupFailover, type FailoverOutcome, type GroupFailoverPlan } from '../translate/group-failover-plan.js'
import { ReplicationPolicyKinds } from '../../config/mirror-config.js'
import { withClusterPairArgs, withCommonArgs } from '../cli/cluster-args.js'
import { ExitCode } from '../cli/exit-codes.js'
import { note, write } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import { where, type FailoverArgs, type FailoverDirection } from './failover-args.js'
import { planFailover } from './failover-plan.js'
import { boardText, groupNotes, planText } from './failover-report.js'
import { failoverRpo } from './failover-rpo.js'

/** Exit 1 unless every group moved, or would move, exactly; 2 when a commit failed. */
function failoverExitCode (plans: readonly GroupFailoverPlan[], outcomes: readonly FailoverOutcome[]): ExitCode {
  if (outcomes.some(o => o.status === 'failed')) return ExitCode.ERROR
  const ok = plans.every(p => p.blocker === undefined) && outcomes.every(o => o.status === 'written' || o.status === 'nothing-to-write')
  return ok ? ExitCode.OK : ExitCode.CHECK_FAILED
}

/**
 * Plans (and with --execute writes) the move of the selected groups, then renders the plan (or,
 * for `mirror-check groups`, the board); the exit code is 1 unless every group moved, or would
 * move, exactly, and 2 when a commit failed (the plan is still printed).
 */
export async function failoverOutput (
  direction: FailoverDirection,
  args: FailoverArgs,
  view: 'plan' | 'board' = 'plan'
): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  const plan = await planFailover(direction, args)
  const { from, to, plans, notes } = plan
  if (plan.noGroups) {
    const text = view === 'board' ? boardText(args.format, from, to, []) : planText(plan, args, [])
    return { text, notes, exitCode: ExitCode.CHECK_FAILED }
  }
  const outcomes = args.execute ? await executeGroupFailover(to.connection, plans, plan.logger) : []

  for (const group of plans) notes.push(...groupNotes(direction, group, outcomes.find(o => o.group === group.group), args.execute, from, to, args.topic))
  const writes = plans.filter(p => p.blocker === undefined).reduce((n, p) => n + p.writes.length, 0)
  if (!args.execute) {
    notes.push(
      writes === 0
        ? 'mirror-check: dry run: nothing to write'
        : `mirror-check: dry run, nothing written; --execute would commit ${writes} offset(s) on ${where(to)}`
    )
  }
  const board = groupBoard(plans, outcomes)
  if (plans.length > 1) notes.push(`mirror-check: ${plans.length} groups: ${boardTotalsText(board)}`)
  const exitCode = failoverExitCode(plans, outcomes)
  if (view === 'board') return { text: boardText(args.format, from, to, board), notes, exitCode }
  const text = planText(plan, args, outcomes)
  if (args.rpo === true) {
    const rpo = await failoverRpo(args, plan.source, plan.target, plan.syncsTopic, plans)
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
