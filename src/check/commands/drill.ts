import type { Argv, CommandModule } from 'yargs'
import { runGroupDrill, type GroupDrillResult } from '../translate/group-drill.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import {
  clusterPair,
  connectClient,
  nonNegativeNumber,
  positiveInteger,
  withClusterPairArgs,
  withCommonArgs,
  type ClusterPairArgs,
  type CommonArgs,
} from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'

export interface DrillArgs extends CommonArgs, ClusterPairArgs {
  group: string
  'rpo-records'?: number
  'rto-seconds'?: number
  'source-alias': string
  'offset-syncs-topic'?: string
}

/** One objective of the drill: what was asked, what was measured, met or not (no objective given: met). */
interface Objective { readonly objective: number | null, readonly measured: number | null, readonly met: boolean }

/** One partition of the group in the drill's table. */
interface DrillRow {
  readonly topic: string
  readonly partition: number
  readonly sourceBefore?: bigint
  readonly targetTopic?: string
  readonly targetOffset?: bigint
  readonly sourceAfter?: bigint
  readonly sourceEnd?: bigint
  readonly mirroredUpTo?: bigint
  readonly unmirrored?: bigint
}

const num = (value: bigint | undefined): number | undefined => value === undefined ? undefined : Number(value)

const columns: Column<DrillRow>[] = [
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'SOURCE-OFFSET-BEFORE', value: r => num(r.sourceBefore) },
  { header: 'TARGET-TOPIC', value: r => r.targetTopic },
  { header: 'TARGET-OFFSET', value: r => num(r.targetOffset) },
  { header: 'SOURCE-OFFSET-AFTER', value: r => num(r.sourceAfter) },
  { header: 'SOURCE-END', value: r => num(r.sourceEnd) },
  { header: 'MIRRORED-UP-TO', value: r => num(r.mirroredUpTo) },
  { header: 'UNMIRRORED', value: r => num(r.unmirrored) },
]

function rowsOf (result: GroupDrillResult): DrillRow[] {
  const at = (list: ReadonlyArray<{ topic: string, partition: number }>, topic: string | undefined, partition: number): number =>
    list.findIndex(o => o.topic === topic && o.partition === partition)
  const ordered = [...result.sourceBefore].sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
  return ordered.map(before => {
    const plan = result.plan?.partitions.find(p => p.topic === before.topic && p.partition === before.partition)
    const targetTopic = plan?.toTopic
    const target = result.targetAfter[at(result.targetAfter, targetTopic, before.partition)]
    const after = result.sourceAfter[at(result.sourceAfter, before.topic, before.partition)]
    const lost = result.unmirrored[at(result.unmirrored, before.topic, before.partition)]
    return {
      topic: before.topic,
      partition: before.partition,
      sourceBefore: before.offset,
      ...(targetTopic === undefined ? {} : { targetTopic }),
      ...(target === undefined ? {} : { targetOffset: target.offset }),
      ...(after === undefined ? {} : { sourceAfter: after.offset }),
      ...(lost === undefined ? {} : { sourceEnd: lost.sourceEndOffset, unmirrored: lost.records }),
      ...(lost?.mirroredUpTo === undefined ? {} : { mirroredUpTo: lost.mirroredUpTo }),
    }
  })
}

function objectives (args: DrillArgs, result: GroupDrillResult): { rto: Objective, rpo: Objective } {
  const rto = result.rtoSeconds === undefined ? null : Math.round(result.rtoSeconds * 1000) / 1000
  const rpo = result.refused === undefined ? Number(result.rpoRecords) : null
  const rtoObjective = args['rto-seconds'] ?? null
  const rpoObjective = args['rpo-records'] ?? null
  return {
    rto: { objective: rtoObjective, measured: rto, met: rtoObjective === null || (rto !== null && rto <= rtoObjective) },
    rpo: { objective: rpoObjective, measured: rpo, met: rpoObjective === null || (rpo !== null && rpo <= rpoObjective) },
  }
}

function notesOf (args: DrillArgs, result: GroupDrillResult, goals: { rto: Objective, rpo: Objective }): string[] {
  const notes: string[] = []
  const group = `group '${result.group}'`
  if (result.refused === 'members-on-source') {
    notes.push(`mirror-check: ${group} has members on the source cluster: a drill moves an idle test group (the failback would rewind them); nothing written`)
    return notes
  }
  if (result.refused === 'no-offsets') {
    notes.push(`mirror-check: ${group} has no committed offsets on the source cluster; check --group; nothing written`)
    return notes
  }
  const blocker = result.plan?.blocker
  if (blocker !== undefined) {
    notes.push(`mirror-check: ${group} could not fail over (${blocker}); run mirror-check failover --group ${result.group} for the reason`)
  }
  if (result.outcome?.status === 'refused') {
    notes.push(`mirror-check: ${group}: the target refused the commit (${result.outcome.kafkaCode}): a member joined there`)
  }
  if (result.outcome?.status === 'failed') notes.push(`mirror-check: ${group}: the failover commit failed: ${result.outcome.error.message}`)
  if (result.failbackError !== undefined) notes.push(`mirror-check: ${group}: the failback commit failed: ${result.failbackError}`)
  if (!result.failedBackExactly) {
    notes.push(`mirror-check: ${group}: its source offsets differ from those before the drill (see SOURCE-OFFSET-BEFORE and -AFTER)`)
  }
  const seconds = (goals.rto.measured ?? 0).toFixed(3)
  const verdict = (goal: Objective, unit: string): string =>
    goal.objective === null ? '' : ` (objective ${goal.objective}${unit}: ${goal.met ? 'met' : 'missed'})`
  notes.push(
    `mirror-check: RTO ${seconds} s${verdict(goals.rto, ' s')}; ` +
      `RPO ${String(result.rpoRecords)} record(s) on the source not yet on the target${verdict(goals.rpo, '')}; ` +
      `failover ${result.failedOverExactly ? 'exact' : 'not done'}, failback ${result.failedBackExactly ? 'exact' : 'not exact'}`
  )
  if (args['rpo-records'] === undefined && args['rto-seconds'] === undefined) {
    notes.push('mirror-check: no objective given (--rpo-records, --rto-seconds): measured only')
  }
  return notes
}

