import type { Argv, CommandModule } from 'yargs'
import { createLogger, offsetSyncsTopicName, silentLogger, translateGroupOffsets, type GroupTranslationRow } from '../../src/index.js'
import { clusterPair, withClusterPairArgs, withCommonArgs, type ClusterPairArgs, type CommonArgs } from '../cluster-args.js'
import { ExitCode } from '../exit-codes.js'
import { note, render, write, type Column } from '../output.js'
import { runCommand } from '../run-command.js'

export interface TranslateArgs extends CommonArgs, ClusterPairArgs {
  group: string
  topic?: string
  'source-alias': string
  'offset-syncs-topic'?: string
}

function statusText (row: GroupTranslationRow): string {
  if (row.status === 'translated') return 'ok'
  if (row.status === 'not-yet-mirrored') return `not yet mirrored (mirrored up to ${row.mirroredUpTo ?? '-'})`
  return 'no offset syncs'
}

export const translationColumns: Column<GroupTranslationRow>[] = [
  { header: 'GROUP', value: r => r.group },
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'SOURCE-OFFSET', value: r => Number(r.sourceOffset) },
  { header: 'TARGET-TOPIC', value: r => r.targetTopic },
  { header: 'TARGET-OFFSET', value: r => r.targetOffset === undefined ? undefined : Number(r.targetOffset) },
  { header: 'STATUS', value: statusText },
]

/** Translates and renders; the exit code is 0 when every partition translated, 1 otherwise (not yet mirrored, no syncs, no committed offsets). */
export async function translateOutput (args: TranslateArgs): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  const { source, target } = clusterPair(args)
  const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
  const rows = await translateGroupOffsets({
    source: { ...source, ...timeouts },
    target: { ...target, ...timeouts },
    group: args.group,
    ...(args.topic === undefined ? {} : { topic: args.topic }),
    offsetSyncsTopic: args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias']),
    logger: args.verbose ? createLogger({ level: 'debug' }) : silentLogger,
  })
  const notes: string[] = []
  if (rows.length === 0) notes.push(`mirror-check: group "${args.group}" has no committed offsets${args.topic === undefined ? '' : ` on ${args.topic}`} on the source cluster; check --group and --source`)
  const exitCode = rows.length > 0 && rows.every(r => r.status === 'translated') ? ExitCode.OK : ExitCode.CHECK_FAILED
  return { text: render(args.format, translationColumns, rows), notes, exitCode }
}

export const translateCommand: CommandModule<object, TranslateArgs> = {
  command: 'translate',
  describe: 'Where each committed offset of a source consumer group is on the target, exactly, from the offset syncs (exit 1 when a partition is not yet mirrored).',
  builder: (yargs: Argv<object>) => withClusterPairArgs(withCommonArgs(yargs))
    .option('group', { type: 'string', demandOption: true, describe: 'Consumer group on the source.' })
    .option('topic', { type: 'string', describe: 'Only this source topic.' })
    .option('source-alias', { type: 'string', default: 'source', describe: 'Source cluster alias in the sidecar config; names the offset-syncs topic.' })
    .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal).' }) as unknown as Argv<TranslateArgs>,
  handler: async args => {
    await runCommand(args, async () => {
      const { text, notes, exitCode } = await translateOutput(args)
      await write(text)
      for (const line of notes) note(line)
      return exitCode
    })
  },
}
