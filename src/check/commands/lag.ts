import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { committedOffsets, groupExists } from '../lag/group-offsets.js'
import { ageSeconds, lagViolations } from '../lag/lag.js'
import { lossEvidence, type PartitionOffsets, type RecordedLoss } from '../lag/loss-evidence.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import type { ClusterConnection } from '../../config/cluster-connection.js'
import { type ReplicationPolicy, type ReplicationPolicyKind, ReplicationPolicyKinds, targetTopicName } from '../../config/mirror-config.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import { mm2OffsetsTopicName, mm2Positions } from '../../mirror-topics/mm2-positions.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { clusterPair, connectClient, nonNegativeNumber, positiveInteger, withClusterPairArgs, withCommonArgs, type ClusterPairArgs, type CommonArgs } from '../cluster-args.js'
import { ExitCode, UsageError } from '../exit-codes.js'
import { formatSeconds, note, render, write, type Column } from '../output.js'
import { runCommand } from '../run-command.js'

export interface PolicyArgs {
  'replication-policy': ReplicationPolicyKind
  'source-alias': string
  separator: string
}

export interface LagArgs extends CommonArgs, PolicyArgs, ClusterPairArgs {
  group: string
  topic?: string[]
  'max-lag'?: number
  'max-lag-seconds'?: number
  mm2?: boolean
  'mm2-offsets-topic'?: string
  'mm2-connector'?: string
}

