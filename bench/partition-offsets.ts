import type { LocalCluster } from '../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../src/kafka/client.js'
import { createInternalCluster } from '../src/kafka/kafkajs-internals.js'

/** Partitions per ListOffsets request: 10,000 partitions are about 200 kB of request. */
const PARTITIONS_PER_REQUEST = 5_000

/**
 * The high watermark of partitions `0..partitions-1` of each of `topics` on `cluster`, in one
 * Metadata request and one ListOffsets request per leader (per 5,000 partitions). kafkajs' admin
 * asks per topic and refreshes the metadata of every topic it ever knew for each new one, so at
 * 1,250 topics one pass was 1,250 Metadata requests of growing size and 2,500 ListOffsets; and
 * once a topic is deleted every refresh fails on it. Here each call starts a fresh metadata view.
 * A topic with a partition that has no leader yet, or answered an error, is absent.
 */
export async function highWatermarks (cluster: LocalCluster, topics: readonly string[], partitions: number): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>()
  if (topics.length === 0) return out
  const internal = createInternalCluster(createKafkaClient(cluster.connection('bench-offsets')))
  await internal.connect()
  try {
    try {
      await internal.addMultipleTargetTopics([...topics])
    } catch {
      return out
    }
    const byLeader = new Map<string, Array<{ topic: string, partitions: number[] }>>()
    const all = Array.from({ length: partitions }, (_, p) => p)
    for (const topic of topics) {
      let leaders: Record<string, number[]>
      try {
        leaders = internal.findLeaderForPartitions(topic, all)
      } catch {
        continue
      }
      if (Object.values(leaders).reduce((n, list) => n + list.length, 0) !== partitions || Object.keys(leaders).some(leader => Number(leader) < 0)) continue
      for (const [leader, list] of Object.entries(leaders)) {
        const entries = byLeader.get(leader) ?? []
        entries.push({ topic, partitions: list })
        byLeader.set(leader, entries)
      }
    }
    const found = new Map<string, number[]>()
    const failed = new Set<string>()
    for (const [leader, entries] of byLeader) {
      const broker = await internal.findBroker({ nodeId: leader })
      const chunks: Array<Array<{ topic: string, partitions: number[] }>> = [[]]
      let size = 0
      for (const entry of entries) {
        if (size + entry.partitions.length > PARTITIONS_PER_REQUEST && chunks.at(-1)!.length > 0) { chunks.push([]); size = 0 }
        chunks.at(-1)!.push(entry)
        size += entry.partitions.length
      }
      for (const chunk of chunks) {
        let responses: Awaited<ReturnType<typeof broker.listOffsets>>['responses']
        try {
          ({ responses } = await broker.listOffsets({
            replicaId: -1,
            isolationLevel: 0,
            topics: chunk.map(({ topic, partitions }) => ({ topic, partitions: partitions.map(partition => ({ partition, timestamp: '-1' })) })),
          }))
        } catch {
          // kafkajs throws for the whole request when one partition answers an error (a leader not settled yet): none of these count yet.
          for (const { topic } of chunk) failed.add(topic)
          continue
        }
        for (const { topic, partitions: answered } of responses) {
          const ends = found.get(topic) ?? new Array<number>(partitions).fill(-1)
          for (const { partition, offset, errorCode } of answered) {
            if (errorCode !== 0) failed.add(topic)
            else ends[partition] = Number(offset)
          }
          found.set(topic, ends)
        }
      }
    }
    for (const topic of topics) {
      const ends = found.get(topic)
      if (ends !== undefined && !failed.has(topic) && ends.every(end => end >= 0)) out.set(topic, ends)
    }
    return out
  } finally {
    await internal.disconnect()
  }
}
