import { setTimeout as sleep } from 'node:timers/promises'
import type { Admin, ListPartitionReassignmentsResponse, PartitionReassignment } from '@kafka-mirror-sidecar/kafkajs'
import type { NodeCluster } from '../scripts/local-kafka/node-cluster.js'
import type { Compression } from './compression.js'
import { cpuSecondsPerGb } from './cpu-per-gb.js'
import { preload, type RecordShape } from './kcat-producer.js'
import { median } from './median.js'
import { readProcessUsage } from './process-usage.js'

/** How often the reassignment's progress is asked for: the resolution of the measured time. */
export const REPLICATION_POLL_INTERVAL_MS = 50

/**
 * The broker's own replication as a ceiling for a mirror: the time a new follower replica takes
 * to copy partitions it does not have from their leader (a partition reassignment that adds a
 * replica, as Kafka's `kafka-reassign-partitions` does), over the same records as the scenario.
 */
export interface ReplicationCeilingFigures {
  readonly run: number
  readonly records: number
  /** Reassignment asked until every partition's new replica was in sync and no reassignment was left. */
  readonly seconds: number
  readonly recordsPerSecond: number
  /** Key + value bytes per second, MiB like the other figures. */
  readonly mbPerSecond: number
  /** CPU of the leader and the new follower during the copy. */
  readonly brokerCpuSeconds: number
  readonly brokerCpuSecondsPerGb: number
  /** The longest gap between two progress polls: the resolution of `seconds`. */
  readonly longestPollGapSeconds: number
}

export interface ReplicationCeilingMedians {
  readonly runs: number
  readonly records: number
  readonly seconds: number
  readonly recordsPerSecond: number
  readonly mbPerSecond: number
  readonly brokerCpuSecondsPerGb: number
}

/** Every partition of `topic` given `replicas` (the leader first). */
export function reassignmentPlan (topic: string, partitions: number, replicas: readonly number[]): PartitionReassignment[] {
  return [{ topic, partitionAssignment: Array.from({ length: partitions }, (_, partition) => ({ partition, replicas: [...replicas] })) }]
}

/**
 * Whether the reassignment adding `follower` is over: no reassignment of `topic` is in progress
 * and every partition's in-sync replicas include the follower.
 */
export function replicaCaughtUp (
  topic: string,
  ongoing: ListPartitionReassignmentsResponse,
  isr: ReadonlyMap<number, readonly number[]>,
  partitions: number,
  follower: number
): boolean {
  if (ongoing.topics.some(t => t.topic === topic && t.partitions.length > 0)) return false
  for (let partition = 0; partition < partitions; partition++) {
    if (!(isr.get(partition) ?? []).includes(follower)) return false
  }
  return true
}

export function replicationMedians (rows: readonly ReplicationCeilingFigures[]): ReplicationCeilingMedians | undefined {
  if (rows.length === 0) return undefined
  return {
    runs: rows.length,
    records: rows[0]!.records,
    seconds: median(rows.map(r => r.seconds)),
    recordsPerSecond: median(rows.map(r => r.recordsPerSecond)),
    mbPerSecond: median(rows.map(r => r.mbPerSecond)),
    brokerCpuSecondsPerGb: median(rows.map(r => r.brokerCpuSecondsPerGb)),
  }
}

export interface ReplicationCeilingJob {
  /** A cluster of at least two nodes (the benchmark's 3-node source cluster). */
  readonly cluster: NodeCluster
  readonly topic: string
  readonly partitions: number
  readonly records: number
  readonly shape: RecordShape
  /** The preload's codec (the scenario's source codec): the follower copies the batches as written. */
  readonly compression: Compression
  readonly runs: number
  readonly timeoutMs: number
  readonly log: (line: string) => void
}

async function isrByPartition (admin: Admin, topic: string): Promise<Map<number, number[]>> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
  return new Map((topics[0]?.partitions ?? []).map(p => [p.partitionId, p.isr]))
}

async function cpuOf (cluster: NodeCluster, nodeIds: readonly number[]): Promise<number> {
  let total = 0
  for (const nodeId of nodeIds) {
    const pid = await cluster.node(nodeId).pid()
    total += pid === undefined ? Number.NaN : readProcessUsage(pid)?.cpuSeconds ?? Number.NaN
  }
  return total
}

/**
 * Preloads `topic` with every partition on the first node only, then per run adds a replica on
 * the second node (which has none of the data) and times until it is in sync, then takes that
 * replica away again for the next run. The topic is deleted at the end.
 */
