import type { Argv, CommandModule } from 'yargs'
import { UsageError } from '../cli/exit-codes.js'
import { note, write } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import type { FailoverArgs } from './failover-args.js'
import { builder, failoverOutput } from './failover.js'

/**
 * `mirror-check groups`: the board of a failover of many groups, alone: per group its state and
 * members on both clusters, lag, records it would re-read, and whether it moved. Reads only (the
 * failover plan without --execute); exit 1 unless every group moved or could move exactly.
 */
export const groupsCommand: CommandModule<object, FailoverArgs> = {
  command: 'groups',
  describe:
    'One line per consumer group of a failover: state and members on both clusters, lag, records it would re-read, moved or not (the plan of failover --group-regex / --all-groups; writes nothing).',
  builder: (yargs: Argv<object>) =>
    builder('failover')(yargs)
      .example('$0 groups --source 127.0.0.1:19092 --target 127.0.0.1:29092 --all-groups', 'Every consumer group of the source, one line each.'),
  handler: async (args: FailoverArgs): Promise<void> => {
    await runCommand(args, async () => {
      if (args.execute) throw new UsageError('groups writes nothing; move the groups with mirror-check failover and the same flags plus --execute')
      const { text, notes, exitCode } = await failoverOutput('failover', { ...args, execute: false, 'dry-run': undefined }, 'board')
      await write(text)
      for (const line of notes) note(line)
      return exitCode
    })
  },
}
