import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LocalCluster } from '../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../src/kafka/client.js'
import { retry } from '../src/shared/retry.js'
import { stopChild } from './child-registry.js'
import { highWatermarks } from './partition-offsets.js'
import { mirrorGroupId, type Contender, type MirrorJob } from './contenders.js'
import { readProcessUsage, UsageSampler } from './process-usage.js'
import { requireSettings, type SettingsCheck } from './settings-check.js'
import { sidecarMetrics } from './sidecar-metrics.js'
import type { TopicAdmin } from './topic-admin.js'

type Admin = ReturnType<ReturnType<typeof createKafkaClient>['admin']>

/** The many-partition source: `topics` topics named `<prefix>-<n>` of `partitions` partitions, `recordsPerPartition` each. */
export interface ScaleShape {
  readonly prefix: string
  readonly topics: number
  readonly partitions: number
  readonly recordsPerPartition: number
  readonly valueBytes: number
}

/** Figures of one contender copying every topic of the shape once. */
export interface ScaleFigures {
  readonly contender: string
  readonly run: number
  readonly topics: number
  readonly partitions: number
  readonly records: number
  /** Process start until every partition of every topic has its records on the target. */
  readonly totalSeconds: number
  /** utime + stime of the mirror from start until all on target. */
  readonly cpuSeconds: number
  /** VmHWM of the mirror process at the end. */
  readonly peakRssBytes: number
  /** CPU of the mirror while caught up (the idle window after all is on target), in % of one core. */
  readonly idleCpuPercent: number
  /**
   * CPU of the mirror in the last half of the idle window, in % of one core: when the copy is quick
   * the first seconds after it still hold the commits and offset syncs of every partition.
   */
  readonly idleTailCpuPercent: number
  /**
   * Seconds after "all on target" until the source group had committed every partition's end; NaN
   * when not within the idle window (or MM2: no source group).
   */
  readonly allCommittedAfterSeconds: number
  /** Successful source commits from start to the end of the idle window, from the sidecar's /metrics; NaN for others. */
  readonly commits: number
  /** Commit intervals from start to the end of the idle window (an idle mirror has nothing to commit, so most of the idle ones commit nothing). */
  readonly commitIntervals: number
  /**
   * Commit intervals from start until the source group had committed every partition's end (NaN
   * when it never did within the window): each of them had acknowledged records to commit, so a
   * mirror that commits at every interval shows `commits` equal to this (less one for the start-up,
   * before the group joined).
   */
  readonly commitIntervalsUntilAllCommitted: number
  /** Failed commits during the whole run, from the sidecar's /metrics; NaN for others. */
  readonly failedCommits: number
  /** Series on the sidecar's /metrics at the end; NaN for others. */
  readonly metricSeries: number
  /** Target records beyond the source's, summed over partitions (after the mirror stopped). */
  readonly duplicates: number
  /** Source records not on the target, summed over partitions. */
  readonly missing: number
  /** Every setting the bench passed, against what the contender printed as resolved. */
  readonly settings?: SettingsCheck
}

export function scaleTopics (shape: ScaleShape): string[] {
  return Array.from({ length: shape.topics }, (_, i) => `${shape.prefix}-${i}`)
}

/** Creates the source topics and preloads them (idempotent producer: a retry never duplicates); returns the end offset of each partition. */
export async function preloadScale (
  source: LocalCluster,
  sourceAdmin: TopicAdmin,
  shape: ScaleShape,
  log: (line: string) => void
): Promise<Map<string, number[]>> {
  const topics = scaleTopics(shape)
  await createAndAwait(sourceAdmin, topics, shape.partitions)
  const kafka = createKafkaClient(source.connection('bench-scale-preload'))
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await producer.connect()
  try {
    const value = 'v'.repeat(shape.valueBytes)
    for (let i = 0; i < topics.length; i += 20) {
      // A refused request (metadata not yet everywhere) wrote nothing: the idempotent producer's retry is safe; the total is checked below.
      await retry(
        async () =>
          await producer.sendBatch({
            acks: -1,
            topicMessages: topics.slice(i, i + 20).map(topic => ({
              topic,
              messages: Array.from({ length: shape.partitions * shape.recordsPerPartition }, (_, n) => ({
                partition: n % shape.partitions,
                key: `${topic}:${n}`,
                value,
              })),
            })),
          }),
        { maxAttempts: 10, initialBackoffMs: 500, shouldRetry: () => true }
      )
    }
  } finally {
    await producer.disconnect()
  }
  const ends = await endOffsets(sourceAdmin, topics, shape.partitions)
  const total = [...ends.values()].flat().reduce((a, b) => a + b, 0)
  const expected = shape.topics * shape.partitions * shape.recordsPerPartition
  if (total !== expected) throw new Error(`preload wrote ${total} records, expected ${expected}`)
  log(`preloaded ${total} records into ${shape.topics} topics x ${shape.partitions} partitions`)
  return ends
}

