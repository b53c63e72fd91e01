import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { LocalCluster, type NodeCluster } from '../scripts/local-kafka/clusters.js'
import { cpuSecondsPerGb } from './cpu-per-gb.js'
import { metricSum, sidecarMetrics } from './sidecar-metrics.js'
import { byteRate, type ThroughputLimitFigures } from './throughput-limit.js'
import { stopChild } from './child-registry.js'
import type { Contender, MirrorJob } from './contenders.js'
import { readProcessUsage, UsageSampler } from './process-usage.js'
import { requireSettings, type SettingsCheck } from './settings-check.js'
import { longestPollGapSeconds, longestStall, type ProgressPoll } from './progress-stall.js'
import { restartNodesInTurn, type RollingRestart } from './rolling-restart.js'
import { countTargetRecords } from './target-count.js'
import { freezeTarget, type OutageFigures } from './target-outage.js'
import type { AdminCluster, TopicAdmin } from './topic-admin.js'

/** A cluster the benchmark copies from or to: single-node (`LocalCluster`) or several nodes (`NodeCluster`). */
export type BenchCluster = LocalCluster | NodeCluster

/** How often the benchmark polls the target's end offsets while a copy runs, ms. */
export const POLL_INTERVAL_MS = 100

/** What the restart of the target's nodes during one contender run did, in seconds. */
export interface RollingRestartFigures {
  /** Records on the target when the first node was stopped (the first poll at or past a third). */
  readonly atRecords: number
  /** Mirror start until the first node's stop. */
  readonly startedAfterSeconds: number
  /** First node's stop until the last node was back with every replica in sync: the restart window. */
  readonly windowSeconds: number
  /** Last node back until every record was on the target; negative when the copy completed within the window. */
  readonly lastBackToDoneSeconds: number
  /** The longest interval without progress on the target from the poll that started the restart until every record was there. */
  readonly restartStallSeconds: number
  /** The longest interval without progress on the target over the copy phase (`longestStall`). */
  readonly longestStallSeconds: number
  /** When that stall began, after the first node's stop (negative: before the restart). */
  readonly longestStallFromRestartSeconds: number
  /** The longest time between two polls of this run's copy phase: the stall's resolution. */
  readonly longestPollGapSeconds: number
  /** Per node: stop, gone, started, replicas in sync, seconds after the first node's stop. */
  readonly nodes: RollingRestart['nodes']
}

/** Figures of one contender copying the preloaded topic once. */
export interface ThroughputFigures {
  readonly contender: string
  readonly run: number
  readonly records: number
  /** Process start until the first record is on the target (JVM / node start, group join, first fetch). */
  readonly startupSeconds: number
  /** First record on the target until every record is there. */
  readonly copySeconds: number
  /** Process start until every record is on the target. */
  readonly totalSeconds: number
  /** records / copySeconds. */
  readonly recordsPerSecond: number
  /** Records per second between 10% and 90% of the records on the target: the steady rate. */
  readonly steadyRecordsPerSecond: number
  /** Key + value bytes / copySeconds, in MiB (2^20 bytes) per second like Kafka's tools. */
  readonly mbPerSecond: number
  /** utime + stime of the mirror process from its start until every record was on the target. */
  readonly cpuSeconds: number
  /** Of which during the copy phase. */
  readonly copyCpuSeconds: number
  /** VmHWM of the mirror process. */
  readonly peakRssBytes: number
  /** CPU the two brokers spent while this contender ran (start to done). */
  readonly brokerCpuSeconds: number
  /** `cpuSeconds` per GB (10^9 bytes of keys + values) copied. */
  readonly cpuSecondsPerGb: number
  /** `brokerCpuSeconds` per GB copied. */
  readonly brokerCpuSecondsPerGb: number
  /** Target records beyond one per source record (read back after the mirror stopped). */
  readonly duplicates: number
  /** Source keys not on the target after the mirror stopped (0 for a correct mirror; records, when every key is unique). */
  readonly missing: number
  /** With `--target-outage-seconds`: when the target was frozen and how long the catch-up took. */
  readonly outage?: OutageFigures
  /** The rolling-restart scenario: the restart window, the longest stall and the catch-up. */
  readonly rollingRestart?: RollingRestartFigures
  /** A sidecar run with `--throughput.limit.bytes`: the fetched rate against the limit. */
  readonly throughputLimit?: ThroughputLimitFigures
  /** Every setting the bench passed, against what the contender printed as resolved (none differed: a run with a mismatch fails). */
  readonly settings?: SettingsCheck
}

