import type { Argv, CommandModule } from 'yargs'
import { type Mm2TranslationRow, translateGroupThroughMm2 } from '../translate/mm2-offsets.js'
import { offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import { type GroupTranslationRow, translateGroupOffsets } from '../translate/translate-group.js'
import { DEFAULT_SELECTION_EXCLUDE, groupSelection, selectGroups, type GroupSelectionArgs } from '../translate/group-selection.js'
import { translateManyGroups } from '../translate/translate-groups.js'
import { listConsumerGroups } from '../lag/group-offsets.js'
import { type ReplicationPolicyKind, ReplicationPolicyKinds, targetTopicName } from '../../config/mirror-config.js'
import { mm2CheckpointsTopicName, mm2OffsetSyncsTopicName } from '../../mirror-topics/mm2-records.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { clusterPair, connectClient, withClusterPairArgs, withCommonArgs, type ClusterPairArgs, type CommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'

export interface TranslateArgs extends CommonArgs, ClusterPairArgs, Omit<GroupSelectionArgs, 'group'> {
  group?: string
  topic?: string
  'source-alias': string
  'offset-syncs-topic'?: string
  mm2?: boolean
  'target-alias'?: string
  'mm2-offset-syncs-topic'?: string
  'mm2-checkpoints-topic'?: string
  'replication-policy'?: ReplicationPolicyKind
  separator?: string
}

function statusText (row: GroupTranslationRow): string {
  if (row.status === 'translated') return 'ok'
  if (row.status === 'not-yet-mirrored') return `not yet mirrored (mirrored up to ${row.mirroredUpTo ?? '-'})`
  return 'no offset syncs'
}

const translationColumns: Column<GroupTranslationRow>[] = [
  { header: 'GROUP', value: r => r.group },
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'SOURCE-OFFSET', value: r => Number(r.sourceOffset) },
  { header: 'TARGET-TOPIC', value: r => r.targetTopic },
  { header: 'TARGET-OFFSET', value: r => r.targetOffset === undefined ? undefined : Number(r.targetOffset) },
  { header: 'STATUS', value: statusText },
]

const num = (value: bigint | undefined): number | undefined => value === undefined ? undefined : Number(value)

const mm2TranslationColumns: Column<Mm2TranslationRow>[] = [
  { header: 'GROUP', value: r => r.group },
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'SOURCE-OFFSET', value: r => Number(r.sourceOffset) },
  { header: 'TARGET-TOPIC', value: r => r.targetTopic },
  { header: 'TARGET-OFFSET', value: r => num(r.targetOffset) },
  { header: 'CHECKPOINT-SOURCE-OFFSET', value: r => num(r.checkpoint?.sourceOffset) },
  { header: 'CHECKPOINT-TARGET-OFFSET', value: r => num(r.checkpoint?.targetOffset) },
  { header: 'STATUS', value: r => r.status === 'translated' ? 'ok' : 'no offset syncs' },
]

