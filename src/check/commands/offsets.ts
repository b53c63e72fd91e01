import { setTimeout as sleep } from 'node:timers/promises'
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { describeGroupOffsets, type GroupMember, type GroupOffsets, listConsumerGroups } from '../lag/group-offsets.js'
import { lagViolations, type PartitionLagRow, topicTotals } from '../lag/lag.js'
import { lossEvidence, type PartitionOffsets, type RecordedLoss } from '../lag/loss-evidence.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import { clusterConnection, connectClient, nonNegativeNumber, positiveInteger, withCommonArgs, type CommonArgs } from '../cli/cluster-args.js'
import { ExitCode, UsageError } from '../cli/exit-codes.js'
import { formatSeconds, note, render, toJsonRows, write, type Column } from '../cli/output.js'
import { runCommand } from '../cli/run-command.js'

export interface OffsetsArgs extends CommonArgs {
  'bootstrap-server'?: string
  'command-config'?: string
  group?: string[]
  'all-groups': boolean
  topic?: string[]
  members: boolean
  state: boolean
  'max-lag'?: number
  'max-lag-seconds'?: number
  watch?: number
}

type OffsetRow = PartitionLagRow & { readonly total?: boolean }

const offsetColumns: Column<OffsetRow>[] = [
  { header: 'GROUP', value: r => r.group },
  { header: 'TOPIC', value: r => r.topic },
  { header: 'PARTITION', value: r => r.total === true ? 'TOTAL' : r.partition },
  { header: 'CURRENT-OFFSET', value: r => r.currentOffset },
  { header: 'LOG-END-OFFSET', value: r => r.logEndOffset },
  { header: 'LAG', value: r => r.lag },
  { header: 'CONSUMER-ID', value: r => r.consumerId },
  { header: 'HOST', value: r => r.host },
  { header: 'CLIENT-ID', value: r => r.clientId },
  { header: 'LAG-SECONDS', value: r => formatSeconds(r.lagSeconds) },
]

const memberColumns: Column<GroupMember & { group: string }>[] = [
  { header: 'GROUP', value: m => m.group },
  { header: 'CONSUMER-ID', value: m => m.consumerId },
  { header: 'HOST', value: m => m.host },
  { header: 'CLIENT-ID', value: m => m.clientId },
  { header: '#PARTITIONS', value: m => m.assignment.length, json: 'partitions' },
]

const stateColumns: Column<GroupOffsets>[] = [
  { header: 'GROUP', value: g => g.group },
  {
    header: 'COORDINATOR (ID)',
    value: g => (g.coordinator === undefined ? undefined : `${g.coordinator.host}:${g.coordinator.port}  (${g.coordinator.nodeId})`),
    json: 'coordinator',
  },
  { header: 'ASSIGNMENT-STRATEGY', value: g => (g.assignmentStrategy === '' ? undefined : g.assignmentStrategy) },
  { header: 'STATE', value: g => g.state },
  { header: '#MEMBERS', value: g => g.members.length, json: 'members' },
]

/** Describes the requested groups; notes (not an error) go to stderr as Kafka's tool prints them. */
async function collect (client: AuditClient, args: OffsetsArgs): Promise<{ groups: GroupOffsets[], notes: string[] }> {
  const notes: string[] = []
  const names = args['all-groups'] ? await listConsumerGroups(client) : args.group ?? []
  const topics = args.topic
  if (topics !== undefined) {
    const existing = await client.call(() => client.admin.listTopics())
    const unknown = topics.filter(t => !existing.includes(t))
    if (unknown.length > 0) throw new UsageError(`--topic "${unknown[0]}": no such topic on ${client.connection.brokers.join(',')}; check the name`)
  }
  const groups: GroupOffsets[] = []
  for (const name of names) {
    const described = await describeGroupOffsets(client, name, { withCoordinator: args.state, lagSeconds: !args.members && !args.state })
    if (!described.exists) {
      if (!args['all-groups']) throw new UsageError(`Consumer group '${name}' does not exist.`)
      continue
    }
    if (described.state === 'Empty') notes.push(`Consumer group '${name}' has no active members.`)
    if (described.rebalancing) notes.push(`Warning: Consumer group '${name}' is rebalancing.`)
    const rows = topics === undefined ? described.rows : described.rows.filter(r => topics.includes(r.topic))
    for (const topic of topics ?? []) {
      if (!rows.some(r => r.topic === topic)) notes.push(`Consumer group '${name}' has no committed offsets or assignment for topic '${topic}'.`)
    }
    if (rows.length === 0 && topics === undefined && !args.members && !args.state) notes.push(`Consumer group '${name}' has no committed offsets.`)
    groups.push({ ...described, rows })
  }
  if (args['all-groups'] && groups.length === 0) notes.push('No consumer groups on the cluster.')
  return { groups, notes }
}

