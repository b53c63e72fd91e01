import Table from 'cli-table3'
import type { Argv, CommandModule } from 'yargs'
import type { ClusterConnection } from '../../src/kafka/connection.js'
import { offsetSyncsTopicName } from '../../src/offsets/offset-sync-store.js'
import { translateGroupOffsets, type GroupTranslationRow } from '../../src/offsets/translate-group.js'
import { MirrorError } from '../../src/shared/errors.js'

/** Exit codes of mirror-check: 0 ok, 1 a failed check, 2 a usage or runtime error. */
const EXIT_OK = 0
const EXIT_CHECK_FAILED = 1
const EXIT_ERROR = 2

export interface TranslateArgs {
  readonly source: string
  readonly target: string
  readonly group: string
  readonly topic?: string
  readonly 'source-alias': string
  readonly 'offset-syncs-topic'?: string
  readonly format: 'table' | 'json'
}

function connection (alias: string, bootstrap: string): ClusterConnection {
  return { alias, brokers: bootstrap.split(',').map(b => b.trim()).filter(b => b !== ''), clientId: 'mirror-check' }
}

/** One line per partition: GROUP TOPIC PARTITION SOURCE-OFFSET TARGET-TOPIC TARGET-OFFSET STATUS (missing value: `-`). */
export function renderTranslationTable (rows: readonly GroupTranslationRow[]): string {
  const table = new Table({
    head: ['GROUP', 'TOPIC', 'PARTITION', 'SOURCE-OFFSET', 'TARGET-TOPIC', 'TARGET-OFFSET', 'STATUS'],
    style: { head: [], border: [] },
    chars: { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: ' ' },
  })
  for (const r of rows) {
    const status = r.status === 'translated' ? 'ok' : r.status === 'not-yet-mirrored' ? `not yet mirrored (mirrored up to ${r.mirroredUpTo ?? '-'})` : 'no offset syncs'
    table.push([r.group, r.topic, String(r.partition), r.sourceOffset.toString(), r.targetTopic ?? '-', r.targetOffset?.toString() ?? '-', status])
  }
  return table.toString().split('\n').map(line => line.trimEnd()).join('\n') + '\n'
}

/** Rows as JSON, offsets as strings (64-bit). */
export function translationJson (rows: readonly GroupTranslationRow[]): string {
  return JSON.stringify(rows, (_key, value: unknown) => typeof value === 'bigint' ? value.toString() : value, 2) + '\n'
}

/**
 * `mirror-check translate`: exit 0 when every partition translated, 1 when some partition is not
 * yet mirrored or has no syncs (or the group has no committed offsets), 2 on errors.
 */
export async function runTranslate (args: TranslateArgs, write: (text: string) => void, writeError: (text: string) => void): Promise<number> {
  try {
    const rows = await translateGroupOffsets({
      source: connection('source', args.source),
      target: connection('target', args.target),
      group: args.group,
      ...(args.topic === undefined ? {} : { topic: args.topic }),
      offsetSyncsTopic: args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias']),
    })
    write(args.format === 'json' ? translationJson(rows) : renderTranslationTable(rows))
    if (rows.length === 0) {
      writeError(`mirror-check: group "${args.group}" has no committed offsets${args.topic === undefined ? '' : ` on ${args.topic}`} on the source cluster; check --group and --source\n`)
      return EXIT_CHECK_FAILED
    }
    return rows.every(r => r.status === 'translated') ? EXIT_OK : EXIT_CHECK_FAILED
  } catch (error) {
    writeError(`mirror-check: ${error instanceof MirrorError ? error.message : String(error)}\n`)
    return EXIT_ERROR
  }
}

export const translateCommand: CommandModule<object, TranslateArgs> = {
  command: 'translate',
  describe: 'Where each committed offset of a source consumer group is on the target, exactly, from the offset syncs.',
  builder: (yargs: Argv<object>) => yargs
    .option('source', { type: 'string', demandOption: true, describe: 'Source cluster bootstrap servers (host:port,...)' })
    .option('target', { type: 'string', demandOption: true, describe: 'Target cluster bootstrap servers (host:port,...)' })
    .option('group', { type: 'string', demandOption: true, describe: 'Consumer group on the source' })
    .option('topic', { type: 'string', describe: 'Only this source topic' })
    .option('source-alias', { type: 'string', default: 'source', describe: 'Alias of the source cluster in the sidecar config (names the syncs topic)' })
    .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal)' })
    .option('format', { choices: ['table', 'json'] as const, default: 'table' as const, describe: 'Output format' }) as unknown as Argv<TranslateArgs>,
  handler: async args => {
    process.exitCode = await runTranslate(args, text => { process.stdout.write(text) }, text => { process.stderr.write(text) })
  },
}