/** `translate --mm2`: the group's offsets through a MirrorMaker 2 flow's offset syncs and checkpoints. */
async function mm2Output (args: TranslateArgs): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  const targetAlias = args['target-alias']
  const syncsTopic = args['mm2-offset-syncs-topic'] ?? (targetAlias === undefined ? undefined : mm2OffsetSyncsTopicName(targetAlias))
  if (syncsTopic === undefined) {
    throw new UsageError(
      "--mm2 needs --target-alias (MirrorMaker 2's alias of the target cluster; names its offset-syncs topic mm2-offset-syncs.<target-alias>.internal) or --mm2-offset-syncs-topic"
    )
  }
  const checkpointsTopic = args['mm2-checkpoints-topic'] ?? mm2CheckpointsTopicName(args['source-alias'])
  const policy =
    (args['replication-policy'] ?? 'default') === 'identity' ? { kind: 'identity' as const } : { kind: 'default' as const, separator: args.separator ?? '.' }
  const { source: sourceConnection, target: targetConnection } = clusterPair(args)
  const source = await connectClient(sourceConnection, args)
  try {
    const target = await connectClient(targetConnection, args)
    try {
      // offset-syncs.topic.location: the source by default, named after the target alias; on the target, MirrorMaker 2 names it after the source alias.
      const targetSyncsTopic = args['mm2-offset-syncs-topic'] ?? mm2OffsetSyncsTopicName(args['source-alias'])
      const syncs = (await source.hasTopic(syncsTopic))
        ? { client: source, topic: syncsTopic }
        : (await target.hasTopic(targetSyncsTopic))
            ? { client: target, topic: targetSyncsTopic }
            : undefined
      if (syncs === undefined) {
        throw new UsageError(
          `--mm2: no topic ${syncsTopic} on the source (${sourceConnection.brokers.join(',')}) nor ${targetSyncsTopic} on the target cluster (${targetConnection.brokers.join(',')}); give --target-alias and --source-alias as MirrorMaker 2's aliases, or --mm2-offset-syncs-topic`
        )
      }
      const rows = await translateGroupThroughMm2(source, target, {
        group: args.group as string,
        ...(args.topic === undefined ? {} : { topic: args.topic }),
        offsetSyncs: syncs,
        checkpointsTopic,
        targetTopicOf: topic => targetTopicName(policy, args['source-alias'], topic),
      })
      const notes: string[] = []
      if (rows.length === 0) {
        notes.push(
          `mirror-check: group "${args.group}" has no committed offsets${args.topic === undefined ? '' : ` on ${args.topic}`} on the source cluster; check --group and --source`
        )
      }
      if (rows.length > 0 && !(await target.hasTopic(checkpointsTopic))) {
        notes.push(
          `mirror-check: no topic ${checkpointsTopic} on the target cluster: no checkpoints (MirrorMaker 2 writes them for the groups its "groups" setting selects; --mm2-checkpoints-topic names another)`
        )
      }
      if (rows.some(r => r.status === 'translated')) {
        notes.push(
          "mirror-check: TARGET-OFFSET is MirrorMaker 2's translation (the newest offset sync at or below, + 1): at or before the exact offset, so a group moved there re-reads up to offset.lag.max (default 100) records per partition"
        )
      }
      const exitCode = rows.length > 0 && rows.every(r => r.status === 'translated') ? ExitCode.OK : ExitCode.CHECK_FAILED
      return { text: render(args.format, mm2TranslationColumns, rows), notes, exitCode }
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}

/** `--group-regex` / `--all-groups`: every selected group of the source, the offset syncs read once for all. */
async function manyGroupsOutput (
  args: TranslateArgs,
  selection: ReturnType<typeof groupSelection>
): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  if (args.mm2 === true || args['mm2-offset-syncs-topic'] !== undefined) {
    throw new UsageError('--group-regex and --all-groups translate through the sidecar\'s offset syncs; with --mm2 name one group with --group')
  }
  const { source, target } = clusterPair(args)
  const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
  const logger = args.verbose ? createLogger({ level: 'debug' }) : silentLogger
  const client = await connectClient({ ...source, ...timeouts }, args)
  let groups: string[]
  try {
    groups = selectGroups(selection, await listConsumerGroups(client))
  } finally {
    await client.close()
  }
  const rows = await translateManyGroups({
    source: { ...source, ...timeouts },
    target: { ...target, ...timeouts },
    groups,
    ...(args.topic === undefined ? {} : { topic: args.topic }),
    offsetSyncsTopic: args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias']),
    logger,
  })
  const notes: string[] = []
  const translatedGroups = new Set(rows.map(r => r.group))
  if (groups.length === 0) notes.push(`mirror-check: no consumer group on the source cluster matches ${selection.patternSource ?? ''}`)
  else notes.push(`mirror-check: ${groups.length} group(s), ${rows.length} partition(s), ${rows.filter(r => r.status === 'translated').length} translated`)
  const empty = groups.filter(g => !translatedGroups.has(g))
  if (empty.length > 0) {
    const shown = `${empty.slice(0, 10).join(', ')}${empty.length > 10 ? ', ...' : ''}`
    notes.push(`mirror-check: no committed offsets on the source cluster for ${empty.length} group(s): ${shown}`)
  }
  const exitCode = rows.length > 0 && empty.length === 0 && rows.every(r => r.status === 'translated') ? ExitCode.OK : ExitCode.CHECK_FAILED
  return { text: render(args.format, translationColumns, rows), notes, exitCode }
}