/** One partition of a mirrored topic: both log ends and the mirror's position on the source. */
export interface MirrorLagRow {
  readonly topic: string
  readonly targetTopic: string
  readonly partition: number | 'TOTAL'
  readonly sourceLogEndOffset: number
  readonly targetLogEndOffset?: number
  readonly mirrorOffset?: number
  readonly lag?: number
  readonly lagSeconds?: number
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

export function withPolicyArgs<T> (yargs: Argv<T>): Argv<T & PolicyArgs> {
  return yargs
    .option('replication-policy', { choices: ReplicationPolicyKinds, default: 'identity' as ReplicationPolicyKind, describe: 'Target topic naming: identity (same name) or default (<source-alias><separator><topic>), as MirrorMaker 2.' })
    .option('source-alias', { type: 'string', default: 'source', describe: 'Source cluster alias for the default replication policy.' })
    .option('separator', { type: 'string', default: '.', describe: 'replication.policy.separator for the default policy.' }) as Argv<T & PolicyArgs>
}

/** The replication policy that `--replication-policy` and `--separator` name. */
export function policyFromArgs (args: PolicyArgs): ReplicationPolicy {
  return args['replication-policy'] === 'identity' ? { kind: 'identity' } : { kind: 'default', separator: args.separator }
}

/** What `collectMirrorLag` found: the rows (with a TOTAL per topic), the loss the offsets show, and notes for stderr. */
export interface MirrorLag {
  readonly rows: MirrorLagRow[]
  readonly losses: RecordedLoss[]
  readonly notes: string[]
}

/** Lag of the mirror group `args.group` on `args.topic` (default: every topic it committed on), with the loss the offsets show. */
export async function collectMirrorLag (source: AuditClient, target: AuditClient, targetConnection: ClusterConnection, args: LagArgs, groupFlag = '--group'): Promise<MirrorLag> {
  const policy = policyFromArgs(args)
  const notes: string[] = []
  const mm2OffsetsTopic = args['mm2-offsets-topic'] ?? (args.mm2 === true ? mm2OffsetsTopicName(args['source-alias']) : undefined)
  if (mm2OffsetsTopic !== undefined) {
    if (args.topic === undefined || args.topic.length === 0) throw new UsageError('--mm2 needs --topic: name the source topics MirrorMaker 2 copies')
    if (!await target.hasTopic(mm2OffsetsTopic)) throw new UsageError(`--mm2: no topic ${mm2OffsetsTopic} on the target cluster (${targetConnection.brokers.join(',')}); give --source-alias as MirrorMaker 2's source cluster alias, or --mm2-offsets-topic`)
  } else if (!await groupExists(source, args.group)) {
    throw new UsageError(`${groupFlag} "${args.group}": no such consumer group on the source cluster (${source.connection.brokers.join(',')}); name the mirror's group`)
  }
  let topics = args.topic
  if (topics === undefined || topics.length === 0) {
    const offsets = await source.call(() => source.admin.fetchOffsets({ groupId: args.group }))
    topics = offsets.filter(t => t.partitions.some(p => Number(p.offset) >= 0)).map(t => t.topic).sort()
    if (topics.length === 0) throw new UsageError(`${groupFlag} "${args.group}" has no committed offsets on the source cluster; give --topic`)
  }
  const syncsTopic = offsetSyncsTopicName(args['source-alias'])
  const syncs = await target.hasTopic(syncsTopic) ? await loadOffsetSyncs({ ...targetConnection, connectionTimeoutMs: args['timeout-ms'] }, syncsTopic, args.verbose ? createLogger({ level: 'debug' }) : silentLogger) : undefined
  const rows: MirrorLagRow[] = []
  const evidence: PartitionOffsets[] = []
  const now = Date.now()
  for (const topic of topics) {
    const partitions = await source.partitionsOf(topic)
    const targetTopic = targetTopicName(policy, args['source-alias'], topic)
    const targetTopics = await target.call(() => target.admin.listTopics())
    if (!targetTopics.includes(targetTopic)) {
      throw new UsageError(`target topic "${targetTopic}" (for --topic "${topic}" under --replication-policy ${policy.kind}) does not exist on the target cluster (${targetConnection.brokers.join(',')}); check --replication-policy, --source-alias and --separator`)
    }
    const targetPartitions = await target.partitionsOf(targetTopic)
    const [sourceEnds, sourceStarts, targetEnds, mirror] = await Promise.all([
      source.listOffsets(topic, partitions, 'latest'),
      source.listOffsets(topic, partitions, 'earliest'),
      target.listOffsets(targetTopic, targetPartitions, 'latest'),
      mm2OffsetsTopic === undefined ? committedOffsets(source, args.group, topic) : mm2Positions(target, mm2OffsetsTopic, args['source-alias'], topic, args['mm2-connector']),
    ])
    if (mirror.size === 0) notes.push(mm2OffsetsTopic === undefined ? `Consumer group '${args.group}' has no committed offsets for topic '${topic}'.` : `MirrorMaker 2 has stored no position for topic '${topic}' in ${mm2OffsetsTopic} yet.`)
    const topicRows: MirrorLagRow[] = []
    for (const partition of partitions) {
      const sourceEnd = sourceEnds.get(partition)!
      const mirrorOffset = mirror.get(partition)
      const lag = mirrorOffset === undefined ? undefined : Math.max(0, sourceEnd - mirrorOffset)
      let lagSeconds: number | undefined
      if (lag !== undefined && mirrorOffset !== undefined) {
        lagSeconds = 0
        if (lag > 0) {
          const [record] = await new PartitionReader(source, topic, partition, { fetchMaxBytes: 65_536, isolation: 'read_uncommitted' }).records(Math.max(mirrorOffset, sourceStarts.get(partition) ?? 0), sourceEnd, 1)
          if (record !== undefined) lagSeconds = ageSeconds(Number(record.timestamp), now)
        }
      }
      const targetEnd = targetEnds.get(partition)
      const position = syncs?.position(topic, partition)
      evidence.push({
        topic,
        partition,
        ...(mirrorOffset === undefined ? {} : { committedOffset: mirrorOffset }),
        ...(sourceStarts.has(partition) ? { logStartOffset: sourceStarts.get(partition)! } : {}),
        logEndOffset: sourceEnd,
        targetTopic,
        ...(targetEnd === undefined ? {} : { targetLogEndOffset: targetEnd }),
        ...(position === undefined || position.targetTopic !== targetTopic ? {} : { mirroredTargetNext: Number(position.targetNext) }),
      })
      topicRows.push({
        topic,
        targetTopic,
        partition,
        sourceLogEndOffset: sourceEnd,
        ...(targetEnd === undefined ? {} : { targetLogEndOffset: targetEnd }),
        ...(mirrorOffset === undefined ? {} : { mirrorOffset }),
        ...(lag === undefined ? {} : { lag }),
        ...(lagSeconds === undefined ? {} : { lagSeconds }),
      })
    }
    rows.push(...topicRows)
    rows.push({
      topic,
      targetTopic,
      partition: 'TOTAL',
      sourceLogEndOffset: topicRows.reduce((sum, r) => sum + r.sourceLogEndOffset, 0),
      targetLogEndOffset: topicRows.reduce((sum, r) => sum + (r.targetLogEndOffset ?? 0), 0),
      lag: topicRows.reduce((sum, r) => sum + (r.lag ?? 0), 0),
      lagSeconds: Math.max(0, ...topicRows.map(r => r.lagSeconds ?? 0)),
    })
  }
  return { rows, losses: lossEvidence(evidence, mm2OffsetsTopic === undefined ? args.group : `MirrorMaker 2 (${mm2OffsetsTopic})`), notes }
}

export async function lagHandler (args: ArgumentsCamelCase<LagArgs>): Promise<void> {
  await runCommand(args, async () => {
    const { source: sourceConnection, target: targetConnection } = clusterPair(args)
    const source = await connectClient(sourceConnection, args)
    try {
      const target = await connectClient(targetConnection, args)
      try {
        const { rows, losses, notes } = await collectMirrorLag(source, target, targetConnection, args)
        await write(render(args.format, columns, rows))
        for (const line of notes) note(line)
        for (const loss of losses) note(`mirror-check: loss: ${loss.text}`)
        const violations = lagViolations(rows.filter(r => r.partition !== 'TOTAL') as Array<MirrorLagRow & { partition: number }>, { maxLagRecords: args['max-lag'], maxLagSeconds: args['max-lag-seconds'] })
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
  describe: 'Cross-cluster lag of a mirror: source and target log end offsets, the mirror\'s committed position, lag in records and seconds.',
  builder: yargs => withClusterPairArgs(withPolicyArgs(withCommonArgs(yargs)))
    .option('group', { type: 'string', default: 'mirror-sidecar', describe: 'The mirror\'s consumer group on the source cluster.' })
    .option('topic', { type: 'string', array: true, describe: 'Source topics (default: every topic the group has committed offsets for).' })
    .option('max-lag', { type: 'string', coerce: positiveInteger('--max-lag', 0), describe: 'Check: exit 1 when any partition lags by more records.' })
    .option('max-lag-seconds', { type: 'string', coerce: nonNegativeNumber('--max-lag-seconds'), describe: 'Check: exit 1 when any partition lags by more seconds.' })
    .option('mm2', { type: 'boolean', default: false, describe: 'The mirror is MirrorMaker 2: its position is in Connect\'s offsets topic on the target (mm2-offsets.<source-alias>.internal), not in a group; needs --topic.' })
    .option('mm2-offsets-topic', { type: 'string', describe: 'Connect\'s offsets topic of the MirrorMaker 2 flow (default mm2-offsets.<source-alias>.internal); implies --mm2.' })
    .option('mm2-connector', { type: 'string', describe: 'With --mm2: Connect\'s name of the flow\'s source connector (default MirrorSourceConnector, as MirrorMaker 2\'s dedicated mode names it; Strimzi: <source>-><target>.MirrorSourceConnector).' })
    .example('$0 lag --source src:9092 --target dst:9092 --topic orders', 'Lag of the mirror-sidecar group on orders.')
    .example('$0 lag --source src:9092 --target dst:9092 --replication-policy default --source-alias east --max-lag-seconds 60', 'Check MirrorMaker 2 style names (east.orders), exit 1 when a partition is a minute behind.') as unknown as Argv<LagArgs>,
  handler: lagHandler,
}
