import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { GroupAdmin } from '../../src/kafka/group-admin.js'
import { readInternalTopicBytes } from '../../src/kafka/internal-topic.js'
import { decodeMm2Checkpoint, type Mm2CheckpointRecord } from '../../src/mirror-topics/mm2-records.js'
import { silentLogger } from '../../src/shared/logger.js'
import { mm2OffsetSyncs, mm2Translate } from '../../src/check/translate/mm2-translation.js'
import { readAll, uniqueName, type ReadRecord } from './kafka.js'

/** Messages with unique values `<tag>-<partition>-<i>`, timestamps now (time retention keeps them). */
export function tagged (tag: string, partition: number, count: number, keyOf: (i: number) => string | null = i => `k-${i}`): Message[] {
  const now = Date.now()
  return Array.from({ length: count }, (_, i) => ({ partition, key: keyOf(i), value: `${tag}-${partition}-${i}`, timestamp: String(now) }))
}

/**
 * A real consumer of group `groupId` reads `counts.get(p)` records of each partition from the
 * beginning and commits the offset after the last one it read, as an application would.
 * Returns the committed offsets; `onRecord` hears each record read.
 */
export async function consumeAndCommit (
  cluster: LocalCluster,
  topic: string,
  groupId: string,
  counts: ReadonlyMap<number, number>,
  onRecord?: (partition: number, value: string) => void
): Promise<Map<number, bigint>> {
  const consumer = createKafkaClient(cluster.connection('test-app')).consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 })
  const read = new Map<number, number>()
  const committed = new Map<number, bigint>()
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset }) => {
            const want = counts.get(batch.partition) ?? 0
            for (const m of batch.messages) {
              const n = read.get(batch.partition) ?? 0
              if (n >= want) break
              read.set(batch.partition, n + 1)
              onRecord?.(batch.partition, m.value?.toString() ?? 'null')
              resolveOffset(m.offset)
              if (n + 1 === want) {
                const offset = BigInt(m.offset) + 1n
                await consumer.commitOffsets([{ topic, partition: batch.partition, offset: offset.toString() }])
                committed.set(batch.partition, offset)
                consumer.pause([{ topic, partitions: [batch.partition] }])
              }
            }
            if ([...counts].every(([p, c]) => c === 0 || committed.has(p))) resolve()
          },
        })
        .catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return committed
}

/** Every record of `topic` up to the end offsets seen when called, also when the log ends in transaction markers. */
export async function readToEnd (cluster: LocalCluster, topic: string): Promise<ReadRecord[]> {
  const records = await readAsGroup(cluster, topic, uniqueName('reader'))
  return records.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)))
}

/**
 * Starts group `groupId` on `topic` (with whatever offsets the group has committed) and reads until
 * the end offsets seen when called; a partition without a committed offset starts at the beginning.
 */
export async function readAsGroup (cluster: LocalCluster, topic: string, groupId: string): Promise<ReadRecord[]> {
  return await readAll(cluster, topic, { groupId })
}

/** Commits `offsets` for an idle group as an admin would (kafka-consumer-groups --reset-offsets). */
export async function commitAsAdmin (cluster: LocalCluster, groupId: string, topic: string, offsets: ReadonlyMap<number, bigint>): Promise<void> {
  const admin = new GroupAdmin(cluster.connection('test-admin'), silentLogger)
  await admin.start()
  try {
    await admin.commitOffsets(groupId, [...offsets].map(([partition, offset]) => ({ topic, partition, offset })))
  } finally {
    await admin.stop()
  }
}

export function values (records: readonly ReadRecord[], partition: number): string[] {
  return records.filter(r => r.partition === partition).map(r => r.value?.toString() ?? 'null')
}

/**
 * Source offset -> target offset of each copied record, matched by their (unique) values; with
 * several copies the last one. The data a MirrorMaker 2 task would have seen as (upstream, downstream).
 */
export async function copyPairs (source: LocalCluster, target: LocalCluster, topic: string, partition: number): Promise<Array<[bigint, bigint]>> {
  const targetByValue = new Map<string, bigint>()
  for (const r of await readToEnd(target, topic)) if (r.partition === partition) targetByValue.set(r.value?.toString() ?? '', BigInt(r.offset))
  const pairs: Array<[bigint, bigint]> = []
  for (const r of await readToEnd(source, topic)) {
    if (r.partition !== partition) continue
    const downstream = targetByValue.get(r.value?.toString() ?? '')
    if (downstream !== undefined) pairs.push([BigInt(r.offset), downstream])
  }
  return pairs
}

/**
 * What failing over with MirrorMaker 2's rule would re-read: target records between MM2's
 * translation of `groupOffset` and the exact one (`exactTarget`).
 */
export function mm2ReReads (
  pairs: ReadonlyArray<readonly [bigint, bigint]>,
  groupOffset: bigint,
  exactTarget: bigint,
  maxOffsetLag = 100n
): bigint | undefined {
  const translated = mm2Translate(mm2OffsetSyncs(pairs, maxOffsetLag), groupOffset)
  return translated === undefined ? undefined : exactTarget - translated
}

export { uniqueName }

/** MirrorMaker 2's checkpoints topic as it stands: the last checkpoint per (group, target topic, partition). */
export async function loadCheckpoints (cluster: LocalCluster, topic = 'source.checkpoints.internal'): Promise<Mm2CheckpointRecord[]> {
  const latest = new Map<string, Mm2CheckpointRecord>()
  await readInternalTopicBytes(cluster.connection('test-checkpoints'), topic, (key, value) => {
    const checkpoint = decodeMm2Checkpoint(key, value)
    if (checkpoint !== undefined) latest.set(JSON.stringify([checkpoint.group, checkpoint.topic, checkpoint.partition]), checkpoint)
  }, silentLogger)
  return [...latest.values()]
}
