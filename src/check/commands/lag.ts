import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { lagViolations } from '../lag/lag.js'
import { collectMirrorLag, type MirrorLagOptions, type MirrorLagRow } from '../lag/mirror-lag.js'
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
import { ExitCode } from '../cli/exit-codes.js'
import { formatSeconds, note, render, write, type Column } from '../cli/output.js'
import { withPolicyArgs } from '../cli/policy-args.js'
import { runCommand } from '../cli/run-command.js'

export interface LagArgs extends CommonArgs, MirrorLagOptions, ClusterPairArgs {
  'max-lag'?: number
  'max-lag-seconds'?: number
}

const columns: Column<MirrorLagRow>[] = [
  { header: 'TOPIC', value: r => r.topic },
  { header: 'TARGET-TOPIC', value: r => r.targetTopic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'SOURCE-LOG-END-OFFSET', value: r => r.sourceLogEndOffset },
  { header: 'TARGET-LOG-END-OFFSET', value: r => r.targetLogEndOffset },
  { header: 'MIRROR-OFFSET', value: r => r.mirrorOffset },
  { header: 'LAG', value: r => r.lag },
  { header: 'LAG-SECONDS', value: r => formatSeconds(r.lagSeconds) },
]

async function lagHandler (args: ArgumentsCamelCase<LagArgs>): Promise<void> {
  await runCommand(args, async () => {
    const { source: sourceConnection, target: targetConnection } = clusterPair(args)
    const source = await connectClient(sourceConnection, args)
    try {
      const target = await connectClient(targetConnection, args)
      try {
        const { rows, losses, notes } = await collectMirrorLag(source, target, targetConnection, args)
        await write(render(args.format, columns, rows, { isTotal: r => r.partition === 'TOTAL', keep: args.totals === true }))
        for (const line of notes) note(line)
        for (const loss of losses) note(`mirror-check: loss: ${loss.text}`)
        const violations = lagViolations(rows.filter(r => r.partition !== 'TOTAL') as Array<MirrorLagRow & { partition: number }>, {
          maxLagRecords: args['max-lag'],
          maxLagSeconds: args['max-lag-seconds'],
        })
        for (const line of violations) note(`mirror-check: lag check failed: ${line}`)
        // Loss fails the audit whether or not a lag bound was given.
        return violations.length > 0 || losses.length > 0 ? ExitCode.CHECK_FAILED : ExitCode.OK
      } finally {
        await target.close()
      }
    } finally {
      await source.close()
    }
  })
}

export const lagCommand: CommandModule<object, LagArgs> = {
  command: 'lag',
  describe: "Cross-cluster lag of a mirror: source and target log end offsets, the mirror's committed position, lag in records and seconds.",
  builder: yargs =>
    withClusterPairArgs(withPolicyArgs(withCommonArgs(yargs)))
      .option('group', { type: 'string', default: 'mirror-sidecar', describe: "The mirror's consumer group on the source cluster." })
      .option('topic', { type: 'string', array: true, describe: 'Source topics (default: every topic the group has committed offsets for).' })
      .option('max-lag', { type: 'string', coerce: positiveInteger('--max-lag', 0), describe: 'Check: exit 1 when any partition lags by more records.' })
      .option('max-lag-seconds', {
        type: 'string',
        coerce: nonNegativeNumber('--max-lag-seconds'),
        describe: 'Check: exit 1 when any partition lags by more seconds.',
      })
      .option('mm2', {
        type: 'boolean',
        default: false,
        describe:
          "The mirror is MirrorMaker 2: its position is in Connect's offsets topic on the target (mm2-offsets.<source-alias>.internal), not in a group; needs --topic.",
      })
      .option('mm2-offsets-topic', {
        type: 'string',
        describe: "Connect's offsets topic of the MirrorMaker 2 flow (default mm2-offsets.<source-alias>.internal); implies --mm2.",
      })
      .option('mm2-connector', {
        type: 'string',
        describe:
          "With --mm2: Connect's name of the flow's source connector (default MirrorSourceConnector, as MirrorMaker 2's dedicated mode names it; Strimzi: <source>-><target>.MirrorSourceConnector).",
      })
      .example('$0 lag --source src:9092 --target dst:9092 --topic orders', 'Lag of the mirror-sidecar group on orders.')
      .example(
        '$0 lag --source src:9092 --target dst:9092 --replication-policy default --source-alias east --max-lag-seconds 60',
        'Check MirrorMaker 2 style names (east.orders), exit 1 when a partition is a minute behind.'
      ) as unknown as Argv<LagArgs>,
  handler: lagHandler,
}