/**
 * Topic settings of the scale topics. A deleted partition keeps its files open until the broker
 * removes its renamed `-delete` folder, `file.delete.delay.ms` later (60 s by default): with one
 * open log segment per partition, 10,000 partitions deleted and 10,000 created again exceed the
 * 20,000 open files this machine allows a broker (`ulimit -n`), and the broker stops ("Too many
 * open files", all log dirs failed). The topics are created with a short delay, and a new copy
 * waits until the deleted folders are gone (`awaitDeletedLogsRemoved`).
 */
const SCALE_TOPIC_CONFIGS = { 'file.delete.delay.ms': '1000' }

/**
 * Creates `topics` 50 per request (the KRaft controller takes at most 10,000 records per request)
 * and waits until every partition has a leader that answers ListOffsets. The broker creates the
 * logs one after the other (10,000 took 2-4 minutes here with the machine's load average at 10-15),
 * so it waits as long as more topics keep getting ready, and gives up after 120 s without progress.
 */
async function createAndAwait (admin: TopicAdmin, topics: readonly string[], partitions: number): Promise<void> {
  for (let i = 0; i < topics.length; i += 50) await admin.createTopics(topics.slice(i, i + 50), partitions, SCALE_TOPIC_CONFIGS)
  let ready = 0
  for (let progressAt = Date.now(); ;) {
    const now = (await endOffsets(admin, topics, partitions)).size
    if (now === topics.length) return
    if (now > ready) {
      ready = now
      progressAt = Date.now()
    } else if (Date.now() - progressAt > 120_000) {
      throw new Error(`${topics.length - ready} of ${topics.length} topics of ${admin.cluster.bootstrap} have no leaders yet, and none got one in the last 120 s`)
    }
    await sleep(1_000)
  }
}

/** Waits until the broker of `cluster` has removed the folders of deleted partitions (their open files with them); see `SCALE_TOPIC_CONFIGS`. */
async function awaitDeletedLogsRemoved (cluster: LocalCluster): Promise<void> {
  const data = join(cluster.dir, 'data')
  const left = async (): Promise<number> => (await readdir(data).catch(() => [] as string[])).filter(name => name.endsWith('-delete')).length
  for (const deadline = Date.now() + 180_000; await left() > 0;) {
    if (Date.now() > deadline) throw new Error(`${await left()} deleted partition folders still in ${data} 180 s after deletion`)
    await sleep(500)
  }
}

/** Deletes `topics` 50 per request (one request for 1,250 topics outlasts its timeout on a local broker), each batch awaited until no longer listed. */
async function deleteInBatches (admin: TopicAdmin, topics: readonly string[]): Promise<void> {
  for (let i = 0; i < topics.length; i += 50) await admin.deleteTopics(topics.slice(i, i + 50))
}

/** End offsets (high watermarks) per partition of each topic; a topic that does not exist yet (or has a partition without a leader) is absent. */
async function endOffsets (admin: TopicAdmin, wanted: readonly string[], partitions: number): Promise<Map<string, number[]>> {
  const listed = new Set(await admin.listTopics())
  return await highWatermarks(admin.cluster, wanted.filter(topic => listed.has(topic)), partitions)
}

/**
 * Partitions of `expected` whose committed offset in `groupId` is below the end (or absent). One
 * OffsetFetch for all the group's topics: naming 1,250 topics made kafkajs' admin fetch their
 * metadata, and its metadata lock timed out ("Timeout while acquiring lock ... updating target topics").
 */
async function uncommittedPartitions (admin: Admin, groupId: string, expected: ReadonlyMap<string, readonly number[]>): Promise<number> {
  const committed = new Map<string, Map<number, number>>()
  for (const { topic, partitions } of await admin.fetchOffsets({ groupId })) {
    committed.set(topic, new Map(partitions.map(({ partition, offset }) => [partition, Number(offset)])))
  }
  let behind = 0
  for (const [topic, ends] of expected) {
    ends.forEach((end, partition) => { if ((committed.get(topic)?.get(partition) ?? -1) < end) behind++ })
  }
  return behind
}

