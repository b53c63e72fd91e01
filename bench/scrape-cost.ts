import { performance } from 'node:perf_hooks'
import { MirrorMetrics } from '../src/sidecar/metrics/mirror-metrics.js'
import type { FlowLabels, FlowSnapshot, PartitionSnapshot } from '../src/ports/pipeline-observer.js'

/**
 * What one /metrics scrape costs at scale, without brokers: a `MirrorMetrics` of one flow with
 * `topics` x `partitions` partitions (every one committed, so each has a status window), scraped
 * `scrapes` times. Prints the series count, the time per scrape and the process's peak RSS before and after it.
 * `node --expose-gc dist/bench/scrape-cost.js [topics 1250] [partitions 8] [scrapes 5] [openmetrics]`
 */
const [topics = 1250, partitions = 8, scrapes = 5] = process.argv.slice(2, 5).map(Number)
const openMetrics = process.argv[5] === 'openmetrics'
const flow: FlowLabels = { flow: 'source->target', source: 'source', target: 'target' }
const parts: PartitionSnapshot[] = []
for (let t = 0; t < topics; t++) {
  for (let p = 0; p < partitions; p++) {
    parts.push({
      topic: `bench-scale-abcdef-${t}`,
      partition: p,
      highWatermark: 10n,
      nextOffsetToMirror: 10n,
      committedOffset: 10n,
      oldestUnackedTimestampMs: undefined,
      lastProgressMs: Date.now(),
    })
  }
}
const snapshot: FlowSnapshot = {
  labels: flow,
  state: 'running',
  queueRecords: 0,
  queueBytes: 0,
  queueCapacityRecords: 1000,
  queueCapacityBytes: 1 << 20,
  sourceConnected: true,
  targetConnected: true,
  assignedPartitions: parts.length,
  topicsMirrored: topics,
  partitions: parts,
}
const metrics = new MirrorMetrics(() => [snapshot])
for (const p of parts) {
  metrics.consumed(flow, { topic: p.topic, partition: p.partition, records: 10, bytes: 1160, timestampsMs: [Date.now()], pollTimeMs: Date.now() })
  metrics.produced(flow, {
    sourceTopic: p.topic,
    targetTopic: p.topic,
    partition: p.partition,
    records: 10,
    bytes: 1160,
    timestampsMs: [Date.now()],
    ackTimeMs: Date.now(),
    firstSourceOffset: 0n,
    lastSourceOffset: 9n,
    targetBaseOffset: 0n,
  })
}
metrics.committed(flow, parts.map(p => ({ topic: p.topic, partition: p.partition, offset: 10n, lagRecords: 0n })), Date.now())
const gc = (globalThis as { gc?: () => void }).gc
for (let i = 0; i < scrapes; i++) {
  gc?.()
  const maxRssBefore = process.resourceUsage().maxRSS
  const started = performance.now()
  const body = (await metrics.exposition(openMetrics)).body
  const ms = performance.now() - started
  const series = body.split('\n').filter(line => line !== '' && !line.startsWith('#')).length
  console.log(`scrape ${i + 1}: ${series} series, ${(body.length / 2 ** 20).toFixed(1)} MiB body, ${ms.toFixed(0)} ms, peak RSS ${(maxRssBefore / 1024).toFixed(0)} -> ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`)
}
