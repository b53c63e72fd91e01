import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { committedOffsets } from '../lag/group-offsets.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import { translateGroupOffsets } from '../translate/translate-group.js'
import { verifyCopy } from '../verify/copy-verification.js'
import { beyondCommittedTotal, describeFinding, totalCounts, verificationPassed } from '../verify/verification-report.js'
import type { ClusterConnection } from '../../config/cluster-connection.js'
import { targetTopicName } from '../../config/mirror-config.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { clusterPair, connectClient, positiveInteger, withClusterPairArgs, withCommonArgs, type ClusterPairArgs, type CommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'
import { collectMirrorLag, type MirrorLagOptions } from '../lag/mirror-lag.js'
import { policyFromArgs, withPolicyArgs, type PolicyArgs } from '../cli/policy-args.js'
import { chooseAlignment } from '../verify/alignment-choice.js'

export interface CutoverArgs extends CommonArgs, PolicyArgs, ClusterPairArgs {
  topic?: string[]
  group?: string[]
  'mirror-group': string
  'max-lag': number
  'verify-records': number
  'allow-duplicates': boolean
  'offset-syncs-topic'?: string
}

/** The kinds of check, in the order they are listed. */
const CutoverChecks = ['lag', 'loss', 'verify', 'group'] as const
export type CutoverCheck = typeof CutoverChecks[number]

/** One check of one partition (of one group for `group`): holds or not, and why. */
export interface CutoverRow {
  readonly check: CutoverCheck
  readonly topic: string
  readonly partition: number
  readonly group?: string
  readonly ok: boolean
  readonly detail: string
}

const columns: Column<CutoverRow>[] = [
  { header: 'CHECK', value: r => r.check },
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'GROUP', value: r => r.group },
  { header: 'RESULT', value: r => r.ok ? 'ok' : 'FAILED' },
  { header: 'DETAIL', value: r => r.detail },
]

/** Lag within `--max-lag` and no loss, per partition of the mirrored topics. */
async function lagAndLossRows (
  source: AuditClient,
  target: AuditClient,
  targetConnection: ClusterConnection,
  args: CutoverArgs
): Promise<{ rows: CutoverRow[], mirrored: Map<string, Map<number, number>>, notes: string[] }> {
  const lagArgs = { ...args, group: args['mirror-group'], ...(args.topic === undefined ? {} : { topic: args.topic }) } as unknown as MirrorLagOptions
  const { rows: lagRows, losses, notes } = await collectMirrorLag(source, target, targetConnection, lagArgs, '--mirror-group')
  const rows: CutoverRow[] = []
  const mirrored = new Map<string, Map<number, number>>()
  for (const r of lagRows) {
    if (r.partition === 'TOTAL') continue
    if (r.mirrorOffset !== undefined) {
      const topic = mirrored.get(r.topic) ?? new Map<number, number>()
      topic.set(r.partition, r.mirrorOffset)
      mirrored.set(r.topic, topic)
    }
    const ok = r.lag !== undefined && r.lag <= args['max-lag']
    rows.push({
      check: 'lag',
      topic: r.topic,
      partition: r.partition,
      ok,
      detail:
        r.lag === undefined
          ? `group '${args['mirror-group']}' has no committed offset here`
          : `lag ${r.lag} records${ok ? '' : ` > --max-lag ${args['max-lag']}`} (source end ${r.sourceLogEndOffset}, mirror at ${r.mirrorOffset})`,
    })
    const lost = losses.filter(l => l.topic === r.topic && l.partition === r.partition)
    rows.push({
      check: 'loss',
      topic: r.topic,
      partition: r.partition,
      ok: lost.length === 0,
      detail:
        lost.length === 0
          ? 'no loss recorded'
          : lost.map(l => (l.text.startsWith(`${r.topic}-${r.partition}: `) ? l.text.slice(`${r.topic}-${r.partition}: `.length) : l.text)).join('; '),
    })
  }
  return { rows, mirrored, notes }
}