export interface ThroughputContext {
  readonly source: BenchCluster
  readonly target: BenchCluster
  readonly targetAdmin: TopicAdmin<AdminCluster>
  readonly sourceAdmin: TopicAdmin<AdminCluster>
  /** Records a complete copy puts on the target (the preload, or what compaction left of it). */
  readonly records: number
  /** Distinct keys among them (every record has its own key except on a compacted source). */
  readonly distinctKeys: number
  readonly recordBytes: number
  readonly partitions: number
  readonly timeoutMs: number
  /** Read the target back after the copy (duplicates / missing); NaN figures when false. */
  readonly verify: boolean
  /** Freeze the target broker for this many seconds once half of the records are on it (0 or absent: no outage). */
  readonly targetOutageSeconds?: number
  /** Restart the target's nodes one by one once a third of the records are on it (a `NodeCluster` target only). */
  readonly rollingRestart?: boolean
  /** The sidecar's `--throughput.limit.bytes`: its /metrics are read at 10 % and 90 % and at the end (sidecar contenders only). */
  readonly throughputLimitBytes?: number
  readonly log: (line: string) => void
}

/** CPU seconds of every broker process of `clusters`, each since its process started. */
async function brokerCpu (clusters: readonly BenchCluster[]): Promise<number> {
  let total = 0
  for (const broker of clusters.flatMap<{ pid: () => Promise<number | undefined> }>(cluster =>
    cluster instanceof LocalCluster ? [cluster] : [...cluster.nodes]
  )) {
    const pid = await broker.pid()
    if (pid !== undefined) total += readProcessUsage(pid)?.cpuSeconds ?? 0
  }
  return total
}

async function logTail (file: string, lines = 15): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return '(no log)'
  }
}

/** The sidecar's `kafka_mirror_consumed_bytes_total` now (NaN when its /metrics do not answer), and when it was read. */
async function fetchedBytes (workDir: string): Promise<{ atMs: number, bytes: number }> {
  const bytes = metricSum(await sidecarMetrics(workDir), 'kafka_mirror_consumed_bytes_total')
  return { atMs: performance.now(), bytes }
}

/** Deletes the topics a contender made for itself (MM2 internal topics). */
export async function deleteOwnTopics (contender: Contender, job: MirrorJob, context: Pick<ThroughputContext, 'sourceAdmin' | 'targetAdmin'>): Promise<void> {
  const own = contender.ownTopics(job, { source: await context.sourceAdmin.listTopics(), target: await context.targetAdmin.listTopics() })
  await context.sourceAdmin.deleteTopics(own.source)
  await context.targetAdmin.deleteTopics(own.target)
}

/**
 * Copies `job.topic` (already preloaded with `records`) into a freshly created, empty target topic
 * of the same name and measures until the target's end offsets add up to `records`; then stops the
 * mirror and reads the target back to count duplicates and missing records.
 */
