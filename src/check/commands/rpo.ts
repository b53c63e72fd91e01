import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { targetTopicName } from '../../config/mirror-config.js'
import { clusterPair, connectClient, positiveInteger, withClusterPairArgs, withCommonArgs, type ClusterPairArgs, type CommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { note, render, write, type Column } from '../cli/output.js'
import { policyFromArgs, withPolicyArgs, type PolicyArgs } from '../cli/policy-args.js'
import { runCommand } from '../cli/run-command.js'
import { chooseAlignment } from '../verify/alignment-choice.js'
import { collectMissingRecords, type MissingRange, type PartitionMissing } from '../verify/missing-records.js'

export interface RpoArgs extends CommonArgs, PolicyArgs, ClusterPairArgs {
  topic: string[]
  group: string
  keys: boolean
  'from-offset'?: number
  'lookahead-records': number
  'offset-syncs': boolean
  'offset-syncs-topic'?: string
}

/** The missing records of one mirrored topic. */
interface TopicMissing {
  readonly topic: string
  readonly targetTopic: string
  readonly partitions: readonly PartitionMissing[]
}

type RangeRow = { topic: string, partition: number, range: MissingRange }
type RecordRow = { topic: string, partition: number, offset: number, timestampMs: number, key: string | null }

const iso = (ms: number): string => (Number.isFinite(ms) && ms >= 0 ? new Date(ms).toISOString() : String(ms))

const rangeColumns: Column<RangeRow>[] = [
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'FROM-OFFSET', value: r => r.range.fromOffset },
  { header: 'TO-OFFSET', value: r => r.range.toOffset },
  { header: 'RECORDS', value: r => r.range.records },
  { header: 'FIRST-TIMESTAMP', value: r => iso(r.range.firstTimestampMs) },
  { header: 'LAST-TIMESTAMP', value: r => iso(r.range.lastTimestampMs) },
]

const recordColumns: Column<RecordRow>[] = [
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.partition },
  { header: 'OFFSET', value: r => r.offset },
  { header: 'TIMESTAMP', value: r => iso(r.timestampMs) },
  { header: 'KEY', value: r => r.key ?? undefined },
]

function totalMissing (topics: readonly TopicMissing[]): { records: number, ranges: number, partitions: number } {
  const partitions = topics.flatMap(t => t.partitions)
  return {
    records: partitions.reduce((n, p) => n + p.missing, 0),
    ranges: partitions.reduce((n, p) => n + p.ranges.length, 0),
    partitions: partitions.filter(p => p.missing > 0).length,
  }
}

function jsonReport (topics: readonly TopicMissing[], checkedAtMs: number): string {
  const total = totalMissing(topics)
  return JSON.stringify(
    {
      passed: total.records === 0,
      checkedAt: iso(checkedAtMs),
      missingRecords: total.records,
      missingRanges: total.ranges,
      topics: topics.map(t => ({
        topic: t.topic,
        targetTopic: t.targetTopic,
        partitions: t.partitions.map(p => ({
          partition: p.partition,
          targetPartition: p.targetPartition,
          sourceFromOffset: p.sourceFromOffset,
          sourceEndOffset: p.sourceEndOffset,
          alignedBy: p.alignedBy,
          checked: p.checked,
          missing: p.missing,
          ranges: p.ranges.map(r => ({
            fromOffset: r.fromOffset,
            toOffset: r.toOffset,
            records: r.records,
            firstTimestamp: iso(r.firstTimestampMs),
            lastTimestamp: iso(r.lastTimestampMs),
            firstTimestampMs: r.firstTimestampMs,
            lastTimestampMs: r.lastTimestampMs,
            ...(r.list === undefined ? {} : { keys: r.list.map(e => ({ offset: e.offset, timestamp: iso(e.timestampMs), key: e.key })) }),
          })),
          notes: p.notes,
        })),
      })),
    },
    null,
    2
  ) + '\n'
}

/** The summary under the table: how much is missing, over what was compared. */
function summaryLine (topics: readonly TopicMissing[]): string {
  const total = totalMissing(topics)
  const checked = topics.flatMap(t => t.partitions).reduce((n, p) => n + p.checked, 0)
  const partitions = topics.reduce((n, t) => n + t.partitions.length, 0)
  return total.records === 0
    ? `RPO 0: all ${checked} source records of ${partitions} partition(s) up to the source end offsets are on the target`
    : `MISSING: ${total.records} source records in ${total.ranges} range(s) on ${total.partitions} of ${partitions} partition(s) are not on the target (${checked} records compared up to the source end offsets)`
}

