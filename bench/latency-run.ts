import { setTimeout as sleep } from 'node:timers/promises'
import { stopChild, type TrackedChild } from './child-registry.js'
import type { Contender, MirrorJob } from './contenders.js'
import { LatencyConsumer } from './latency-consumer.js'
import { preload, produceAtRate, type KcatProducerOptions, type RecordShape } from './kcat-producer.js'
import { UsageSampler, type ProcessUsage } from './process-usage.js'
import { metricSum, sidecarMetrics } from './sidecar-metrics.js'
import { describeWindows, latencyWindows, percentile, worstWindows, type LatencyWindow } from './latency-windows.js'
import { requireSettings, type SettingsCheck } from './settings-check.js'
import { deleteOwnTopics } from './throughput-run.js'
import type { TopicAdmin } from './topic-admin.js'

/** End-to-end latency of one contender at a fixed produce rate. */
export interface LatencyFigures {
  readonly contender: string
  readonly run: number
  /** Where in the run's order it was measured, 1 = first after the cluster warm-up (the direct producer counts). */
  readonly place: number
  readonly produced: number
  /** Distinct records of the measured phase the target consumer saw. */
  readonly received: number
  /** Further copies of records of the fixed-rate phases (warm-up and measured) already received (a mirror's re-delivery). */
  readonly duplicates: number
  /** Receive time at the target consumer minus the record's (source CreateTime) timestamp, ms. */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** Mirror process CPU during the measured phase, and its peak RSS over the whole run. */
  readonly cpuSeconds: number
  /** The part of `cpuSeconds` in the kernel (stime): system calls, and on loopback the receiving side of TCP. */
  readonly cpuSystemSeconds: number
  readonly peakRssBytes: number
  /**
   * The sidecar's requests per second in the measured phase, from its metrics: fetch requests the
   * source answered, produce requests to the target, source batches; NaN for other contenders.
   */
  readonly fetchesPerSecond: number
  readonly producesPerSecond: number
  readonly batchesPerSecond: number
  /** The 1-second windows of the measured phase (by send time) with the highest maximum latency, worst first. */
  readonly worstWindows: readonly LatencyWindow[]
  /** A mirror's settings against what it printed as resolved (none for the direct producer). */
  readonly settings?: SettingsCheck
}