/** Translates and renders; the exit code is 0 when every partition translated, 1 otherwise (not yet mirrored, no syncs, no committed offsets). */
export async function translateOutput (args: TranslateArgs): Promise<{ text: string, notes: string[], exitCode: ExitCode }> {
  const selection = groupSelection(args)
  if (selection.pattern !== undefined) return await manyGroupsOutput(args, selection)
  if (args.mm2 === true || args['mm2-offset-syncs-topic'] !== undefined) return await mm2Output(args)
  const { source, target } = clusterPair(args)
  const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
  const rows = await translateGroupOffsets({
    source: { ...source, ...timeouts },
    target: { ...target, ...timeouts },
    group: args.group as string,
    ...(args.topic === undefined ? {} : { topic: args.topic }),
    offsetSyncsTopic: args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias']),
    logger: args.verbose ? createLogger({ level: 'debug' }) : silentLogger,
  })
  const notes: string[] = []
  if (rows.length === 0) {
    notes.push(
      `mirror-check: group "${args.group}" has no committed offsets${args.topic === undefined ? '' : ` on ${args.topic}`} on the source cluster; check --group and --source`
    )
  }
  const exitCode = rows.length > 0 && rows.every(r => r.status === 'translated') ? ExitCode.OK : ExitCode.CHECK_FAILED
  return { text: render(args.format, translationColumns, rows), notes, exitCode }
}

export const translateCommand: CommandModule<object, TranslateArgs> = {
  command: 'translate',
  describe:
    "Where each committed offset of a source consumer group is on the target, exactly, from the offset syncs (exit 1 when a partition is not yet mirrored); --mm2: through a MirrorMaker 2 flow's offset syncs and checkpoints.",
  builder: (yargs: Argv<object>) =>
    withClusterPairArgs(withCommonArgs(yargs))
      .option('group', { type: 'string', describe: 'Consumer group on the source.' })
      .option('group-regex', {
        type: 'string',
        describe: 'Every consumer group on the source matching this regex (MirrorMaker list syntax, whole names); the offset syncs are read once for all.',
      })
      .option('all-groups', { type: 'boolean', describe: 'Every consumer group on the source but those --groups-exclude names.' })
      .option('groups-exclude', {
        type: 'string',
        default: DEFAULT_SELECTION_EXCLUDE,
        describe: "Groups --group-regex and --all-groups leave out (regex list); the default is MirrorMaker 2's groups.exclude plus the sidecar's own group.",
      })
      .option('topic', { type: 'string', describe: 'Only this source topic.' })
      .option('source-alias', {
        type: 'string',
        default: 'source',
        describe: "Source cluster alias in the sidecar config (or MirrorMaker 2's); names the offset-syncs topic (the checkpoints topic with --mm2).",
      })
      .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal).' })
      .option('mm2', {
        type: 'boolean',
        default: false,
        describe:
          'The mirror is MirrorMaker 2: translate with its offset syncs (mm2-offset-syncs.<target-alias>.internal on the source, or mm2-offset-syncs.<source-alias>.internal on the target) and its rule, and show its checkpoints (<source-alias>.checkpoints.internal on the target); needs --target-alias.',
      })
      .option('target-alias', { type: 'string', describe: "With --mm2: MirrorMaker 2's alias of the target cluster." })
      .option('mm2-offset-syncs-topic', {
        type: 'string',
        describe:
          "MirrorMaker 2's offset-syncs topic, looked for on the source, then the target (default mm2-offset-syncs.<target-alias>.internal on the source, mm2-offset-syncs.<source-alias>.internal on the target); implies --mm2.",
      })
      .option('mm2-checkpoints-topic', {
        type: 'string',
        describe: "MirrorMaker 2's checkpoints topic on the target (default <source-alias>.checkpoints.internal).",
      })
      .option('replication-policy', {
        choices: ReplicationPolicyKinds,
        describe: 'With --mm2: target topic naming, default (<source-alias><separator><topic>, the default with --mm2) or identity.',
      })
      .option('separator', {
        type: 'string',
        default: '.',
        describe: 'replication.policy.separator for the default policy.',
      }) as unknown as Argv<TranslateArgs>,
  handler: async args => {
    await runCommand(args, async () => {
      const { text, notes, exitCode } = await translateOutput(args)
      await write(text)
      for (const line of notes) note(line)
      return exitCode
    })
  },
}