/** The last `--verify-records` records below the mirror's committed offset of each partition, record by record. */
async function verifyRows (
  source: AuditClient,
  target: AuditClient,
  targetConnection: ClusterConnection,
  args: CutoverArgs,
  mirrored: Map<string, Map<number, number>>
): Promise<CutoverRow[]> {
  const policy = policyFromArgs(args)
  const rows: CutoverRow[] = []
  for (const [topic, partitions] of mirrored) {
    const targetTopic = targetTopicName(policy, args['source-alias'], topic)
    const choice = await chooseAlignment(
      {
        'offset-syncs': true,
        'offset-syncs-topic': args['offset-syncs-topic'],
        'source-alias': args['source-alias'],
        topic,
        verbose: args.verbose,
        'timeout-ms': args['timeout-ms'],
      },
      target,
      targetConnection,
      targetTopic,
      []
    )
    for (const [partition, mirrorOffset] of [...partitions].sort((a, b) => a[0] - b[0])) {
      const result = await verifyCopy({
        source,
        target,
        topic,
        targetTopic,
        partitions: [partition],
        from: { offset: Math.max(0, mirrorOffset - args['verify-records']) },
        until: 'mirrored',
        group: args['mirror-group'],
        maxFindingsPerKind: 1,
        ...(choice.aligner === undefined ? {} : { aligner: choice.aligner }),
      })
      const counts = totalCounts(result.partitions)
      const beyond = beyondCommittedTotal(result.partitions)
      const ok = verificationPassed(counts, args['allow-duplicates'], beyond.duplicated)
      const p = result.partitions[0]
      const first = p?.findings[0]
      const problems = (['missing', 'duplicated', 'extra', 'changed', 'outOfOrder'] as const)
        .filter(k => counts[k] > 0)
        .map(k => `${counts[k]} ${k === 'outOfOrder' ? 'out of order' : k}`)
      if (beyond.duplicated > 0) problems.push(`${beyond.duplicated} duplicated beyond the mirror's committed offset`)
      rows.push({
        check: 'verify',
        topic,
        partition,
        ok,
        detail: `${counts.checked} records checked${p === undefined || p.sourceUntilOffset <= p.sourceFromOffset ? " (the source holds none below the mirror's committed offset)" : ` (source ${p.sourceFromOffset}-${p.sourceUntilOffset - 1})`}${problems.length === 0 ? '' : `: ${problems.join(', ')}`}${first === undefined || p === undefined ? '' : `; first: ${describeFinding(first, p.partition, p.alignment.targetPartition)}`}`,
      })
    }
  }
  return rows
}

/** Each named group: its committed source offsets translated exactly, and the same offsets committed in the group on the target. */
async function groupRows (
  target: AuditClient,
  connections: { source: ClusterConnection, target: ClusterConnection },
  args: CutoverArgs,
  syncs: OffsetSyncIndex
): Promise<CutoverRow[]> {
  const rows: CutoverRow[] = []
  const topics = args.topic === undefined || args.topic.length === 0 ? undefined : new Set(args.topic)
  for (const group of args.group ?? []) {
    const timeouts = { connectionTimeoutMs: args['timeout-ms'] }
    const translated = (
      await translateGroupOffsets({
        source: { ...connections.source, ...timeouts },
        target: { ...connections.target, ...timeouts },
        group,
        offsetSyncsTopic: args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias']),
        syncs,
        logger: args.verbose ? createLogger({ level: 'debug' }) : silentLogger,
      })
    ).filter(r => topics === undefined || topics.has(r.topic))
    if (translated.length === 0) {
      rows.push({
        check: 'group',
        topic: '-',
        partition: -1,
        group,
        ok: false,
        detail: `group '${group}' has no committed offsets${topics === undefined ? '' : ` on ${[...topics].join(',')}`} on the source cluster`,
      })
      continue
    }
    const onTarget = new Map<string, Map<number, number>>()
    for (const r of translated) {
      if (r.targetTopic === undefined || onTarget.has(r.targetTopic)) continue
      onTarget.set(r.targetTopic, await committedOffsets(target, group, r.targetTopic))
    }
    for (const r of translated) {
      const base = { check: 'group' as const, topic: r.topic, partition: r.partition, group }
      if (r.status !== 'translated' || r.targetOffset === undefined || r.targetTopic === undefined) {
        const why =
          r.status === 'not-yet-mirrored'
            ? `not yet mirrored (the mirror copied up to source offset ${r.mirroredUpTo ?? '-'})`
            : 'no offset syncs for this partition'
        rows.push({ ...base, ok: false, detail: `source offset ${r.sourceOffset} cannot be translated: ${why}` })
        continue
      }
      const committed = onTarget.get(r.targetTopic)?.get(r.partition)
      const ok = committed !== undefined && BigInt(committed) === r.targetOffset
      rows.push({
        ...base,
        ok,
        detail: ok
          ? `source ${r.sourceOffset} -> target ${r.targetOffset}, committed on the target`
          : `source ${r.sourceOffset} -> target ${r.targetOffset}, but the group's offset on the target is ${committed ?? 'not committed'}: not synced (enable sync.group.offsets, or wait for the next sync with no members on the target)`,
      })
    }
  }
  return rows
}

function summary (rows: readonly CutoverRow[]): { passed: boolean, failed: Record<CutoverCheck, number>, checks: number } {
  const failed = Object.fromEntries(CutoverChecks.map(c => [c, rows.filter(r => r.check === c && !r.ok).length])) as Record<CutoverCheck, number>
  return { passed: rows.length > 0 && rows.every(r => r.ok), failed, checks: rows.length }
}

