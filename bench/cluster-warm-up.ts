import { LatencyConsumer } from './latency-consumer.js'
import { latencyWindows, percentile, type LatencyWindow } from './latency-windows.js'
import { waitFor } from './latency-run.js'
import { produceAtRate, type KcatProducerOptions, type RecordShape } from './kcat-producer.js'
import type { TopicAdmin } from './topic-admin.js'

/** One cluster the warm-up runs traffic through. */
export interface WarmUpCluster {
  readonly name: string
  readonly admin: TopicAdmin
  readonly bootstrap: string
}

export interface ClusterWarmUpOptions {
  readonly clusters: readonly WarmUpCluster[]
  /** A topic of that name is created on every cluster and deleted at the end. */
  readonly topic: string
  readonly partitions: number
  readonly shape: RecordShape
  readonly ratePerSecond: number
  readonly durationMs: number
  readonly producer: Omit<KcatProducerOptions, 'topic' | 'lingerMs' | 'bootstrap'>
  readonly log: (line: string) => void
}

/**
 * The highest per-window maximum of each `spanSeconds` stretch of `windows` (1 s windows), in
 * order: how the worst latency fell as the brokers warmed up.
 */
export function maxPerSpan (windows: readonly LatencyWindow[], spanSeconds: number): number[] {
  const spans: number[] = []
  for (const window of windows) {
    const index = Math.floor(window.startSeconds / spanSeconds)
    spans[index] = Math.max(spans[index] ?? 0, window.maxMs)
  }
  return Array.from(spans, max => max ?? Number.NaN)
}

/**
 * Traffic at the measured rate through every cluster at once, before the first measured
 * contender: a producer and a consumer per cluster on a throwaway topic, nothing measured. A
 * freshly started broker serves its first seconds of produce and fetch requests with its JIT
 * still compiling them, which shows as stalls of hundreds of milliseconds in whichever contender
 * comes first; after this the first contender meets brokers as warm as the last one does. Logs
 * the worst latency per 5 s on each cluster, so a run shows whether the warm-up was long enough.
 */
export async function warmUpClusters (options: ClusterWarmUpOptions): Promise<void> {
  const { clusters, topic, log } = options
  log(`cluster warm-up: ${options.ratePerSecond} records/s for ${options.durationMs / 1000} s into ${topic} on ${clusters.map(c => c.name).join(' and ')}`)
  const consumers = clusters.map(cluster => new LatencyConsumer(cluster.bootstrap, topic))
  try {
    for (const cluster of clusters) await cluster.admin.recreateTopic(topic, options.partitions)
    for (const consumer of consumers) {
      consumer.countFromRecord = 0
      consumer.start()
    }
    const sent = await Promise.all(clusters.map(async cluster => await produceAtRate(
      { ...options.producer, bootstrap: cluster.bootstrap, topic, lingerMs: 5 },
      options.shape,
      options.ratePerSecond,
      options.durationMs
    )))
    await waitFor(() => consumers.every((consumer, i) => consumer.counted >= sent[i]!.records), 60_000, 'the warm-up records on every cluster')
      .catch((error: unknown) => { log(`cluster warm-up: ${(error as Error).message}; going on`) })
    clusters.forEach((cluster, i) => {
      const { sentAtMs, latenciesMs } = consumers[i]!.phase(0)
      const spans = maxPerSpan(latencyWindows(sentAtMs, latenciesMs, sent[i]!.startedAtMs), 5)
      const p99 = percentile(latenciesMs.sort((a, b) => a - b), 0.99)
      log(`cluster warm-up ${cluster.name}: ${latenciesMs.length}/${sent[i]!.records} records, p99 ${p99} ms, worst per 5 s: ${spans.map(ms => `${ms} ms`).join(', ')}`)
    })
  } finally {
    for (const consumer of consumers) await consumer.stop()
    for (const cluster of clusters) await cluster.admin.deleteTopics([topic])
  }
}