export async function runThroughput (contender: Contender, job: MirrorJob, run: number, context: ThroughputContext): Promise<ThroughputFigures> {
  await context.targetAdmin.recreateTopic(job.topic, context.partitions)
  const brokers = [context.source, context.target]
  const brokerCpuBefore = await brokerCpu(brokers)
  const startedAt = performance.now()
  const mirror = await contender.start(job)
  const sampler = new UsageSampler(mirror.pid)
  sampler.start()
  let firstAt: number | undefined
  let cpuAtFirst = 0
  let tenPercent: { at: number, copied: number } | undefined
  let ninetyPercent: { at: number, copied: number } | undefined
  /** Exactly-once contenders: when the stable end offsets first reached each value (they count transaction markers too). */
  const reached: Array<{ at: number, copied: number }> = []
  let doneAt: number | undefined
  const outageSeconds = context.targetOutageSeconds ?? 0
  let outage: { atRecords: number, frozenAt: number, resumedAt: number } | undefined
  let pollFailed = false
  const restartTarget = context.rollingRestart === true ? context.target : undefined
  if (restartTarget !== undefined && restartTarget instanceof LocalCluster) throw new Error('the rolling restart needs a target of several nodes (NodeCluster)')
  const outageTarget = outageSeconds > 0 ? singleNode(context.target) : undefined
  /** Every successful poll, for the longest stall. */
  const polls: ProgressPoll[] = []
  let restart: PendingRestart | undefined
  /** With a throughput limit: the sidecar's fetched bytes at the 10 % and 90 % polls. */
  const limit: { atTen?: { atMs: number, bytes: number }, atNinety?: { atMs: number, bytes: number } } | undefined =
    context.throughputLimitBytes === undefined ? undefined : {}
  try {
    for (;;) {
      let copied: number
      try {
        copied = await context.targetAdmin.endOffsetTotal(job.topic)
      } catch (error) {
        // A broker answers NOT_LEADER for a moment after an outage (the controller fenced it while frozen): poll again until the timeout.
        if (performance.now() - startedAt > context.timeoutMs) throw error
        if (!pollFailed) context.log(`${contender.name}: reading the target's end offsets failed (${(error as Error).message}); polling again`)
        pollFailed = true
        await sleep(100)
        continue
      }
      const now = performance.now()
      polls.push({ atMs: now, records: copied })
      if (restart?.error !== undefined) throw restart.error
      if (contender.exactlyOnce === true) {
        if (reached.length === 0 || copied > (reached[reached.length - 1] as { copied: number }).copied) reached.push({ at: now, copied })
        // End offsets count markers: done is when a read_committed reader sees every record; the time is when the offsets first stood where they stood then.
        if (copied >= context.records && (await countTargetRecords(context.target.bootstrap, job.topic, true)).records >= context.records) {
          doneAt = reached.find(r => r.copied >= copied)?.at ?? now
          break
        }
      }
      if (copied > 0 && firstAt === undefined) {
        firstAt = now
        cpuAtFirst = sampler.sample()?.cpuSeconds ?? 0
      }
      if (tenPercent === undefined && copied >= context.records * 0.1) {
        tenPercent = { at: now, copied }
        if (limit !== undefined) limit.atTen = await fetchedBytes(job.workDir)
      }
      if (ninetyPercent === undefined && copied >= context.records * 0.9) {
        ninetyPercent = { at: now, copied }
        if (limit !== undefined) limit.atNinety = await fetchedBytes(job.workDir)
      }
      if (outageTarget !== undefined && outage === undefined && copied >= context.records / 2) {
        // The first poll at or past half: a copy already complete got no outage in the middle, and does not count.
        if (copied >= context.records) {
          throw new Error(
            `${contender.label} copied all ${context.records} records before the target outage could start (the first poll past half saw ${copied}); use more --records`
          )
        }
        const frozenAt = performance.now()
        context.log(`${contender.name}: ${copied} of ${context.records} records on the target; freezing the target broker for ${outageSeconds} s`)
        await freezeTarget(outageTarget, outageSeconds, () => mirror.hasExited())
        outage = { atRecords: copied, frozenAt, resumedAt: performance.now() }
        context.log(`${contender.name}: target broker running again`)
        continue
      }
      if (restartTarget !== undefined && restart === undefined && copied >= context.records / 3) {
        // The first poll at or past a third: a copy already complete got no restart in the middle, and does not count.
        if (copied >= context.records) {
          throw new Error(
            `${contender.label} copied all ${context.records} records before the rolling restart could start (the first poll past a third saw ${copied}); use more --records`
          )
        }
        context.log(`${contender.name}: ${copied} of ${context.records} records on the target; restarting the target's nodes one by one`)
        const started = { atRecords: copied, done: restartNodesInTurn(restartTarget, context.log, () => mirror.hasExited()) } as PendingRestart
        // Read at every poll: a failed restart ends the run with its error.
        started.done.catch((error: unknown) => { started.error = error ?? new Error('rolling restart failed') })
        restart = started
      }
      if (copied >= context.records && contender.exactlyOnce !== true) break
      if (mirror.hasExited()) {
        throw new Error(`${contender.label} exited after copying ${copied} of ${context.records} records; log ${job.workDir}:\n${await logTail(join(job.workDir, contender.logFile))}`)
      }
      if (now - startedAt > context.timeoutMs) {
        throw new Error(
          `${contender.label} copied ${copied} of ${context.records} records in ${Math.round(context.timeoutMs / 1000)} s; giving up (see ${job.workDir})`
        )
      }
      // Close to half (to a third for the restart), poll often: a fast copy must not pass it between two polls.
      const nearOutage = outageSeconds > 0 && outage === undefined && copied >= context.records * 0.3
      const nearRestart = restartTarget !== undefined && restart === undefined && copied >= context.records * 0.25
      await sleep(nearOutage || nearRestart ? 5 : POLL_INTERVAL_MS)
    }
    doneAt ??= performance.now()
    const exposition = await sidecarMetrics(job.workDir)
    const throttledSeconds = limit === undefined ? Number.NaN : metricSum(exposition, 'kafka_mirror_throttled_seconds_total')
    if (exposition !== undefined) {
      const count = (name: string): number => metricSum(exposition, name)
      context.log(
        `${contender.label}: ${count('kafka_mirror_fetch_requests_total')} fetch requests, ` +
        `${count('kafka_mirror_produce_request_duration_seconds_count')} produce requests, ${count('kafka_mirror_batches_total')} batches`
      )
    }
    if (restartTarget !== undefined && restart === undefined) {
      throw new Error(`${contender.label} copied all ${context.records} records before the rolling restart could start; use more --records`)
    }
    if (outageSeconds > 0 && outage === undefined) {
      throw new Error(`${contender.label} copied all ${context.records} records before the target outage could start; use more --records`)
    }
    const usage = sampler.stop()
    // A restarted node's CPU before its restart went with its process: no broker CPU for those runs.
    const brokerCpuSeconds = restart === undefined ? await brokerCpu(brokers) - brokerCpuBefore : Number.NaN
    // The next contender starts on a whole cluster, and what the mirror writes until the restart ends is read back with the rest.
    const restarted = restart === undefined ? undefined : await restart.done
    const first = firstAt ?? doneAt
    const copySeconds = Math.max((doneAt - first) / 1000, 0.001)
    await stopChild(mirror)
    // A setting that did not take effect makes the comparison unfair: the run fails naming it.
    const settings = requireSettings(await contender.checkSettings(job))
    // Read back directly, not through a wide-area proxy the mirror may have been given.
    const onTarget = context.verify
      ? await countTargetRecords(context.target.bootstrap, job.topic, contender.exactlyOnce === true)
      : { records: Number.NaN, distinctKeys: Number.NaN }
    return {
      contender: contender.name,
      run,
      records: context.records,
      startupSeconds: (first - startedAt) / 1000,
      copySeconds,
      totalSeconds: (doneAt - startedAt) / 1000,
      recordsPerSecond: context.records / copySeconds,
      steadyRecordsPerSecond:
        tenPercent !== undefined && ninetyPercent !== undefined && ninetyPercent.at > tenPercent.at
          ? (ninetyPercent.copied - tenPercent.copied) / ((ninetyPercent.at - tenPercent.at) / 1000)
          : Number.NaN,
      mbPerSecond: (context.records * context.recordBytes) / 2 ** 20 / copySeconds,
      cpuSeconds: usage?.cpuSeconds ?? Number.NaN,
      copyCpuSeconds: (usage?.cpuSeconds ?? Number.NaN) - cpuAtFirst,
      peakRssBytes: usage?.peakRssBytes ?? Number.NaN,
      brokerCpuSeconds,
      cpuSecondsPerGb: cpuSecondsPerGb(usage?.cpuSeconds ?? Number.NaN, context.records, context.recordBytes),
      brokerCpuSecondsPerGb: cpuSecondsPerGb(brokerCpuSeconds, context.records, context.recordBytes),
      // Extra copies beyond the source's own repeats of a key, and source keys absent from the target.
      duplicates: onTarget.records - onTarget.distinctKeys - (context.records - context.distinctKeys),
      missing: context.distinctKeys - onTarget.distinctKeys,
      ...(limit === undefined || context.throughputLimitBytes === undefined
        ? {}
        : {
            throughputLimit: {
              limitBytesPerSecond: context.throughputLimitBytes,
              fetchedBytesPerSecond: byteRate(limit.atTen, limit.atNinety),
              throttledSeconds,
            },
          }),
      ...(restart === undefined || restarted === undefined
        ? {}
        : {
            rollingRestart: restartFigures(
              restart.atRecords,
              restarted,
              polls.filter(poll => poll.atMs <= doneAt!),
              startedAt,
              doneAt
            ),
          }),
      settings,
      ...(outage === undefined
        ? {}
        : {
            outage: {
              seconds: (outage.resumedAt - outage.frozenAt) / 1000,
              atRecords: outage.atRecords,
              frozenAtSeconds: (outage.frozenAt - startedAt) / 1000,
              resumedToDoneSeconds: (doneAt - outage.resumedAt) / 1000,
            },
          }),
    }
  } finally {
    sampler.stop()
    await stopChild(mirror)
    // A run that failed mid-restart still leaves the target whole for the next one.
    await restart?.done.catch((error: unknown) => { context.log(`${contender.name}: rolling restart failed: ${(error as Error).message}`) })
    await deleteOwnTopics(contender, job, context)
  }
}