async function cutoverHandler (args: ArgumentsCamelCase<CutoverArgs>): Promise<void> {
  await runCommand(args, async () => {
    const connections = clusterPair(args)
    const source = await connectClient(connections.source, args)
    try {
      const target = await connectClient(connections.target, args)
      try {
        const syncsTopic = args['offset-syncs-topic'] ?? offsetSyncsTopicName(args['source-alias'])
        if ((args.group ?? []).length > 0 && !await target.hasTopic(syncsTopic)) {
          throw new UsageError(`--group needs the mirror's offset syncs: no topic ${syncsTopic} on the target cluster (${connections.target.brokers.join(',')}); check --source-alias or --offset-syncs-topic`)
        }
        const { rows: lagLoss, mirrored, notes } = await lagAndLossRows(source, target, connections.target, args)
        const verified = await verifyRows(source, target, connections.target, args, mirrored)
        const grouped =
          (args.group ?? []).length === 0
            ? []
            : await groupRows(
              target,
              connections,
              args,
              await loadOffsetSyncs({ ...connections.target, connectionTimeoutMs: args['timeout-ms'] }, syncsTopic, silentLogger)
            )
        const rows = [...lagLoss, ...verified, ...grouped].sort((a, b) => CutoverChecks.indexOf(a.check) - CutoverChecks.indexOf(b.check))
        const result = summary(rows)
        if (args.format === 'json') {
          await write(
            JSON.stringify(
              {
                passed: result.passed,
                failed: result.failed,
                checks: rows.map(r => ({ check: r.check, topic: r.topic, partition: r.partition, group: r.group ?? null, ok: r.ok, detail: r.detail })),
              },
              null,
              2
            ) + '\n'
          )
        } else {
          const failedKinds = CutoverChecks.filter(c => result.failed[c] > 0).map(c => `${c} ${result.failed[c]}`)
          await write(
            render(args.format, columns, rows) +
              (args.format === 'table'
                ? `\n${result.passed ? `PASSED: all ${result.checks} checks hold; safe to move consumers to the target` : `FAILED: ${result.checks - Object.values(result.failed).reduce((a, b) => a + b, 0)} of ${result.checks} checks hold; failed: ${failedKinds.join(', ')}`}\n`
                : '')
          )
        }
        for (const line of notes) note(line)
        for (const row of rows.filter(r => !r.ok)) {
          note(
            `mirror-check: cutover check failed: ${row.check} ${row.topic}-${row.partition}${row.group === undefined ? '' : ` group ${row.group}`}: ${row.detail}`
          )
        }
        return result.passed ? ExitCode.OK : ExitCode.CHECK_FAILED
      } finally {
        await target.close()
      }
    } finally {
      await source.close()
    }
  })
}

export const cutoverCommand: CommandModule<object, CutoverArgs> = {
  command: 'cutover',
  describe:
    "Before moving consumers to the target: per partition, lag within --max-lag, no loss recorded, the last records verified, and each --group's offsets translated exactly and synced. Exit 0 only when every check holds.",
  builder: yargs =>
    withClusterPairArgs(withPolicyArgs(withCommonArgs(yargs)))
      .option('topic', { type: 'string', array: true, describe: 'Source topics (default: every topic the mirror group has committed offsets for).' })
      .option('group', {
        type: 'string',
        array: true,
        describe: 'Consumer group to move (repeatable): its offsets must be translated exactly and committed on the target.',
      })
      .option('mirror-group', { type: 'string', default: 'mirror-sidecar', describe: "The mirror's consumer group on the source cluster." })
      .option('max-lag', { type: 'string', default: '0', coerce: positiveInteger('--max-lag', 0), describe: 'Largest lag in records a partition may have.' })
      .option('verify-records', {
        type: 'string',
        default: '1000',
        coerce: positiveInteger('--verify-records'),
        describe: "Records verified per partition, the last ones below the mirror's committed offset.",
      })
      .option('allow-duplicates', {
        type: 'boolean',
        default: false,
        describe: 'Duplicates in the verified records do not fail the check (they are still counted).',
      })
      .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal).' })
      .check(argv => {
        if (Array.isArray(argv['mirror-group'])) throw new UsageError('--mirror-group was given more than once; give it once')
        return true
      })
      .example('$0 cutover --source src:9092 --target dst:9092 --topic orders --group orders-app', 'Safe to move orders-app to the target?')
      .example(
        '$0 cutover --source src:9092 --target dst:9092 --group a --group b --max-lag 10 --format json',
        'Two groups, up to 10 records of lag, as JSON.'
      ) as unknown as Argv<CutoverArgs>,
  handler: cutoverHandler,
}
