import type { AuditClient } from '../../kafka/audit-client.js'
import { decodeMm2Checkpoint, decodeMm2OffsetSync, type Mm2CheckpointRecord } from '../../mirror-topics/mm2-records.js'
import { mm2Translate, type Mm2OffsetSync } from './mm2-translation.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import { partitionKey } from '../../shared/partition-key.js'

/** Every record of every partition of `topic`, in offset order per partition, as bytes. */
async function readWhole (client: AuditClient, topic: string, flag: string, onRecord: (key: Buffer | null, value: Buffer | null) => void): Promise<void> {
  const partitions = await client.partitionsOf(topic, flag)
  const ends = await client.listOffsets(topic, partitions, 'latest')
  const starts = await client.listOffsets(topic, partitions, 'earliest')
  for (const partition of partitions) {
    for await (const chunk of new PartitionReader(client, topic, partition, { isolation: 'read_uncommitted' }).chunks(
      starts.get(partition) ?? 0,
      ends.get(partition) ?? 0
    )) {
      for (const record of chunk) onRecord(record.key, record.value)
    }
  }
}

/**
 * The offset syncs a MirrorMaker 2 flow wrote (`mm2-offset-syncs.<target alias>.internal`) for
 * `topics` (names on the source; default all), by (topic, partition) in the order written. The topic is
 * compacted on (topic, partition), so older syncs may be gone: the newest of each partition stays.
 */
export async function mm2OffsetSyncsOf (
  client: AuditClient,
  syncsTopic: string,
  topics?: ReadonlySet<string>,
  flag = '--mm2-offset-syncs-topic'
): Promise<Map<string, Mm2OffsetSync[]>> {
  const out = new Map<string, Mm2OffsetSync[]>()
  await readWhole(client, syncsTopic, flag, (k, v) => {
    const sync = decodeMm2OffsetSync(k, v)
    if (sync === undefined || (topics !== undefined && !topics.has(sync.topic))) return
    let list = out.get(partitionKey(sync.topic, sync.partition))
    if (list === undefined) out.set(partitionKey(sync.topic, sync.partition), (list = []))
    list.push({ upstream: sync.upstreamOffset, downstream: sync.downstreamOffset })
  })
  return out
}

/**
 * The newest checkpoint of `group` per (target topic, partition) in a MirrorMaker 2 flow's
 * checkpoints topic (`<source alias>.checkpoints.internal` on the target).
 */
async function mm2CheckpointsOf (
  client: AuditClient,
  checkpointsTopic: string,
  group: string,
  flag = '--mm2-checkpoints-topic'
): Promise<Map<string, Mm2CheckpointRecord>> {
  const out = new Map<string, Mm2CheckpointRecord>()
  await readWhole(client, checkpointsTopic, flag, (k, v) => {
    const checkpoint = decodeMm2Checkpoint(k, v)
    if (checkpoint !== undefined && checkpoint.group === group) out.set(partitionKey(checkpoint.topic, checkpoint.partition), checkpoint)
  })
  return out
}

/** MirrorMaker 2's translation of `offset` on `topic`-`partition` from syncs read by `mm2OffsetSyncsOf`; undefined without a sync at or below it. */
export function mm2TranslateFrom (syncs: ReadonlyMap<string, readonly Mm2OffsetSync[]>, topic: string, partition: number, offset: bigint): bigint | undefined {
  return mm2Translate(syncs.get(partitionKey(topic, partition)) ?? [], offset)
}

/** One partition of a group translated through a MirrorMaker 2 flow's records. */
export interface Mm2TranslationRow {
  readonly group: string
  readonly topic: string
  readonly partition: number
  /** The group's committed offset on the source. */
  readonly sourceOffset: bigint
  readonly targetTopic: string
  /** `translated`: MirrorMaker 2's rule gives `targetOffset`; `no-syncs`: no offset sync at or below the offset. */
  readonly status: 'translated' | 'no-syncs'
  /** MirrorMaker 2's translation from its offset syncs: the newest sync at or below, + 1 unless exactly at it. */
  readonly targetOffset?: bigint
  /** The newest checkpoint MirrorMaker 2 wrote for this group and partition: what its group offset sync commits on the target. */
  readonly checkpoint?: { readonly sourceOffset: bigint, readonly targetOffset: bigint }
}

export interface Mm2TranslateOptions {
  readonly group: string
  /** Only this source topic; default every topic the group committed on. */
  readonly topic?: string
  /** Where the offset-syncs topic is (`offset-syncs.topic.location`, default source) and its name. */
  readonly offsetSyncs: { readonly client: AuditClient, readonly topic: string }
  readonly checkpointsTopic: string
  /** The target topic of a source topic (the flow's replication policy). */
  readonly targetTopicOf: (topic: string) => string
}

/**
 * Translates the committed offsets of `group` on the source as a running MirrorMaker 2 flow does:
 * from its offset syncs with its rule (`mm2Translate`), next to the checkpoint it last wrote. Reads only.
 */
export async function translateGroupThroughMm2 (source: AuditClient, target: AuditClient, options: Mm2TranslateOptions): Promise<Mm2TranslationRow[]> {
  const committed = await source.call(() =>
    source.admin.fetchOffsets({ groupId: options.group, ...(options.topic === undefined ? {} : { topics: [options.topic] }) })
  )
  const checkpoints = (await target.hasTopic(options.checkpointsTopic))
    ? await mm2CheckpointsOf(target, options.checkpointsTopic, options.group)
    : new Map<string, Mm2CheckpointRecord>()
  const syncs = await mm2OffsetSyncsOf(options.offsetSyncs.client, options.offsetSyncs.topic, new Set(committed.map(c => c.topic)))
  const rows: Mm2TranslationRow[] = []
  for (const { topic, partitions } of committed) {
    const targetTopic = options.targetTopicOf(topic)
    for (const p of partitions) {
      const sourceOffset = BigInt(p.offset)
      if (sourceOffset < 0n) continue
      const targetOffset = mm2TranslateFrom(syncs, topic, p.partition, sourceOffset)
      const checkpoint = checkpoints.get(partitionKey(targetTopic, p.partition))
      rows.push({
        group: options.group,
        topic,
        partition: p.partition,
        sourceOffset,
        targetTopic,
        status: targetOffset === undefined ? 'no-syncs' : 'translated',
        ...(targetOffset === undefined ? {} : { targetOffset }),
        ...(checkpoint === undefined ? {} : { checkpoint: { sourceOffset: checkpoint.upstreamOffset, targetOffset: checkpoint.downstreamOffset } }),
      })
    }
  }
  return rows.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
}