function withTotals (rows: readonly PartitionLagRow[]): OffsetRow[] {
  const out: OffsetRow[] = []
  for (const total of topicTotals(rows)) {
    out.push(...rows.filter(r => r.group === total.group && r.topic === total.topic))
    out.push({ group: total.group, topic: total.topic, partition: -1, lag: total.lag, lagSeconds: total.lagSeconds, total: true })
  }
  return out
}

function renderGroups (args: OffsetsArgs, groups: readonly GroupOffsets[]): string {
  if (args.state) {
    return args.format === 'json' ? JSON.stringify(toJsonRows(stateColumns, groups), null, 2) + '\n' : render(args.format, stateColumns, groups)
  }
  if (args.members) {
    return render(args.format, memberColumns, groups.flatMap(g => g.members.map(m => ({ ...m, group: g.group }))))
  }
  const rows = groups.flatMap(g => g.rows)
  if (args.format === 'json') {
    return JSON.stringify(groups.map(g => ({
      group: g.group,
      state: g.state,
      partitions: toJsonRows(offsetColumns.filter(c => c.header !== 'GROUP'), g.rows).map((r, i) => ({ ...r, lagSeconds: g.rows[i]!.lagSeconds ?? null })),
      totals: topicTotals(g.rows).map(t => ({ topic: t.topic, partitions: t.partitions, lag: t.lag, lagSeconds: t.lagSeconds })),
    })), null, 2) + '\n'
  }
  return render(args.format, offsetColumns, withTotals(rows), { isTotal: r => r.total === true, keep: args.totals === true })
}

async function runOnce (client: AuditClient, args: OffsetsArgs, clear: boolean): Promise<ExitCode> {
  const { groups, notes } = await collect(client, args)
  const output = renderGroups(args, groups)
  await write((clear ? '\x1b[H\x1b[2J' : '') + output)
  for (const line of notes) note(line)
  const violations = lagViolations(groups.flatMap(g => g.rows), { maxLagRecords: args['max-lag'], maxLagSeconds: args['max-lag-seconds'] })
  for (const line of violations) note(`mirror-check: lag check failed: ${line}`)
  const losses = args.members || args.state ? [] : await groupLosses(client, groups)
  for (const loss of losses) note(`mirror-check: loss: ${loss.text}`)
  // Loss fails a check (--max-lag, --max-lag-seconds); without one the report only says so.
  const checking = args['max-lag'] !== undefined || args['max-lag-seconds'] !== undefined
  return violations.length > 0 || (checking && losses.length > 0) ? ExitCode.CHECK_FAILED : ExitCode.OK
}

/** Loss the committed offsets show: below the log start offset (retention took unread records) or past the log end (topic recreated). */
async function groupLosses (client: AuditClient, groups: readonly GroupOffsets[]): Promise<RecordedLoss[]> {
  const starts = new Map<string, Map<number, number>>()
  const out: RecordedLoss[] = []
  for (const group of groups) {
    const rows: PartitionOffsets[] = []
    for (const r of group.rows) {
      if (r.currentOffset === undefined || r.currentOffset < 0) continue
      let topicStarts = starts.get(r.topic)
      if (topicStarts === undefined) {
        // A group can keep offsets of a topic deleted since: nothing to compare them with.
        topicStarts = (await client.hasTopic(r.topic))
          ? await client.listOffsets(r.topic, await client.partitionsOf(r.topic), 'earliest')
          : new Map<number, number>()
        starts.set(r.topic, topicStarts)
      }
      const logStartOffset = topicStarts.get(r.partition)
      rows.push({
        topic: r.topic,
        partition: r.partition,
        committedOffset: r.currentOffset,
        ...(logStartOffset === undefined ? {} : { logStartOffset }),
        ...(r.logEndOffset === undefined ? {} : { logEndOffset: r.logEndOffset }),
      })
    }
    out.push(...lossEvidence(rows, group.group))
  }
  return out
}

