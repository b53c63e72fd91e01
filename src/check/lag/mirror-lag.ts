import type { ClusterConnection } from '../../config/cluster-connection.js'
import { targetTopicName } from '../../config/mirror-config.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import { mm2OffsetsTopicName, mm2Positions } from '../../mirror-topics/mm2-positions.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { createLogger, silentLogger } from '../../shared/logger.js'
import { UsageError } from '../cli/exit-codes.js'
import { policyFromArgs, type PolicyArgs } from '../cli/policy-args.js'
import { loadOffsetSyncs, offsetSyncsTopicName } from '../translate/offset-sync-store.js'
import { committedOffsets, groupExists } from './group-offsets.js'
import { ageSeconds } from './lag.js'
import { lossEvidence, type PartitionOffsets, type RecordedLoss } from './loss-evidence.js'

/** What `collectMirrorLag` reads, by the flags of `mirror-check lag` that give it (its messages name them). */
export interface MirrorLagOptions extends PolicyArgs {
  group: string
  topic?: string[]
  mm2?: boolean
  'mm2-offsets-topic'?: string
  'mm2-connector'?: string
  verbose: boolean
  'timeout-ms': number
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

/** What `collectMirrorLag` found: the rows (with a TOTAL per topic), the loss the offsets show, and notes for stderr. */
export interface MirrorLag {
  readonly rows: MirrorLagRow[]
  readonly losses: RecordedLoss[]
  readonly notes: string[]
}

/** Where the mirror's positions are: MirrorMaker 2's offsets topic (with --mm2), else the mirror group, which must exist. */
async function mirrorPositionsTopic (
  source: AuditClient,
  target: AuditClient,
  targetConnection: ClusterConnection,
  args: MirrorLagOptions,
  groupFlag: string
): Promise<string | undefined> {
  const mm2OffsetsTopic = args['mm2-offsets-topic'] ?? (args.mm2 === true ? mm2OffsetsTopicName(args['source-alias']) : undefined)
  if (mm2OffsetsTopic !== undefined) {
    if (args.topic === undefined || args.topic.length === 0) throw new UsageError('--mm2 needs --topic: name the source topics MirrorMaker 2 copies')
    if (!(await target.hasTopic(mm2OffsetsTopic))) {
      throw new UsageError(
        `--mm2: no topic ${mm2OffsetsTopic} on the target cluster (${targetConnection.brokers.join(',')}); give --source-alias as MirrorMaker 2's source cluster alias, or --mm2-offsets-topic`
      )
    }
  } else if (!(await groupExists(source, args.group))) {
    throw new UsageError(
      `${groupFlag} "${args.group}": no such consumer group on the source cluster (${source.connection.brokers.join(',')}); name the mirror's group`
    )
  }
  return mm2OffsetsTopic
}

/** The topics asked for, or every topic the mirror group committed on. */
async function lagTopics (source: AuditClient, args: MirrorLagOptions, groupFlag: string): Promise<string[]> {
  if (args.topic !== undefined && args.topic.length > 0) return args.topic
  const offsets = await source.call(() => source.admin.fetchOffsets({ groupId: args.group }))
  const topics = offsets
    .filter(t => t.partitions.some(p => Number(p.offset) >= 0))
    .map(t => t.topic)
    .sort()
  if (topics.length === 0) throw new UsageError(`${groupFlag} "${args.group}" has no committed offsets on the source cluster; give --topic`)
  return topics
}

/** Age of the first source record the mirror has not copied (0 when it copied everything), or undefined without a mirror position. */
async function lagSecondsAt (
  source: AuditClient,
  at: { topic: string, partition: number, mirrorOffset: number | undefined, lag: number | undefined, logStart: number, sourceEnd: number },
  now: number
): Promise<number | undefined> {
  if (at.lag === undefined || at.mirrorOffset === undefined) return undefined
  if (at.lag === 0) return 0
  const reader = new PartitionReader(source, at.topic, at.partition, { fetchMaxBytes: 65_536, isolation: 'read_uncommitted' })
  const [record] = await reader.records(Math.max(at.mirrorOffset, at.logStart), at.sourceEnd, 1)
  return record === undefined ? 0 : ageSeconds(Number(record.timestamp), now)
}

/** What one topic's lag is worked out from: its offsets on both clusters and the mirror's positions. */
interface TopicOffsets {
  readonly topic: string
  readonly targetTopic: string
  readonly partitions: readonly number[]
  readonly sourceEnds: ReadonlyMap<number, number>
  readonly sourceStarts: ReadonlyMap<number, number>
  readonly targetEnds: ReadonlyMap<number, number>
  readonly mirror: ReadonlyMap<number, number>
}

/** One row per partition of a topic, the loss evidence of each, and the topic's TOTAL row. */
async function topicLagRows (
  source: AuditClient,
  offsets: TopicOffsets,
  syncs: OffsetSyncIndex | undefined,
  now: number
): Promise<{ rows: MirrorLagRow[], evidence: PartitionOffsets[] }> {
  const { topic, targetTopic } = offsets
  const topicRows: MirrorLagRow[] = []
  const evidence: PartitionOffsets[] = []
  for (const partition of offsets.partitions) {
    const sourceEnd = offsets.sourceEnds.get(partition)!
    const mirrorOffset = offsets.mirror.get(partition)
    const lag = mirrorOffset === undefined ? undefined : Math.max(0, sourceEnd - mirrorOffset)
    const logStart = offsets.sourceStarts.get(partition)
    const lagSeconds = await lagSecondsAt(source, { topic, partition, mirrorOffset, lag, logStart: logStart ?? 0, sourceEnd }, now)
    const targetEnd = offsets.targetEnds.get(partition)
    const position = syncs?.position(topic, partition)
    evidence.push({
      topic,
      partition,
      ...(mirrorOffset === undefined ? {} : { committedOffset: mirrorOffset }),
      ...(logStart !== undefined ? { logStartOffset: logStart } : {}),
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
  const total: MirrorLagRow = {
    topic,
    targetTopic,
    partition: 'TOTAL',
    sourceLogEndOffset: topicRows.reduce((sum, r) => sum + r.sourceLogEndOffset, 0),
    targetLogEndOffset: topicRows.reduce((sum, r) => sum + (r.targetLogEndOffset ?? 0), 0),
    lag: topicRows.reduce((sum, r) => sum + (r.lag ?? 0), 0),
    lagSeconds: Math.max(0, ...topicRows.map(r => r.lagSeconds ?? 0)),
  }
  return { rows: [...topicRows, total], evidence }
}

/** Lag of the mirror group `args.group` on `args.topic` (default: every topic it committed on), with the loss the offsets show. */
export async function collectMirrorLag (
  source: AuditClient,
  target: AuditClient,
  targetConnection: ClusterConnection,
  args: MirrorLagOptions,
  groupFlag = '--group'
): Promise<MirrorLag> {
  const policy = policyFromArgs(args)
  const notes: string[] = []
  const mm2OffsetsTopic = await mirrorPositionsTopic(source, target, targetConnection, args, groupFlag)
  const topics = await lagTopics(source, args, groupFlag)
  const syncsTopic = offsetSyncsTopicName(args['source-alias'])
  const syncs = (await target.hasTopic(syncsTopic))
    ? await loadOffsetSyncs(
      { ...targetConnection, connectionTimeoutMs: args['timeout-ms'] },
      syncsTopic,
      args.verbose ? createLogger({ level: 'debug' }) : silentLogger
    )
    : undefined
  const rows: MirrorLagRow[] = []
  const evidence: PartitionOffsets[] = []
  const now = Date.now()
  for (const topic of topics) {
    const partitions = await source.partitionsOf(topic)
    const targetTopic = targetTopicName(policy, args['source-alias'], topic)
    const targetTopics = await target.call(() => target.admin.listTopics())
    if (!targetTopics.includes(targetTopic)) {
      throw new UsageError(
        `target topic "${targetTopic}" (for --topic "${topic}" under --replication-policy ${policy.kind}) does not exist on the target cluster (${targetConnection.brokers.join(',')}); check --replication-policy, --source-alias and --separator`
      )
    }
    const targetPartitions = await target.partitionsOf(targetTopic)
    const [sourceEnds, sourceStarts, targetEnds, mirror] = await Promise.all([
      source.listOffsets(topic, partitions, 'latest'),
      source.listOffsets(topic, partitions, 'earliest'),
      target.listOffsets(targetTopic, targetPartitions, 'latest'),
      mm2OffsetsTopic === undefined
        ? committedOffsets(source, args.group, topic)
        : mm2Positions(target, mm2OffsetsTopic, args['source-alias'], topic, args['mm2-connector']),
    ])
    if (mirror.size === 0) {
      notes.push(
        mm2OffsetsTopic === undefined
          ? `Consumer group '${args.group}' has no committed offsets for topic '${topic}'.`
          : `MirrorMaker 2 has stored no position for topic '${topic}' in ${mm2OffsetsTopic} yet.`
      )
    }
    const lag = await topicLagRows(source, { topic, targetTopic, partitions, sourceEnds, sourceStarts, targetEnds, mirror }, syncs, now)
    rows.push(...lag.rows)
    evidence.push(...lag.evidence)
  }
  return { rows, losses: lossEvidence(evidence, mm2OffsetsTopic === undefined ? args.group : `MirrorMaker 2 (${mm2OffsetsTopic})`), notes }
}