async function rpoHandler (args: ArgumentsCamelCase<RpoArgs>): Promise<void> {
  await runCommand(args, async () => {
    const topics = [...new Set(args.topic)]
    if (topics.some(t => t.trim() === '')) throw new UsageError('--topic "": expected a topic name')
    if (args['offset-syncs-topic'] !== undefined && !args['offset-syncs']) {
      throw new UsageError('--offset-syncs-topic and --no-offset-syncs exclude each other; give one')
    }
    const { source: sourceConnection, target: targetConnection } = clusterPair(args)
    const checkedAtMs = Date.now()
    const source = await connectClient(sourceConnection, args)
    try {
      const target = await connectClient(targetConnection, args)
      try {
        const results: TopicMissing[] = []
        const notes: string[] = []
        for (const topic of topics) {
          const targetTopic = targetTopicName(policyFromArgs(args), args['source-alias'], topic)
          const choice = await chooseAlignment({ ...args, topic }, target, targetConnection, targetTopic, notes)
          const { partitions, notes: topicNotes } = await collectMissingRecords({
            source,
            target,
            topic,
            targetTopic,
            group: args.group,
            keys: args.keys,
            lookaheadRecords: args['lookahead-records'],
            ...(args['from-offset'] === undefined ? {} : { fromOffset: args['from-offset'] }),
            ...(choice.aligner === undefined ? {} : { aligner: choice.aligner }),
          })
          if (choice.orderReason !== undefined) notes.push(`${topic}: aligned by order (${choice.orderReason}), not by the mirror's offset syncs`)
          notes.push(...topicNotes, ...partitions.flatMap(p => p.notes.map(n => `${topic}: ${n}`)))
          results.push({ topic, targetTopic, partitions })
        }
        if (args.format === 'json') {
          await write(jsonReport(results, checkedAtMs))
        } else if (args.keys) {
          const rows = results.flatMap(t =>
            t.partitions.flatMap(p => p.ranges.flatMap(r => (r.list ?? []).map(e => ({ topic: t.topic, partition: p.partition, ...e }))))
          )
          await write(render(args.format, recordColumns, rows) + (args.format === 'table' ? `\n${summaryLine(results)}\n` : ''))
        } else {
          const rows = results.flatMap(t => t.partitions.flatMap(p => p.ranges.map(range => ({ topic: t.topic, partition: p.partition, range }))))
          await write(render(args.format, rangeColumns, rows) + (args.format === 'table' ? `\n${summaryLine(results)}\n` : ''))
        }
        if (args.format === 'csv') note(summaryLine(results))
        for (const line of notes) note(line)
        return totalMissing(results).records === 0 ? ExitCode.OK : ExitCode.CHECK_FAILED
      } finally {
        await target.close()
      }
    } finally {
      await source.close()
    }
  })
}

export const rpoCommand: CommandModule<object, RpoArgs> = {
  command: 'rpo',
  describe:
    'Record-level RPO: per partition, the source records not on the target at this moment (offset ranges with counts and first/last timestamps; every key with --keys), compared record by record up to the source end offsets and aligned by the offset syncs. Exit 1 when any record is missing.',
  builder: yargs =>
    withClusterPairArgs(withPolicyArgs(withCommonArgs(yargs)))
      .option('topic', { type: 'string', array: true, demandOption: true, describe: 'Source topic (repeatable).' })
      .option('group', { type: 'string', default: 'mirror-sidecar', describe: "The mirror's consumer group on the source." })
      .option('keys', { type: 'boolean', default: false, describe: 'List every missing record (offset, timestamp, key) instead of ranges.' })
      .option('from-offset', {
        type: 'string',
        coerce: positiveInteger('--from-offset', 0),
        describe: 'First source offset compared in every partition (default the earliest offset).',
      })
      .option('lookahead-records', {
        type: 'string',
        default: '1000',
        coerce: positiveInteger('--lookahead-records'),
        describe: "How far ahead a record's copy is looked for before it is called missing.",
      })
      .option('offset-syncs', {
        type: 'boolean',
        default: true,
        describe: "Align source and target by the sidecar's offset syncs when their topic is on the target (--no-offset-syncs: by order).",
      })
      .option('offset-syncs-topic', { type: 'string', describe: 'Offset-syncs topic on the target (default mirror-offset-syncs.<source-alias>.internal).' })
      .example('$0 rpo --source src:9092 --target dst:9092 --topic orders', 'Which source records of orders are not on the target now.')
      .example(
        '$0 rpo --source src:9092 --target dst:9092 --topic orders --keys --format csv > missing.csv',
        'Every missing record with its key, for reconciliation.'
      ) as unknown as Argv<RpoArgs>,
  handler: rpoHandler,
}
