import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Registry, type Metric } from 'prom-client'
import { MirrorMetrics } from '../../../../src/sidecar/metrics/mirror-metrics.js'
import { CHUNK_SAMPLES, metricText, type TextMetric } from '../../../../src/sidecar/metrics/prometheus-text.js'
import type { FlowLabels, FlowSnapshot, PartitionSnapshot } from '../../../../src/ports/pipeline-observer.js'

const NOW_MS = 1_800_000_000_000
// Label values that need every escape of the text formats.
const flow: FlowLabels = { flow: 'a"b\\c\nd', source: 'eu', target: 'us' }

function partition (topic: string, p: number, overrides: Partial<PartitionSnapshot> = {}): PartitionSnapshot {
  return {
    topic,
    partition: p,
    highWatermark: 100n,
    nextOffsetToMirror: 90n,
    committedOffset: 80n,
    oldestUnackedTimestampMs: NOW_MS - 1_500,
    lastProgressMs: NOW_MS,
    ...overrides,
  }
}

function metricsWithData (partitionLabels: boolean): MirrorMetrics {
  const partitions = [
    partition('orders', 0),
    partition('orders', 1, { highWatermark: -1n }),
    partition('pay.ments', 0, { committedOffset: -1n, oldestUnackedTimestampMs: undefined }),
  ]
  const snapshot: FlowSnapshot = {
    labels: flow,
    state: 'running',
    queueRecords: 7,
    queueBytes: 700,
    queueCapacityRecords: 1000,
    queueCapacityBytes: 1_048_576,
    sourceConnected: true,
    targetConnected: true,
    assignedPartitions: partitions.length,
    topicsMirrored: 2,
    partitions,
  }
  const metrics = new MirrorMetrics(() => [snapshot], { nowMs: () => NOW_MS, partitionLabels, defaultMetrics: true })
  metrics.consumed(flow, { topic: 'orders', partition: 0, records: 3, bytes: 300, timestampsMs: [NOW_MS - 2_000, NOW_MS - 1_000, -1], pollTimeMs: NOW_MS })
  metrics.produced(flow, {
    sourceTopic: 'orders',
    targetTopic: 'eu.orders',
    partition: 0,
    records: 2,
    bytes: 200,
    timestampsMs: [NOW_MS - 2_000, NOW_MS - 1_000],
    ackTimeMs: NOW_MS + 500,
    firstSourceOffset: 40n,
    lastSourceOffset: 41n,
    targetBaseOffset: 7n,
  })
  metrics.produceRequest(flow, 0.02, true)
  metrics.retry(flow, 'produce', 'NOT_LEADER_OR_FOLLOWER')
  metrics.batchRouted(flow, 'deep', 'offset_gaps', 500)
  metrics.sendFailed(flow, 'orders', 0, 'MESSAGE_TOO_LARGE')
  metrics.committed(flow, [{ topic: 'orders', partition: 0, offset: 42n, lagRecords: 58n }], NOW_MS - 10_000)
  metrics.transactionEnded(flow, 'committed', 0.004)
  return metrics
}

/** What prom-client itself writes for the registry: the reference (OpenMetrics as the sidecar served it before, through renamed views). */
async function promClientBody (metrics: MirrorMetrics, openMetrics: boolean): Promise<string> {
  if (!openMetrics) return await metrics.registry.metrics()
  const view = new (Registry as unknown as new (contentType: string) => Registry)(Registry.OPENMETRICS_CONTENT_TYPE)
  for (const metric of metrics.registry.getMetricsAsArray() as unknown as Array<{ name: string, help: string, type: string, get: () => Promise<object> }>) {
    const name = metric.type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name
    view.registerMetric({ name, help: metric.help, type: metric.type, get: async () => ({ ...await metric.get(), name }) } as unknown as Metric)
  }
  return await view.metrics()
}