function commitCount (exposition: string | undefined, result: 'ok' | 'error'): number {
  if (exposition === undefined) return Number.NaN
  let sum = 0
  for (const match of exposition.matchAll(new RegExp(`^kafka_mirror_commits_total\\{[^}]*result="${result}"[^}]*\\} (\\S+)$`, 'gm'))) sum += Number(match[1])
  return sum
}

export interface ScaleContext {
  readonly source: LocalCluster
  readonly target: LocalCluster
  readonly sourceAdmin: TopicAdmin
  readonly targetAdmin: TopicAdmin
  readonly shape: ScaleShape
  /** End offset of every source partition after the preload. */
  readonly sourceEnds: ReadonlyMap<string, readonly number[]>
  readonly commitIntervalMs: number
  readonly idleSeconds: number
  /** Create the target topics before the mirror starts instead of letting it create them. */
  readonly precreateTarget: boolean
  readonly timeoutMs: number
  readonly log: (line: string) => void
}

/**
 * Starts the contender on every topic of the shape (the mirror creates the target topics, as in
 * production), polls the target's end offsets once a second until every partition has its
 * records, then measures an idle window (CPU while caught up, commits), stops the mirror and
 * compares the target with the source partition by partition (duplicates, missing).
 */
export async function runScale (contender: Contender, job: MirrorJob, run: number, context: ScaleContext): Promise<ScaleFigures> {
  const topics = scaleTopics(context.shape)
  await deleteInBatches(context.targetAdmin, topics)
  await awaitDeletedLogsRemoved(context.target)
  if (context.precreateTarget) await createAndAwait(context.targetAdmin, topics, context.shape.partitions)
  const startedAt = performance.now()
  const mirror = await contender.start(job)
  const sampler = new UsageSampler(mirror.pid)
  sampler.start()
  try {
    const pending = new Set(topics)
    for (;;) {
      const ends = await endOffsets(context.targetAdmin, [...pending], context.shape.partitions)
      for (const [topic, offsets] of ends) {
        const wanted = context.sourceEnds.get(topic) ?? []
        if (offsets.length === wanted.length && offsets.every((offset, p) => offset >= (wanted[p] ?? 0))) pending.delete(topic)
      }
      if (pending.size === 0) break
      if (mirror.hasExited()) throw new Error(`${contender.label} exited with ${pending.size} topics not yet copied (see ${job.workDir})`)
      if (performance.now() - startedAt > context.timeoutMs) {
        throw new Error(
          `${contender.label}: ${pending.size} of ${topics.length} topics not copied after ${Math.round(context.timeoutMs / 1000)} s (see ${job.workDir})`
        )
      }
      await sleep(1_000)
    }
    const doneAt = performance.now()
    const atDone = sampler.sample()
    const totalSeconds = (doneAt - startedAt) / 1000
    context.log(`run ${run} ${contender.name}: all ${topics.length * context.shape.partitions} partitions on the target after ${totalSeconds.toFixed(1)} s; measuring ${context.idleSeconds} s caught up`)

    // Idle window: when is everything committed, and what does being caught up cost.
    let allCommittedAfterSeconds = Number.NaN
    const idleEnd = doneAt + context.idleSeconds * 1000
    const tailStart = doneAt + context.idleSeconds * 500
    let atTail: ReturnType<typeof sampler.sample> | undefined
    let tailAt = Number.NaN
    while (performance.now() < idleEnd) {
      if (atTail === undefined && performance.now() >= tailStart) {
        atTail = sampler.sample()
        tailAt = performance.now()
      }
      if (Number.isNaN(allCommittedAfterSeconds) && contender.name !== 'mm2' &&
        await uncommittedPartitions(context.sourceAdmin.admin, mirrorGroupId(job), context.sourceEnds) === 0) {
        allCommittedAfterSeconds = (performance.now() - doneAt) / 1000
      }
      await sleep(1_000)
    }
    const atIdleEnd = sampler.sample()
    const tailSeconds = (performance.now() - tailAt) / 1000
    const idleSeconds = (performance.now() - doneAt) / 1000
    const exposition = await sidecarMetrics(job.workDir)
    const commitsAtEnd = commitCount(exposition, 'ok')
    const usage = sampler.stop()
    await stopChild(mirror)
    // A setting that did not take effect makes the comparison unfair: the run fails naming it.
    const settings = requireSettings(await contender.checkSettings(job))

    const targetEnds = await endOffsets(context.targetAdmin, topics, context.shape.partitions)
    let duplicates = 0
    let missing = 0
    for (const [topic, wanted] of context.sourceEnds) {
      const got = targetEnds.get(topic) ?? []
      wanted.forEach((end, p) => {
        const difference = (got[p] ?? 0) - end
        if (difference > 0) duplicates += difference
        else missing -= difference
      })
    }
    return {
      contender: contender.name,
      run,
      topics: topics.length,
      partitions: topics.length * context.shape.partitions,
      records: [...context.sourceEnds.values()].flat().reduce((a, b) => a + b, 0),
      totalSeconds,
      cpuSeconds: atDone?.cpuSeconds ?? Number.NaN,
      peakRssBytes: usage?.peakRssBytes ?? Number.NaN,
      idleCpuPercent: atDone === undefined || atIdleEnd === undefined ? Number.NaN : ((atIdleEnd.cpuSeconds - atDone.cpuSeconds) / idleSeconds) * 100,
      idleTailCpuPercent: atTail === undefined || atIdleEnd === undefined ? Number.NaN : ((atIdleEnd.cpuSeconds - atTail.cpuSeconds) / tailSeconds) * 100,
      allCommittedAfterSeconds,
      commits: commitsAtEnd,
      commitIntervals: Math.floor(((totalSeconds + idleSeconds) * 1000) / context.commitIntervalMs),
      commitIntervalsUntilAllCommitted: Number.isNaN(allCommittedAfterSeconds)
        ? Number.NaN
        : Math.floor(((totalSeconds + allCommittedAfterSeconds) * 1000) / context.commitIntervalMs),
      failedCommits: commitCount(exposition, 'error'),
      metricSeries: exposition === undefined ? Number.NaN : exposition.split('\n').filter(line => line !== '' && !line.startsWith('#')).length,
      duplicates,
      missing,
      settings,
    }
  } finally {
    sampler.stop()
    await stopChild(mirror)
  }
}

