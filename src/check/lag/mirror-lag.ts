import type { ClusterConnection } from '../../config/cluster-connection.js'
import { targetTopicName } from '../../config/mirror-config.js'
import type { AuditClient } from '../../kafka/audit-client.js'
import { mm2OffsetsTopicName, mm2Positions } from '../../mirror-topics/mm2-positions.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
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
  let topics = args.topic
  if (topics === undefined || topics.length === 0) {
    const offsets = await source.call(() => source.admin.fetchOffsets({ groupId: args.group }))
    topics = offsets
      .filter(t => t.partitions.some(p => Number(p.offset) >= 0))
      .map(t => t.topic)
      .sort()
    if (topics.length === 0) throw new UsageError(`${groupFlag} "${args.group}" has no committed offsets on the source cluster; give --topic`)
  }
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
    const topicRows: MirrorLagRow[] = []
    for (const partition of partitions) {
      const sourceEnd = sourceEnds.get(partition)!
      const mirrorOffset = mirror.get(partition)
      const lag = mirrorOffset === undefined ? undefined : Math.max(0, sourceEnd - mirrorOffset)
      let lagSeconds: number | undefined
      if (lag !== undefined && mirrorOffset !== undefined) {
        lagSeconds = 0
        if (lag > 0) {
          const [record] = await new PartitionReader(source, topic, partition, { fetchMaxBytes: 65_536, isolation: 'read_uncommitted' }).records(
            Math.max(mirrorOffset, sourceStarts.get(partition) ?? 0),
            sourceEnd,
            1
          )
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