/** A rolling restart under way beside the polls; `error` is set once it failed. */
interface PendingRestart {
  readonly atRecords: number
  readonly done: Promise<RollingRestart>
  error?: unknown
}

function singleNode (cluster: BenchCluster): LocalCluster {
  if (!(cluster instanceof LocalCluster)) throw new Error('--target-outage-seconds freezes a single-node target; this scenario runs on several nodes')
  return cluster
}

/** The restart's figures of one run from its timeline and the polls up to the last record on the target. */
export function restartFigures (
  atRecords: number,
  restart: RollingRestart,
  polls: readonly ProgressPoll[],
  startedAtMs: number,
  doneAtMs: number
): RollingRestartFigures {
  const stall = longestStall(polls)
  // From the last poll before the first stop (the one that started the restart): a stall the restart caused counts from there.
  const before = polls.filter(poll => poll.atMs < restart.startedAtMs).at(-1)
  const restartStall = longestStall([...(before === undefined ? [] : [before]), ...polls.filter(poll => poll.atMs >= restart.startedAtMs)])
  return {
    atRecords,
    startedAfterSeconds: (restart.startedAtMs - startedAtMs) / 1000,
    windowSeconds: (restart.endedAtMs - restart.startedAtMs) / 1000,
    lastBackToDoneSeconds: (doneAtMs - restart.endedAtMs) / 1000,
    restartStallSeconds: restartStall?.seconds ?? Number.NaN,
    longestStallSeconds: stall?.seconds ?? Number.NaN,
    longestStallFromRestartSeconds: stall === undefined ? Number.NaN : (stall.fromMs - restart.startedAtMs) / 1000,
    longestPollGapSeconds: longestPollGapSeconds(polls.filter(poll => poll.records > 0)),
    nodes: restart.nodes,
  }
}

/** A contender run that did not complete (the mirror exited, e.g. out of heap, or timed out); the other runs go on. */
export interface ContenderFailure {
  readonly contender: string
  readonly run: number
  /** One line for the tables, e.g. `JavaScript heap out of memory`. */
  readonly reason: string
  /** The whole error, with the mirror's log tail. */
  readonly message: string
}