async function offsetsHandler (args: ArgumentsCamelCase<OffsetsArgs>): Promise<void> {
  await runCommand(args, async () => {
    if (!args['all-groups'] && (args.group === undefined || args.group.length === 0)) {
      throw new UsageError('--group is required (or --all-groups); name the consumer group to describe')
    }
    if (args['all-groups'] && args.group !== undefined) throw new UsageError('--group and --all-groups exclude each other; give one')
    if (args.members && args.state) throw new UsageError('--members and --state exclude each other; give one')
    const connection = clusterConnection({
      alias: 'source',
      bootstrap: args['bootstrap-server'],
      bootstrapFlag: '--bootstrap-server',
      configFile: args['command-config'],
      configFlag: '--command-config',
    })
    const client = await connectClient(connection, args)
    try {
      if (args.watch === undefined) return await runOnce(client, args, false)
      // The first SIGINT or SIGTERM ends the watch after the refresh in progress; a second one (default handling) forces exit.
      const stop = new AbortController()
      const signals = ['SIGINT', 'SIGTERM'] as const
      const onSignal = (): void => {
        for (const signal of signals) process.off(signal, onSignal)
        stop.abort()
      }
      for (const signal of signals) process.on(signal, onSignal)
      try {
        let code: ExitCode = ExitCode.OK
        while (!stop.signal.aborted) {
          code = await runOnce(client, args, process.stdout.isTTY === true)
          if (process.stdout.isTTY !== true) await write('\n')
          await sleep(args.watch * 1000, undefined, { signal: stop.signal }).catch(() => undefined)
        }
        return code
      } finally {
        for (const signal of signals) process.off(signal, onSignal)
      }
    } finally {
      await client.close()
    }
  })
}

function offsetsBuilder<T> (yargs: Argv<T>): Argv<OffsetsArgs> {
  return withCommonArgs(yargs)
    .option('bootstrap-server', { type: 'string', describe: 'Brokers of the cluster holding the group (host:port,...).' })
    .option('command-config', { type: 'string', describe: 'Java client .properties file (security, client.id, timeouts), as Kafka tools take it.' })
    .option('group', { type: 'string', array: true, describe: 'Consumer group(s) to describe.' })
    .option('all-groups', { type: 'boolean', default: false, describe: 'Describe every consumer group.' })
    .option('topic', { type: 'string', array: true, describe: 'Only these topics.' })
    .option('members', { type: 'boolean', default: false, describe: 'Show members: GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS.' })
    .option('state', { type: 'boolean', default: false, describe: 'Show group state: coordinator, assignment strategy, state, members.' })
    .option('max-lag', { type: 'string', coerce: positiveInteger('--max-lag', 0), describe: 'Check: exit 1 when any partition lags by more records.' })
    .option('max-lag-seconds', {
      type: 'string',
      coerce: nonNegativeNumber('--max-lag-seconds'),
      describe: "Check: exit 1 when any partition's LAG-SECONDS is larger.",
    })
    .option('watch', {
      type: 'string',
      coerce: (v: unknown) => {
        const n = nonNegativeNumber('--watch')(v)
        if (n <= 0) throw new UsageError(`--watch "${String(v)}": expected a positive number of seconds`)
        return n
      },
      describe: "Refresh every SECONDS until SIGINT (Ctrl-C) or SIGTERM; then exit with the last refresh's code.",
    })
    .example('$0 --bootstrap-server localhost:9092 --group orders-app', 'Committed offset, log end offset, lag and lag in seconds per partition.')
    .example('$0 offsets --bootstrap-server localhost:9092 --all-groups --max-lag 1000', 'Exit 1 when any group lags by more than 1000 records.')
    .example('$0 --bootstrap-server localhost:9092 --group orders-app --watch 5', 'Refresh every 5 seconds.') as unknown as Argv<OffsetsArgs>
}

export const offsetsCommand: CommandModule<object, OffsetsArgs> = {
  command: ['offsets', '$0'],
  describe: 'Committed offset, log end offset and lag per partition of consumer groups (like kafka-consumer-groups --describe), plus LAG-SECONDS.',
  builder: offsetsBuilder,
  handler: offsetsHandler,
}