export async function runReplicationCeiling (job: ReplicationCeilingJob): Promise<ReplicationCeilingFigures[]> {
  const { cluster, topic, partitions, log } = job
  const [leader, follower] = cluster.nodes.map(n => n.nodeId)
  if (leader === undefined || follower === undefined) {
    throw new Error(`the replication ceiling needs a cluster of two nodes or more; ${cluster.options.name} has ${cluster.nodes.length}`)
  }
  const recordBytes = job.shape.keyBytes + job.shape.valueBytes
  const figures: ReplicationCeilingFigures[] = []
  await cluster.withAdmin(admin =>
    admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, replicaAssignment: Array.from({ length: partitions }, (_, partition) => ({ partition, replicas: [leader] })) }],
    })
  )
  try {
    await preload({ bootstrap: cluster.bootstrap, topic, compression: job.compression, lingerMs: 50 }, job.shape, job.records)
    log(`replication ceiling: preloaded ${job.records} records into ${topic} on ${cluster.options.name} node ${leader} only`)
    for (let run = 1; run <= job.runs; run++) {
      const result = await cluster.withAdmin(async admin => {
        const cpuBefore = await cpuOf(cluster, [leader, follower])
        const startedAt = performance.now()
        await admin.alterPartitionReassignments({ topics: reassignmentPlan(topic, partitions, [leader, follower]) })
        let lastPoll = startedAt
        let longestGapMs = 0
        for (;;) {
          const done = replicaCaughtUp(
            topic,
            await admin.listPartitionReassignments({ topics: [{ topic, partitions: Array.from({ length: partitions }, (_, i) => i) }] }),
            await isrByPartition(admin, topic),
            partitions,
            follower
          )
          const now = performance.now()
          longestGapMs = Math.max(longestGapMs, now - lastPoll)
          lastPoll = now
          if (done) break
          if (now - startedAt > job.timeoutMs) {
            throw new Error(
              `replication ceiling: the new replicas of ${topic} on node ${follower} were not in sync within ${Math.round(job.timeoutMs / 1000)} s`
            )
          }
          await sleep(REPLICATION_POLL_INTERVAL_MS)
        }
        const seconds = Math.max((lastPoll - startedAt) / 1000, 0.001)
        const brokerCpuSeconds = await cpuOf(cluster, [leader, follower]) - cpuBefore
        // The next run's follower starts without the data again.
        await admin.alterPartitionReassignments({ topics: reassignmentPlan(topic, partitions, [leader]) })
        return { seconds, brokerCpuSeconds, longestPollGapSeconds: longestGapMs / 1000 }
      })
      await waitUntilSingleReplica(cluster, topic, partitions, leader, job.timeoutMs)
      const row: ReplicationCeilingFigures = {
        run,
        records: job.records,
        seconds: result.seconds,
        recordsPerSecond: job.records / result.seconds,
        mbPerSecond: job.records * recordBytes / 2 ** 20 / result.seconds,
        brokerCpuSeconds: result.brokerCpuSeconds,
        brokerCpuSecondsPerGb: cpuSecondsPerGb(result.brokerCpuSeconds, job.records, recordBytes),
        longestPollGapSeconds: result.longestPollGapSeconds,
      }
      figures.push(row)
      log(`run ${run} replication ceiling: a new replica copied ${job.records} records in ${row.seconds.toFixed(2)} s (${Math.round(row.recordsPerSecond)} records/s, poll gap up to ${row.longestPollGapSeconds.toFixed(2)} s)`)
    }
  } finally {
    await cluster.withAdmin(admin => admin.deleteTopics({ topics: [topic] }))
  }
  return figures
}

async function waitUntilSingleReplica (cluster: NodeCluster, topic: string, partitions: number, leader: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  await cluster.withAdmin(async admin => {
    for (;;) {
      const ongoing = await admin.listPartitionReassignments({ topics: [{ topic, partitions: Array.from({ length: partitions }, (_, i) => i) }] })
      const isr = await isrByPartition(admin, topic)
      if (ongoing.topics.every(t => t.partitions.length === 0) && [...isr.values()].every(replicas => replicas.length === 1 && replicas[0] === leader)) return
      if (performance.now() > deadline) {
        throw new Error(`replication ceiling: the replicas added to ${topic} were not removed within ${Math.round(timeoutMs / 1000)} s`)
      }
      await sleep(200)
    }
  })
}
