import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { stopChild, track, type TrackedChild } from './child-registry.js'
import type { Contender, MirrorJob } from './contenders.js'
import { preload, produceAtRate, type KcatProducerOptions, type RecordShape } from './kcat-producer.js'
import { UsageSampler } from './process-usage.js'
import { requireSettings, type SettingsCheck } from './settings-check.js'
import { deleteOwnTopics } from './throughput-run.js'
import type { TopicAdmin } from './topic-admin.js'

/** End-to-end latency of one contender at a fixed produce rate. */
export interface LatencyFigures {
  readonly contender: string
  readonly run: number
  readonly produced: number
  /** Distinct records of the fixed-rate phase the target consumer saw. */
  readonly received: number
  /** Further copies of records already received (a mirror's re-delivery). */
  readonly duplicates: number
  /** Receive time at the target consumer minus the record's (source CreateTime) timestamp, ms. */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** Mirror process CPU during the fixed-rate phase, and its peak RSS over the whole run. */
  readonly cpuSeconds: number
  readonly peakRssBytes: number
  /** A mirror's settings against what it printed as resolved (none for the direct producer). */
  readonly settings?: SettingsCheck
}

/**
 * The one consumer every contender is measured with: `kcat -C` on the target topic from the
 * beginning, printing each record's timestamp, unbuffered; receive time is taken when the line
 * arrives here.
 */
class LatencyConsumer {
  /** Latency of the first copy of each record of the measured phase. */
  readonly latenciesMs: number[] = []
  readonly #measuredKeys = new Set<string>()
  seen = 0
  duplicates = 0
  #process: TrackedChild | undefined
  #partial = ''

  /** `readCommitted`: for exactly-once contenders, whose records count once their transaction committed. */
  constructor (readonly bootstrap: string, readonly topic: string, readonly readCommitted = false) {}

  /** Only records stamped at or after this time (epoch ms) count towards the latencies. */
  measureFromMs = Number.POSITIVE_INFINITY

  start (): void {
    const isolation = this.readCommitted ? ['-X', 'isolation.level=read_committed'] : []
    const child = spawn('kcat', ['-C', '-b', this.bootstrap, '-t', this.topic, '-o', 'beginning', '-u', '-q', ...isolation, '-f', '%T %k\n'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    this.#process = track('kcat latency consumer', child)
    child.stdout.on('data', (chunk: Buffer) => {
      const now = Date.now()
      const lines = (this.#partial + chunk.toString('latin1')).split('\n')
      this.#partial = lines.pop() ?? ''
      for (const line of lines) {
        const space = line.indexOf(' ')
        const timestamp = Number(line.slice(0, space))
        if (space <= 0 || !Number.isFinite(timestamp)) continue
        this.seen++
        if (timestamp < this.measureFromMs) continue
        const key = line.slice(space + 1)
        if (this.#measuredKeys.has(key)) {
          this.duplicates++
          continue
        }
        this.#measuredKeys.add(key)
        this.latenciesMs.push(now - timestamp)
      }
    })
  }

  async stop (): Promise<void> {
    if (this.#process !== undefined) await stopChild(this.#process, 2_000)
  }
}

function percentile (sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN
}

async function waitFor (condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string, alive?: TrackedChild): Promise<void> {
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
 * connected and caught up), then records are produced into the source at a fixed rate while the
 * consumer on the target measures. `contender` undefined means no mirror: the producer writes to
 * the target directly (the latency floor of producer + broker + consumer), through the same
 * bootstrap the mirrors get (across the wide-area proxy when there is one).
 */
export async function runLatency (contender: Contender | undefined, job: MirrorJob, run: number, context: LatencyContext): Promise<LatencyFigures> {
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
    const cpuBefore = sampler?.sample()?.cpuSeconds ?? 0
    consumer.measureFromMs = Date.now()
    context.log(`    producing ${context.ratePerSecond} records/s for ${context.durationMs / 1000} s`)
    const { records } = await produceAtRate(
      { ...context.producer, bootstrap: produceTo, topic: job.topic, lingerMs: 5 },
      context.shape,
      context.ratePerSecond,
      context.durationMs,
      WARM_UP_RECORDS
    )
    await waitFor(
      () => consumer.latenciesMs.length >= records,
      120_000,
      `${name}: ${records} records at the target consumer (has ${consumer.latenciesMs.length})`,
      mirror
    ).catch((error: unknown) => {
      context.log(`    ${(error as Error).message}; reporting what arrived`)
    })
    const usage = sampler?.stop()
    if (mirror !== undefined) await stopChild(mirror)
    // A setting that did not take effect makes the comparison unfair: the run fails naming it.
    const settings = contender === undefined ? undefined : requireSettings(await contender.checkSettings(job))
    const sorted = Float64Array.from(consumer.latenciesMs).sort()
    const values = Array.from(sorted)
    return {
      contender: name,
      run,
      produced: records,
      received: values.length,
      duplicates: consumer.duplicates,
      p50Ms: percentile(values, 0.5),
      p99Ms: percentile(values, 0.99),
      maxMs: values.at(-1) ?? Number.NaN,
      cpuSeconds: usage === undefined ? Number.NaN : usage.cpuSeconds - cpuBefore,
      peakRssBytes: usage?.peakRssBytes ?? Number.NaN,
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