/** Polls `condition` every 100 ms until it holds; throws after `timeoutMs`, or when `alive` exited first. */
export async function waitFor (condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string, alive?: TrackedChild): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await condition()) {
    if (alive?.hasExited() === true) throw new Error(`${alive.name} exited while waiting for ${what}`)
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`)
    await sleep(100)
  }
}

export interface LatencyContext {
  readonly sourceAdmin: TopicAdmin
  readonly targetAdmin: TopicAdmin
  readonly partitions: number
  readonly shape: RecordShape
  readonly ratePerSecond: number
  readonly durationMs: number
  /** At the rate on the measured topic, through the mirror, before the measured phase; not measured. */
  readonly warmUpMs: number
  readonly producer: Omit<KcatProducerOptions, 'topic' | 'lingerMs'>
  /**
   * Where the measuring consumer reads the target; default the job's target bootstrap. Across the
   * wide-area proxy it reads the broker directly, so only the way into the target is delayed.
   */
  readonly readBootstrap?: string
  readonly log: (line: string) => void
}

const WARM_UP_RECORDS = 200

/**
 * Fresh source and target topics; the mirror starts and copies a warm-up batch (so it is
 * connected and caught up), then records are produced into the source at a fixed rate: for
 * `warmUpMs` unmeasured (the fresh process and topic at the rate for the first time), then for
 * `durationMs` while the consumer on the target measures, without a gap between the two.
 * `contender` undefined means no mirror: the producer writes to the target directly (the latency
 * floor of producer + broker + consumer), through the same bootstrap the mirrors get (across the
 * wide-area proxy when there is one).
 */
export async function runLatency (
  contender: Contender | undefined,
  job: MirrorJob,
  at: { run: number, place: number },
  context: LatencyContext
): Promise<LatencyFigures> {
  const name = contender?.name ?? 'direct'
  await context.sourceAdmin.recreateTopic(job.topic, context.partitions)
  await context.targetAdmin.recreateTopic(job.topic, context.partitions)
  const consumer = new LatencyConsumer(context.readBootstrap ?? job.targetBootstrap, job.topic, contender?.exactlyOnce === true)
  const mirror = contender === undefined ? undefined : await contender.start(job)
  const sampler = mirror === undefined ? undefined : new UsageSampler(mirror.pid)
  const produceTo = contender === undefined ? job.targetBootstrap : job.sourceBootstrap
  try {
    sampler?.start()
    consumer.start()
    await preload({ ...context.producer, bootstrap: produceTo, topic: job.topic, lingerMs: 5 }, context.shape, WARM_UP_RECORDS)
    await waitFor(() => consumer.seen >= WARM_UP_RECORDS, 180_000, `${name}: warm-up records on the target`, mirror)
    consumer.countFromRecord = WARM_UP_RECORDS
    let usageBefore: ProcessUsage | undefined
    let requestsBefore: Promise<RequestCounts> | undefined
    let measuredFrom = { record: Number.POSITIVE_INFINITY, atMs: Number.NaN }
    context.log(`    producing ${context.ratePerSecond} records/s for ${context.warmUpMs / 1000} s (warm-up) + ${context.durationMs / 1000} s (measured)`)
    const { records } = await produceAtRate(
      { ...context.producer, bootstrap: produceTo, topic: job.topic, lingerMs: 5 },
      context.shape,
      context.ratePerSecond,
      context.durationMs,
      WARM_UP_RECORDS,
      {
        durationMs: context.warmUpMs,
        onMeasuredPhase: (record, atMs) => {
          usageBefore = sampler?.sample()
          requestsBefore = requestCounts(job.workDir)
          measuredFrom = { record, atMs }
        },
      }
    )
    const atRate = measuredFrom.record - WARM_UP_RECORDS + records
    await waitFor(
      () => consumer.counted >= atRate,
      120_000,
      `${name}: ${atRate} records at the target consumer`,
      mirror
    ).catch((error: unknown) => {
      // The count when waiting stopped (a message built before the wait would give the count at its start).
      context.log(`    ${(error as Error).message} (has ${consumer.counted}); reporting what arrived`)
    })
    const requestsAfter = await requestCounts(job.workDir)
    const usage = sampler?.stop()
    if (mirror !== undefined) await stopChild(mirror)
    const rates = requestRates(await requestsBefore, requestsAfter)
    // A setting that did not take effect makes the comparison unfair: the run fails naming it.
    const settings = contender === undefined ? undefined : requireSettings(await contender.checkSettings(job))
    const warmUp = consumer.phase(WARM_UP_RECORDS, measuredFrom.record)
    const measured = consumer.phase(measuredFrom.record)
    const values = Array.from(Float64Array.from(measured.latenciesMs).sort())
    if (context.warmUpMs > 0) {
      const warmUpWindows = latencyWindows(warmUp.sentAtMs, warmUp.latenciesMs, measuredFrom.atMs - context.warmUpMs)
      context.log(`    ${name}: warm-up, worst 1 s windows ${describeWindows(worstWindows(warmUpWindows))}`)
    }
    const worst = worstWindows(latencyWindows(measured.sentAtMs, measured.latenciesMs, measuredFrom.atMs))
    context.log(`    ${name}: measured, worst 1 s windows ${describeWindows(worst)}`)
    return {
      contender: name,
      run: at.run,
      place: at.place,
      produced: records,
      received: values.length,
      duplicates: consumer.duplicates,
      p50Ms: percentile(values, 0.5),
      p99Ms: percentile(values, 0.99),
      maxMs: values.at(-1) ?? Number.NaN,
      cpuSeconds: usage === undefined ? Number.NaN : usage.cpuSeconds - (usageBefore?.cpuSeconds ?? 0),
      cpuSystemSeconds: usage === undefined ? Number.NaN : usage.systemSeconds - (usageBefore?.systemSeconds ?? 0),
      ...rates,
      peakRssBytes: usage?.peakRssBytes ?? Number.NaN,
      worstWindows: worst,
      ...(settings === undefined ? {} : { settings }),
    }
  } finally {
    sampler?.stop()
    await consumer.stop()
    if (mirror !== undefined) await stopChild(mirror)
    if (contender !== undefined) await deleteOwnTopics(contender, job, context)
    await context.sourceAdmin.deleteTopics([job.topic])
    await context.targetAdmin.deleteTopics([job.topic])
  }
}

/** The sidecar's request counters at one moment (NaN each when it has no metrics: another contender, or none yet). */
interface RequestCounts {
  readonly atMs: number
  readonly fetches: number
  readonly produces: number
  readonly batches: number
}

async function requestCounts (workDir: string): Promise<RequestCounts> {
  const exposition = await sidecarMetrics(workDir)
  return {
    atMs: Date.now(),
    fetches: metricSum(exposition, 'kafka_mirror_fetch_requests_total'),
    produces: metricSum(exposition, 'kafka_mirror_produce_request_duration_seconds_count'),
    batches: metricSum(exposition, 'kafka_mirror_batches_total'),
  }
}

/** Per second between two readings of the counters; NaN where either lacks a figure. */
export function requestRates (
  before: RequestCounts | undefined,
  after: RequestCounts
): Pick<LatencyFigures, 'fetchesPerSecond' | 'producesPerSecond' | 'batchesPerSecond'> {
  const seconds = before === undefined ? Number.NaN : (after.atMs - before.atMs) / 1000
  const rate = (key: 'fetches' | 'produces' | 'batches'): number => (seconds > 0 && before !== undefined ? (after[key] - before[key]) / seconds : Number.NaN)
  return { fetchesPerSecond: rate('fetches'), producesPerSecond: rate('produces'), batchesPerSecond: rate('batches') }
}