function toJson (args: DrillArgs, result: GroupDrillResult, goals: { rto: Objective, rpo: Objective }, ok: boolean): string {
  const offsets = (list: ReadonlyArray<{ topic: string, partition: number, offset: bigint }>): unknown[] =>
    list.map(o => ({ topic: o.topic, partition: o.partition, offset: Number(o.offset) }))
  return JSON.stringify(
    {
      command: 'drill',
      group: result.group,
      result: ok ? 'passed' : 'failed',
      refused: result.refused ?? null,
      rto: { objectiveSeconds: goals.rto.objective, seconds: goals.rto.measured, met: goals.rto.met },
      rpo: { objectiveRecords: goals.rpo.objective, records: goals.rpo.measured, met: goals.rpo.met },
      failover: {
        outcome: result.outcome?.status ?? null,
        blocker: result.plan?.blocker ?? null,
        exact: result.failedOverExactly,
        offsetSyncsTopic: args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias']),
      },
      failback: { exact: result.failedBackExactly, error: result.failbackError ?? null },
      sourceBefore: offsets(result.sourceBefore),
      sourceAfter: offsets(result.sourceAfter),
      targetAfter: offsets(result.targetAfter),
      unmirrored: result.unmirrored.map(p => ({
        topic: p.topic,
        partition: p.partition,
        sourceEndOffset: Number(p.sourceEndOffset),
        mirroredUpTo: num(p.mirroredUpTo) ?? null,
        records: Number(p.records),
      })),
      partitions: rowsOf(result).map(r => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]))),
    },
    null,
    2
  ) + '\n'
}

async function drillOutput (args: DrillArgs): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  if (args.group.trim() === '') throw new UsageError('--group "": expected the consumer group to drill (an idle test group)')
  const { source, target } = clusterPair(args)
  const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
  // An unreachable cluster is found here first, within --timeout-ms and with the wording of the other commands.
  for (const connection of [source, target]) await (await connectClient({ ...connection, ...timeouts }, args)).close()
  const logger = args.verbose ? createLogger({ level: 'debug' }) : silentLogger
  const syncsTopic = args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias'])
  const result = await runGroupDrill({
    source: { ...source, ...timeouts },
    target: { ...target, ...timeouts },
    group: args.group,
    loadSyncs: async () => await loadOffsetSyncs({ ...target, ...timeouts }, syncsTopic, logger),
    logger,
  })
  const goals = objectives(args, result)
  const ok = result.refused === undefined && result.failedOverExactly && result.failedBackExactly && goals.rto.met && goals.rpo.met
  const text = args.format === 'json' ? toJson(args, result, goals, ok) : render(args.format, columns, rowsOf(result))
  const exitCode = result.outcome?.status === 'failed' ? ExitCode.ERROR : ok ? ExitCode.OK : ExitCode.CHECK_FAILED
  return { text, notes: notesOf(args, result, goals), exitCode }
}

export const drillCommand: CommandModule<object, DrillArgs> = {
  command: 'drill',
  describe:
    'DR drill with an idle test group: fail it over to the target (exact translation), measure RTO (time to move) and RPO (source records not yet on the target), fail it back (its saved source offsets restored); exit 1 when an objective is missed or a step is not exact.',
  builder: (yargs: Argv<object>) =>
    withClusterPairArgs(withCommonArgs(yargs))
      .option('group', { type: 'string', demandOption: true, describe: 'The test consumer group (idle on both clusters); its offsets are moved and restored.' })
      .option('rpo-records', {
        type: 'string',
        coerce: positiveInteger('--rpo-records', 0),
        describe: 'Objective: at most this many records on the source not yet on the target (topics of the group) at the move.',
      })
      .option('rto-seconds', { type: 'string', coerce: nonNegativeNumber('--rto-seconds'), describe: 'Objective: the move takes at most this many seconds.' })
      .option('source-alias', { type: 'string', default: 'source', describe: 'Source cluster alias of the flow; names its offset-syncs topic on the target.' })
      .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal).' })
      .example(
        '$0 drill --source 127.0.0.1:19092 --target 127.0.0.1:29092 --group dr-drill --rpo-records 1000 --rto-seconds 30',
        'Move the group over and back; exit 1 when an objective is missed.'
      ) as unknown as Argv<DrillArgs>,
  handler: async (args: DrillArgs): Promise<void> => {
    await runCommand(args, async () => {
      const { text, notes, exitCode } = await drillOutput(args)
      await write(text)
      for (const line of notes) note(line)
      return exitCode
    })
  },
}
