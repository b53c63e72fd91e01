import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type { Admin } from '@kafka-mirror-sidecar/kafkajs'
import { javaLoggingArg, javaLoggingConfig } from './java-main.js'
import { LocalKafkaError, type KafkaDistribution } from './kafka-distribution.js'

const execFileAsync = promisify(execFile)

/** One partition's leader before and after `moveLeaders`. */
export interface LeaderMove {
  readonly partition: number
  readonly before: number
  readonly after: number
}

/** Partitions whose replicas are not all in sync (or that have no leader), as `topic/partition isr=[..] replicas=[..]`. */
async function partitionsNotInSync (admin: Admin, topics?: readonly string[]): Promise<string[]> {
  const metadata = await admin.fetchTopicMetadata(topics === undefined ? undefined : { topics: [...topics] })
  const lagging: string[] = []
  for (const topic of metadata.topics) {
    for (const p of topic.partitions) {
      if (p.leader < 0 || p.isr.length < p.replicas.length) {
        lagging.push(`${topic.name}/${p.partitionId} leader=${p.leader} isr=[${p.isr.join(',')}] replicas=[${p.replicas.join(',')}]`)
      }
    }
  }
  return lagging
}

/** Resolves once every partition of `topics` (default every topic) has a leader and all its replicas in sync. */
export async function waitUntilIsrFull (admin: Admin, clusterName: string, topics: readonly string[] | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let lagging: string[] = ['(not asked yet)']
  let lastError: unknown
  for (;;) {
    try {
      lagging = await partitionsNotInSync(admin, topics)
      if (lagging.length === 0) return
    } catch (error) {
      // A node restarting refuses or drops the metadata request; asked again until the deadline.
      lastError = error
    }
    if (Date.now() > deadline) {
      throw new LocalKafkaError(`cluster "${clusterName}": replicas not in sync within ${timeoutMs} ms: ${lagging.slice(0, 5).join('; ')}${lagging.length > 5 ? ` (and ${lagging.length - 5} more)` : ''}${lastError === undefined ? '' : ` (last error: ${(lastError as Error).message})`}`)
    }
    await sleep(500)
  }
}

/** How many partitions of `topic` each node leads. */
export async function leaderCounts (admin: Admin, topic: string): Promise<Map<number, number>> {
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
  const counts = new Map<number, number>()
  for (const p of metadata.topics[0]?.partitions ?? []) if (p.leader >= 0) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1)
  return counts
}

/**
 * Kafka's `kafka-leader-election --election-type PREFERRED` (LeaderElectionCommand from the
 * distribution's jars) for partitions 0..partitions-1 of `topic`. A partition whose preferred
 * replica already leads is no error.
 */
export async function electPreferredLeaders (
  distribution: KafkaDistribution,
  bootstrap: string,
  topic: string,
  partitions: number,
  workDir: string
): Promise<void> {
  await mkdir(workDir, { recursive: true })
  const file = join(workDir, `${topic}.json`)
  await writeFile(file, JSON.stringify({ partitions: Array.from({ length: partitions }, (_, partition) => ({ topic, partition })) }))
  const logging = join(workDir, 'log4j.properties')
  await writeFile(logging, javaLoggingConfig(distribution, '/dev/null', 'WARN'))
  try {
    await execFileAsync(
      'java',
      [
        '-Xmx128m',
        javaLoggingArg(distribution, logging),
        '-cp',
        distribution.classpath,
        'org.apache.kafka.tools.LeaderElectionCommand',
        '--bootstrap-server',
        bootstrap,
        '--election-type',
        'PREFERRED',
        '--path-to-json-file',
        file,
      ],
      { timeout: 120_000 }
    )
  } catch (error) {
    const output = String((error as { stdout?: string }).stdout ?? '') + String((error as { stderr?: string }).stderr ?? '')
    // Partitions already led by their preferred replica are reported as failed elections with ElectionNotNeeded.
    const failures = output.split('\n').filter(line => /Error|Exception/.test(line) && !/ElectionNotNeeded|Election not needed/.test(line))
    if (failures.length > 0 || !/ElectionNotNeeded|Election not needed/.test(output)) {
      throw new LocalKafkaError(`kafka-leader-election for ${topic} failed:\n${output.trim()}`)
    }
  }
}

/** `replicas` rotated by the fewest places (at least one) that put a replica other than `leader` first. */
function rotatedAwayFrom (replicas: readonly number[], leader: number): number[] {
  for (let by = 1; by < replicas.length; by++) {
    const rotated = [...replicas.slice(by), ...replicas.slice(0, by)]
    if (rotated[0] !== leader) return rotated
  }
  return [...replicas]
}

/**
 * Rotates every replica list of `topic` through a partition reassignment so that a replica other
 * than the current leader comes first (the replicas stay the same, the preferred one changes), waits until the reassignment is done, then runs `elect`
 * so the new preferred replicas lead. Returns each partition's leader before and after.
 */
export async function moveLeaders (admin: Admin, topic: string, timeoutMs: number, elect: (partitions: number) => Promise<void>): Promise<LeaderMove[]> {
  const before = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? []
  if (before.length === 0) throw new LocalKafkaError(`topic ${topic}: no partitions found to move leaders of`)
  await admin.alterPartitionReassignments({
    topics: [{ topic, partitionAssignment: before.map(p => ({ partition: p.partitionId, replicas: rotatedAwayFrom(p.replicas, p.leader) })) }],
    timeout: 30_000,
  })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { topics } = await admin.listPartitionReassignments({ topics: [{ topic, partitions: before.map(p => p.partitionId) }], timeout: 30_000 })
    if (topics.every(t => t.partitions.length === 0)) break
    if (Date.now() > deadline) throw new LocalKafkaError(`topic ${topic}: the reassignment did not finish within ${timeoutMs} ms`)
    await sleep(300)
  }
  await elect(before.length)
  let after = before
  while (Date.now() < deadline) {
    after = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? []
    if (after.every(p => p.leader === p.replicas[0])) break
    await sleep(300)
  }
  return before.map(p => ({ partition: p.partitionId, before: p.leader, after: after.find(a => a.partitionId === p.partitionId)?.leader ?? -1 }))
}