/** Default metrics (CPU seconds, heap, event loop) change between two reads: compare everything else. */
function withoutProcessMetrics (body: string): string {
  return body.split('\n').filter(line => !/^(# (HELP|TYPE) )?(process_|nodejs_)/.test(line)).join('\n')
}

for (const openMetrics of [false, true]) {
  for (const partitionLabels of [true, false]) {
    test(
      `the exposition is what prom-client writes for the same registry (${openMetrics ? 'OpenMetrics' : 'text 0.0.4'}, partition labels ${String(partitionLabels)})`,
      async () => {
        const metrics = metricsWithData(partitionLabels)
        const ours = (await metrics.exposition(openMetrics)).body
        const reference = await promClientBody(metrics, openMetrics)
        assert.equal(withoutProcessMetrics(ours), withoutProcessMetrics(reference))
        assert.match(ours, /kafka_mirror_lag_records\{flow="a\\"b\\\\c\\nd"/)
        assert.equal(ours.endsWith(openMetrics ? '\n# EOF\n' : '\n'), true)
        // The process metrics are there too (formatted by prom-client).
        assert.match(ours, /^process_cpu_user_seconds_total(\{[^}]*\})? /m)
      }
    )
  }
}

test('metricText writes NaN, infinities, numeric label values and samples without labels as prom-client does', async () => {
  const metric: TextMetric = {
    name: 'm_total',
    help: 'a\\b\nc',
    type: 'counter',
    values: [
      { value: Number.NaN },
      { labels: { le: 0.5 }, value: Number.POSITIVE_INFINITY },
      { metricName: 'm_x', labels: { a: 'x' }, value: Number.NEGATIVE_INFINITY },
      { labels: {}, value: 3 },
    ],
  }
  const registry = new Registry()
  registry.registerMetric({ ...metric, get: async () => metric } as unknown as Metric)
  assert.equal(metricText(metric, false), await registry.getSingleMetricAsString('m_total'))
  const om = new (Registry as unknown as new (contentType: string) => Registry)(Registry.OPENMETRICS_CONTENT_TYPE)
  om.registerMetric({ ...metric, name: 'm', get: async () => ({ ...metric, name: 'm' }) } as unknown as Metric)
  assert.equal(metricText({ ...metric, name: 'm' }, true), await om.getSingleMetricAsString('m'))
})

test('the exposition written out in pieces is the same text, each piece at most CHUNK_SAMPLES lines, the content type first', async () => {
  const partitions = Array.from({ length: 1_200 }, (_, i) => partition(`t${i % 7}`, i))
  const snapshot: FlowSnapshot = {
    labels: flow,
    state: 'running',
    queueRecords: 0,
    queueBytes: 0,
    queueCapacityRecords: 1000,
    queueCapacityBytes: 1_048_576,
    sourceConnected: true,
    targetConnected: true,
    assignedPartitions: partitions.length,
    topicsMirrored: 7,
    partitions,
  }
  for (const openMetrics of [false, true]) {
    const metrics = new MirrorMetrics(() => [snapshot], { nowMs: () => NOW_MS, defaultMetrics: false })
    const whole = (await metrics.exposition(openMetrics)).body
    const events: string[] = []
    const pieces: string[] = []
    const streamed = await metrics.exposition(openMetrics, {
      start: contentType => { events.push(`start ${contentType}`) },
      write: chunk => { events.push('write'); pieces.push(chunk) },
    })
    assert.equal(streamed.body, '', 'nothing kept when written out')
    assert.equal(pieces.join(''), whole)
    assert.equal(events[0], `start ${streamed.contentType}`)
    assert.equal(events.filter(e => e.startsWith('start')).length, 1)
    const longest = Math.max(...pieces.map(piece => piece.split('\n').length))
    assert.ok(longest <= CHUNK_SAMPLES + 2, `a piece of ${longest} lines`)
    // 1,200 partitions: the per-partition gauges came in more than one piece each.
    assert.ok(pieces.length > 30, `${pieces.length} pieces`)
  }
})