/** CPU seconds of the two brokers, for the report's note on what the local brokers take. */
export async function brokersCpuSeconds (clusters: readonly LocalCluster[]): Promise<number> {
  let total = 0
  for (const cluster of clusters) {
    const pid = await cluster.pid()
    if (pid !== undefined) total += readProcessUsage(pid)?.cpuSeconds ?? 0
  }
  return total
}

/** The scale results as Markdown. */
export function scaleMarkdown (header: string, figures: readonly ScaleFigures[], commitIntervalMs: number): string {
  const mib = (bytes: number): string => Number.isNaN(bytes) ? 'n/a' : `${(bytes / 2 ** 20).toFixed(0)} MiB`
  const num = (value: number, digits = 1): string => Number.isNaN(value) ? 'n/a' : value.toFixed(digits)
  const lines = [
    header,
    '',
    `| contender | run | topics x partitions | records | start → all on target | CPU s | peak RSS | CPU caught up | CPU caught up, last half | all committed after | commits / ${commitIntervalMs / 1000} s intervals until all committed | commits / all intervals | failed commits | /metrics series | duplicates / missing |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...figures.map(
      f =>
        `| ${f.contender} | ${f.run} | ${f.topics} x ${f.partitions / f.topics} = ${f.partitions} | ${f.records} | ${num(f.totalSeconds)} s | ${num(f.cpuSeconds)} | ${mib(f.peakRssBytes)} | ${num(f.idleCpuPercent)} % | ${num(f.idleTailCpuPercent)} % | ${Number.isNaN(f.allCommittedAfterSeconds) ? 'not within the window' : `${num(f.allCommittedAfterSeconds)} s`} | ${num(f.commits, 0)} / ${num(f.commitIntervalsUntilAllCommitted, 0)} | ${num(f.commits, 0)} / ${f.commitIntervals} | ${num(f.failedCommits, 0)} | ${num(f.metricSeries, 0)} | ${f.duplicates} / ${f.missing} |`
    ),
    '',
  ]
  return lines.join('\n')
}
