import type { AuditClient } from '../kafka/audit-client.js'
import { PartitionReader } from './partition-reader.js'

/** Connect's offsets topic of a MirrorMaker 2 flow from `sourceAlias`, on the target cluster (dedicated mode). */
export function mm2OffsetsTopicName (sourceAlias: string): string {
  return `mm2-offsets.${sourceAlias}.internal`
}

/**
 * A running MirrorMaker 2 flow's position per partition of `topic`: the next source offset it will
 * copy, from the source offsets its `MirrorSourceConnector` tasks stored in Connect's offsets topic
 * (key `["MirrorSourceConnector",{"cluster":<source alias>,"partition":p,"topic":<topic>}]`, value
 * `{"offset":<last copied offset>}`; the newest record of a key wins, a null value removes it).
 * MirrorMaker 2 writes them every `offset.flush.interval.ms` (default 60 s), as the sidecar commits.
 */
export async function mm2Positions (target: AuditClient, offsetsTopic: string, sourceAlias: string, topic: string): Promise<Map<number, number>> {
  const positions = new Map<number, number>()
  const partitions = await target.partitionsOf(offsetsTopic, '--mm2-offsets-topic')
  const ends = await target.listOffsets(offsetsTopic, partitions, 'latest')
  const starts = await target.listOffsets(offsetsTopic, partitions, 'earliest')
  for (const partition of partitions) {
    for await (const chunk of new PartitionReader(target, offsetsTopic, partition, { isolation: 'read_uncommitted' }).chunks(starts.get(partition) ?? 0, ends.get(partition) ?? 0)) {
      for (const record of chunk) {
        if (record.key === null) continue
        let key: unknown
        try { key = JSON.parse(record.key.toString('utf8')) } catch { continue }
        if (!Array.isArray(key) || key[0] !== 'MirrorSourceConnector') continue
        const where = key[1] as { cluster?: unknown, topic?: unknown, partition?: unknown } | undefined
        if (where?.cluster !== sourceAlias || where.topic !== topic || typeof where.partition !== 'number') continue
        if (record.value === null) { positions.delete(where.partition); continue }
        const offset = (JSON.parse(record.value.toString('utf8')) as { offset?: unknown }).offset
        if (typeof offset === 'number') positions.set(where.partition, offset + 1)
      }
    }
  }
  return positions
}
