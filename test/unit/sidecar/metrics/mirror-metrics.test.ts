import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OffsetsMetrics } from '../../../../src/sidecar/metrics/offsets-metrics.js'
import { DigestMetrics } from '../../../../src/sidecar/metrics/digest-metrics.js'
import { LossMetrics } from '../../../../src/sidecar/metrics/loss-metrics.js'
import { registerRetentionMetrics } from '../../../../src/sidecar/metrics/retention-metrics.js'
import { MirrorMetrics } from '../../../../src/sidecar/metrics/mirror-metrics.js'
import { allSeriesNames, Metrics } from '../../../../src/sidecar/metrics/metric-names.js'
import type { FlowConfig } from '../../../../src/config/mirror-config.js'
import type { FlowLabels, FlowSnapshot, PartitionSnapshot } from '../../../../src/ports/pipeline-observer.js'
import { promtool } from '../../../helpers/prometheus.js'

const NOW_MS = 1_800_000_000_000
const flow: FlowLabels = { flow: 'eu->us', source: 'eu', target: 'us' }

function partition (overrides: Partial<PartitionSnapshot> = {}): PartitionSnapshot {
  return {
    topic: 'orders',
    partition: 0,
    highWatermark: 100n,
    nextOffsetToMirror: 100n,
    committedOffset: 100n,
    oldestUnackedTimestampMs: undefined,
    lastProgressMs: NOW_MS,
    ...overrides,
  }
}

function snapshot (partitions: PartitionSnapshot[], overrides: Partial<FlowSnapshot> = {}): FlowSnapshot {
  return {
    labels: flow,
    state: 'running',
    queueRecords: 7,
    queueBytes: 700,
    queueCapacityRecords: 1000,
    queueCapacityBytes: 1_048_576,
    sourceConnected: true,
    targetConnected: true,
    assignedPartitions: partitions.length,
    topicsMirrored: 1,
    partitions,
    ...overrides,
  }
}

/** Parses Prometheus text format into `name{labels}` -> value, with labels in exposition order. */
function samples (body: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

function feed (metrics: MirrorMetrics): void {
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
  metrics.produceRequest(flow, 3, false)
  metrics.retry(flow, 'produce', 'NOT_LEADER_OR_FOLLOWER')
  metrics.batchRouted(flow, 'pass_through', undefined, 1000)
  metrics.batchRouted(flow, 'deep', 'offset_gaps', 500)
  metrics.topicConfigsSynced(flow, 2)
  metrics.topicAclsSynced(flow, 1)
  metrics.sendFailed(flow, 'orders', 0, 'MESSAGE_TOO_LARGE')
  metrics.corruptBatch(flow, 'orders', 0)
  metrics.committed(flow, [{ topic: 'orders', partition: 0, offset: 42n, lagRecords: 58n }], NOW_MS - 10_000)
  metrics.commitFailed(flow, 'coordinator moved')
  metrics.rebalanced(flow)
  metrics.transactionEnded(flow, 'committed', 0.004)
  metrics.transactionEnded(flow, 'aborted', 0)
}

const L = 'flow="eu->us",source="eu",target="us"'
/** The configured flow `flow` (what `MirrorSidecar` passes from the config). */
const configured = { name: 'eu->us', source: { alias: 'eu' }, target: { alias: 'us' }, offsetCommitIntervalMs: 5_000 } as unknown as FlowConfig

test('observer calls and the snapshot become the documented series', async () => {
  const metrics = new MirrorMetrics(() => [snapshot([
    partition({ highWatermark: 100n, nextOffsetToMirror: 42n, committedOffset: 42n, oldestUnackedTimestampMs: NOW_MS - 90_000 }),
    partition({ partition: 1, highWatermark: 10n, nextOffsetToMirror: 10n, committedOffset: -1n }),
  ])], { nowMs: () => NOW_MS, version: '9.9.9' })
  feed(metrics)
  const values = samples((await metrics.exposition()).body)
  const expected: Array<[string, number]> = [
    [`kafka_mirror_consumed_records_total{${L},topic="orders"}`, 3],
    [`kafka_mirror_consumed_bytes_total{${L},topic="orders"}`, 300],
    [`kafka_mirror_produced_records_total{${L},topic="orders"}`, 2],
    [`kafka_mirror_produced_bytes_total{${L},topic="orders"}`, 200],
    [`kafka_mirror_record_age_at_poll_seconds_count{${L}}`, 2],
    [`kafka_mirror_record_age_at_poll_seconds_sum{${L}}`, 3],
    [`kafka_mirror_replication_latency_seconds_bucket{${L},le="1"}`, 0],
    [`kafka_mirror_replication_latency_seconds_bucket{${L},le="2.5"}`, 2],
    [`kafka_mirror_replication_latency_seconds_sum{${L}}`, 4],
    [`kafka_mirror_produce_request_duration_seconds_count{${L},result="ok"}`, 1],
    [`kafka_mirror_produce_request_duration_seconds_count{${L},result="error"}`, 1],
    [`kafka_mirror_retries_total{${L},operation="produce",error_code="NOT_LEADER_OR_FOLLOWER"}`, 1],
    [`kafka_mirror_batches_total{${L},path="pass_through",reason=""}`, 1],
    [`kafka_mirror_batches_total{${L},path="deep",reason="offset_gaps"}`, 1],
    [`kafka_mirror_batch_bytes_total{${L},path="pass_through"}`, 1000],
    [`kafka_mirror_batch_bytes_total{${L},path="deep"}`, 500],
    [`kafka_mirror_topic_configs_synced_total{${L}}`, 2],
    [`kafka_mirror_topic_acls_synced_total{${L}}`, 1],
    [`kafka_mirror_send_failures_total{${L},topic="orders"}`, 1],
    [`kafka_mirror_commits_total{${L},result="ok"}`, 1],
    [`kafka_mirror_commits_total{${L},result="error"}`, 1],
    [`kafka_mirror_last_commit_timestamp_seconds{${L}}`, (NOW_MS - 10_000) / 1000],
    [`kafka_mirror_rebalances_total{${L}}`, 1],
    [`kafka_mirror_queue_records{${L}}`, 7],
    [`kafka_mirror_queue_bytes{${L}}`, 700],
    [`kafka_mirror_queue_capacity_records{${L}}`, 1000],
    [`kafka_mirror_queue_capacity_bytes{${L}}`, 1_048_576],
    [`kafka_mirror_assigned_partitions{${L}}`, 2],
    [`kafka_mirror_mirrored_topics{${L}}`, 1],
    [`kafka_mirror_flow_running{${L}}`, 1],
    [`kafka_mirror_lag_records{${L},topic="orders",partition="0"}`, 58],
    [`kafka_mirror_lag_records{${L},topic="orders",partition="1"}`, 0],
    [`kafka_mirror_lag_seconds{${L},topic="orders",partition="0"}`, 90],
    [`kafka_mirror_lag_seconds{${L},topic="orders",partition="1"}`, 0],
    [`kafka_mirror_committed_offset{${L},topic="orders",partition="0"}`, 42],
    [`kafka_mirror_partition_status{${L},topic="orders",partition="0",status="ok"}`, 1],
    [`kafka_mirror_partition_status{${L},topic="orders",partition="0",status="stall"}`, 0],
    [`kafka_mirror_build_info{version="9.9.9",node_version="${process.version}"}`, 1],
  ]
  for (const [series, value] of expected) assert.equal(values.get(series), value, series)
  assert.equal(values.has(`kafka_mirror_committed_offset{${L},topic="orders",partition="1"}`), false, 'no committed offset before the first commit')
  assert.ok([...values.keys()].some(series => series.startsWith('nodejs_eventloop_lag_seconds')), 'prom-client default metrics in the same registry')
})

test('the transcoder gauges show busy slots and waiting batches per flow, and only for flows that transcode', async () => {
  const other: FlowLabels = { flow: 'eu->ap', source: 'eu', target: 'ap' }
  const metrics = new MirrorMetrics(
    () => [snapshot([partition()], { transcoder: { busySlots: 4, waitingBatches: 11 } }), snapshot([partition()], { labels: other })],
    { defaultMetrics: false }
  )
  const values = samples((await metrics.exposition()).body)
  assert.equal(values.get(`kafka_mirror_transcoder_busy_slots{${L}}`), 4)
  assert.equal(values.get(`kafka_mirror_transcoder_waiting_batches{${L}}`), 11)
  const series = [...values.keys()]
  const otherFlow = series.filter(name => name.startsWith('kafka_mirror_transcoder_') && name.includes('eu->ap'))
  assert.deepEqual(otherFlow, [], 'no transcoder series for a flow without one')
  assert.ok(series.some(name => name.startsWith('kafka_mirror_queue_records{flow="eu->ap"')), 'the other flow is exported')
})

test('the producer lane gauges give the lanes of a flow and those writing now', async () => {
  const metrics = new MirrorMetrics(() => [snapshot([partition()], { producerLanes: { total: 8, writing: 4 } })], { defaultMetrics: false })
  const values = samples((await metrics.exposition()).body)
  assert.equal(values.get(`kafka_mirror_producer_lanes{${L}}`), 8)
  assert.equal(values.get(`kafka_mirror_producer_lanes_writing{${L}}`), 4)
})

test('partition status follows the commits: stall when the offset does not move while lagging', async () => {
  let nowMs = NOW_MS
  const metrics = new MirrorMetrics(() => [snapshot([partition({ highWatermark: 500n, nextOffsetToMirror: 100n, committedOffset: 100n })])], {
    nowMs: () => nowMs,
    defaultMetrics: false,
  })
  for (let i = 0; i < 3; i++) metrics.committed(flow, [{ topic: 'orders', partition: 0, offset: 100n, lagRecords: 400n }], NOW_MS + i * 5_000)
  nowMs = NOW_MS + 11_000
  const values = samples((await metrics.exposition()).body)
  const status = (name: string): number | undefined => values.get(`kafka_mirror_partition_status{${L},topic="orders",partition="0",status="${name}"}`)
  assert.equal(status('stall'), 1)
  assert.equal(status('ok'), 0)
  nowMs = NOW_MS + 30_000
  const later = samples((await metrics.exposition()).body)
  assert.equal(later.get(`kafka_mirror_partition_status{${L},topic="orders",partition="0",status="stop"}`), 1, 'no commit for longer than the window spans')
})

test('lag in seconds keeps its last value while lagging with nothing fetched, and is 0 once caught up', async () => {
  let current = partition({ highWatermark: 50n, nextOffsetToMirror: 40n, oldestUnackedTimestampMs: NOW_MS - 5_000 })
  const metrics = new MirrorMetrics(() => [snapshot([current])], { nowMs: () => NOW_MS, defaultMetrics: false })
  const lagSeconds = async (): Promise<number | undefined> =>
    samples((await metrics.exposition()).body).get(`kafka_mirror_lag_seconds{${L},topic="orders",partition="0"}`)
  assert.equal(await lagSeconds(), 5)
  current = partition({ highWatermark: 60n, nextOffsetToMirror: 50n, oldestUnackedTimestampMs: undefined })
  assert.equal(await lagSeconds(), 5)
  current = partition({ highWatermark: 60n, nextOffsetToMirror: 60n, oldestUnackedTimestampMs: undefined })
  assert.equal(await lagSeconds(), 0)
})

test('revoked partitions disappear from the per-partition series', async () => {
  let partitions = [partition(), partition({ partition: 1 })]
  const metrics = new MirrorMetrics(() => [snapshot(partitions)], { defaultMetrics: false })
  assert.ok((await metrics.exposition()).body.includes('partition="1"'))
  partitions = [partition()]
  assert.equal((await metrics.exposition()).body.includes('partition="1"'), false)
})

test(
  'record age and replication latency count every record of a run of equal timestamps (a forwarded batch) as the same timestamps one by one would',
  async () => {
    const histogramLines = (body: string): string[] =>
      body.split('\n').filter(line => /^kafka_mirror_(record_age_at_poll|replication_latency)_seconds_(bucket|sum|count)/.test(line))
    const timestamps = [NOW_MS - 2_000, NOW_MS - 2_000, NOW_MS - 2_000, -1, -1, NOW_MS - 30, NOW_MS - 2_000, NOW_MS - 2_000]
    const byRun = new MirrorMetrics(() => [], { defaultMetrics: false })
    const oneByOne = new MirrorMetrics(() => [], { defaultMetrics: false })
    byRun.consumed(flow, { topic: 'orders', partition: 0, records: timestamps.length, bytes: 800, timestampsMs: timestamps, pollTimeMs: NOW_MS })
    byRun.produced(flow, {
      sourceTopic: 'orders',
      targetTopic: 'orders',
      partition: 0,
      records: timestamps.length,
      bytes: 800,
      timestampsMs: timestamps,
      ackTimeMs: NOW_MS + 5,
      firstSourceOffset: 0n,
      lastSourceOffset: 7n,
      targetBaseOffset: 0n,
    })
    for (const timestampMs of timestamps) {
      oneByOne.consumed(flow, { topic: 'orders', partition: 0, records: 1, bytes: 100, timestampsMs: [timestampMs], pollTimeMs: NOW_MS })
      oneByOne.produced(flow, {
        sourceTopic: 'orders',
        targetTopic: 'orders',
        partition: 0,
        records: 1,
        bytes: 100,
        timestampsMs: [timestampMs],
        ackTimeMs: NOW_MS + 5,
        firstSourceOffset: 0n,
        lastSourceOffset: 0n,
        targetBaseOffset: 0n,
      })
    }
    const expected = histogramLines((await oneByOne.exposition()).body)
    assert.ok(expected.some(line => /^kafka_mirror_replication_latency_seconds_count\{[^}]*\} 6$/.test(line)), 'six records with a timestamp')
    assert.deepEqual(histogramLines((await byRun.exposition()).body), expected)
  }
)

test('each instance has its own registry', async () => {
  const first = new MirrorMetrics(() => [], { defaultMetrics: false })
  const second = new MirrorMetrics(() => [], { defaultMetrics: false })
  first.rebalanced(flow)
  assert.match((await first.exposition()).body, /kafka_mirror_rebalances_total\{[^}]*\} 1/)
  assert.doesNotMatch((await second.exposition()).body, /kafka_mirror_rebalances_total\{/)
})

test('promtool check metrics accepts the exposition (only prom-client\'s nodejs_active_*_total are allow-listed)', async () => {
  const metrics = new MirrorMetrics(() => [snapshot([partition({ highWatermark: 100n, nextOffsetToMirror: 42n, oldestUnackedTimestampMs: NOW_MS - 1_000 })])], {
    nowMs: () => NOW_MS,
  })
  feed(metrics)
  const { body } = await metrics.exposition()
  const result = await promtool(['check', 'metrics'], body)
  const problems = (result.stdout + result.stderr).split('\n').filter(line => line.trim() !== '')
  const unexpected = problems.filter(
    line => !/^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/.test(line)
  )
  assert.deepEqual(unexpected, [])
  assert.ok(result.code === 0 || problems.length > 0, `promtool exit ${result.code} without a message`)
})

test(
  'every metric in metric-names.ts is exported (offset-sync metrics through OffsetsMetrics, lost records through LossMetrics, digests through DigestMetrics, in the same registry)',
  async () => {
    // A flow that transcodes: its transcoder gauges exist only then.
    const metrics = new MirrorMetrics(() => [snapshot([partition({ committedOffset: 5n })], {
      transcoder: { busySlots: 1, waitingBatches: 0 },
      producerLanes: { total: 8, writing: 4 },
    })], {
      defaultMetrics: false,
      flows: [{ ...configured, throughputLimitBytes: 1_048_576 }],
    })
    feed(metrics)
    const flow = { flow: 'a->b', source: 'a', target: 'b' }
    const offsets = new OffsetsMetrics(metrics.registry, () => [{ flow, groups: [{ group: 'g', lastCheckpointMs: 0 }] }])
    offsets.syncsWritten(flow, 1, 1)
    offsets.syncWriteFailed(flow)
    offsets.syncsPruned(flow, 1)
    offsets.checkpointsWritten(flow, 'g', 1)
    offsets.groupOffsetsSynced(flow, 'g', 1)
    offsets.groupSkipped(flow, 'g', 'active')
    offsets.translationFailed(flow, 'g', 'no-syncs')
    offsets.oppositeMirrorSkipped(flow, 3)
    const loss = new LossMetrics(metrics.registry)
    loss.lost(flow, {
      reason: 'source_retention',
      topic: 't',
      partition: 0,
      targetTopic: 't',
      fromOffset: 0n,
      toOffset: 2n,
      records: 2n,
    })
    loss.foreign(flow, { topic: 't', partition: 0, targetTopic: 't', fromOffset: 5n, toOffset: 8n, records: 3n })
    const digests = new DigestMetrics(metrics.registry)
    digests.written(flow, 1)
    digests.audited(flow, 't', 1000)
    digests.mismatch(flow, { sourceTopic: 't', targetTopic: 't', partition: 0, sourceFirst: 0n, sourceLast: 999n, targetStart: 0n, count: 1000, hash: 1 })
    registerRetentionMetrics(metrics.registry, () => [{ flow, topics: [{ topic: 't', retentionSeconds: 604_800 }] }])
    const names = new Set([...samples((await metrics.exposition()).body).keys()].map(series => series.replace(/\{.*$/, '')))
    for (const name of allSeriesNames()) assert.ok(names.has(name), `${name} missing from the exposition`)
    assert.equal(Object.values(Metrics).every(definition => definition.name.startsWith('kafka_mirror_')), true)
  }
)

test('OpenMetrics exposition ends with # EOF and does not rename counters in later text scrapes', async () => {
  const metrics = new MirrorMetrics(() => [snapshot([partition()])], { defaultMetrics: false })
  feed(metrics)
  const open = await metrics.exposition(true)
  assert.match(open.contentType, /^application\/openmetrics-text; version=1\.0\.0/)
  assert.ok(open.body.endsWith('# EOF\n'))
  assert.match(open.body, /^# TYPE kafka_mirror_consumed_records counter$/m)
  assert.match(open.body, /^kafka_mirror_consumed_records_total\{[^}]*\} 3$/m)
  assert.doesNotMatch(open.body, /_total_total/)
  const text = await metrics.exposition(false)
  assert.match(text.contentType, /^text\/plain; version=0\.0\.4/)
  assert.match(text.body, /^# TYPE kafka_mirror_consumed_records_total counter$/m)
  assert.match(text.body, /^kafka_mirror_consumed_records_total\{[^}]*\} 3$/m)
})

test('a topic first seen in the snapshot has zeroed counters in the same scrape (so rate() and increase() see the first record)', async () => {
  const metrics = new MirrorMetrics(() => [snapshot([partition({ topic: 'fresh' })])], { defaultMetrics: false })
  const values = samples((await metrics.exposition()).body)
  for (const name of ['kafka_mirror_consumed_records_total', 'kafka_mirror_produced_records_total', 'kafka_mirror_send_failures_total']) {
    assert.equal(values.get(`${name}{${L},topic="fresh"}`), 0, name)
  }
  assert.equal(values.get(`kafka_mirror_commits_total{${L},result="error"}`), 0)
})

test(
  'commit age: counts from start until the first commit, 0 while every acknowledged offset is committed, from the first acknowledgement after a commit while one waits',
  async () => {
    let nowMs = NOW_MS
    let partitions = [partition({ nextOffsetToMirror: 0n, committedOffset: -1n })]
    const metrics = new MirrorMetrics(() => [snapshot(partitions)], { nowMs: () => nowMs, defaultMetrics: false, flows: [configured] })
    const age = async (): Promise<number | undefined> => samples((await metrics.exposition()).body).get(`kafka_mirror_commit_age_seconds{${L}}`)
    assert.equal(samples((await metrics.exposition()).body).get(`kafka_mirror_commit_interval_seconds{${L}}`), 5)
    nowMs += 40_000
    assert.equal(await age(), 40, 'never committed: since start')
    metrics.committed(flow, [{ topic: 'orders', partition: 0, offset: 100n, lagRecords: 0n }], nowMs)
    partitions = [partition({ nextOffsetToMirror: 100n, committedOffset: 100n })]
    nowMs += 3_600_000
    assert.equal(await age(), 0, 'idle and committed: nothing waits')
    metrics.produced(flow, {
      sourceTopic: 'orders',
      targetTopic: 'orders',
      partition: 0,
      records: 1,
      bytes: 10,
      timestampsMs: [nowMs],
      ackTimeMs: nowMs,
      firstSourceOffset: 100n,
      lastSourceOffset: 100n,
      targetBaseOffset: 100n,
    })
    partitions = [partition({ highWatermark: 101n, nextOffsetToMirror: 101n, committedOffset: 100n })]
    nowMs += 2_000
    assert.equal(await age(), 2, 'an acknowledgement after an idle hour waits 2 s, not an hour')
    metrics.commitFailed(flow, 'MESSAGE_TOO_LARGE')
    nowMs += 60_000
    assert.equal(await age(), 62, 'failing commits: the age keeps growing')
  }
)

test(
  'with partitionLabels false the per-partition gauges become per topic: lag summed, lag seconds the largest, partitions counted per status, no committed offset',
  async () => {
    const partitions = [
      partition({ highWatermark: 100n, nextOffsetToMirror: 40n, committedOffset: 40n, oldestUnackedTimestampMs: NOW_MS - 30_000 }),
      partition({ partition: 1, highWatermark: 50n, nextOffsetToMirror: 30n, committedOffset: 30n, oldestUnackedTimestampMs: NOW_MS - 90_000 }),
      partition({ partition: 2 }),
      partition({ topic: 'payments', highWatermark: 7n, nextOffsetToMirror: 2n, committedOffset: 2n, oldestUnackedTimestampMs: NOW_MS - 1_000 }),
    ]
    const perPartition = samples((await new MirrorMetrics(() => [snapshot(partitions)], { nowMs: () => NOW_MS, defaultMetrics: false }).exposition()).body)
    const perTopic = samples(
      (await new MirrorMetrics(() => [snapshot(partitions)], { nowMs: () => NOW_MS, defaultMetrics: false, partitionLabels: false }).exposition()).body
    )
    const orders = `${L},topic="orders"`
    assert.equal(perTopic.get(`kafka_mirror_lag_records{${orders}}`), 80)
    assert.equal(perTopic.get(`kafka_mirror_lag_seconds{${orders}}`), 90)
    assert.equal(perTopic.get(`kafka_mirror_lag_records{${L},topic="payments"}`), 5)
    const statuses = (values: Map<string, number>, topic: string): Record<string, number> => {
      const out: Record<string, number> = {}
      for (const [series, value] of values) {
        const match = new RegExp(`^kafka_mirror_partition_status\\{${L},topic="${topic}",(?:partition="\\d+",)?status="(\\w+)"\\}$`).exec(series)
        if (match !== null) out[match[1] as string] = (out[match[1] as string] ?? 0) + value
      }
      return out
    }
    assert.deepEqual(statuses(perTopic, 'orders'), statuses(perPartition, 'orders'), 'sum by (status) counts the same partitions either way')
    assert.equal(Object.values(statuses(perTopic, 'orders')).reduce((a, b) => a + b, 0), 3)
    const names = (values: Map<string, number>, name: string): string[] => [...values.keys()].filter(series => series.startsWith(`${name}{`))
    assert.equal(names(perTopic, 'kafka_mirror_committed_offset').length, 0)
    assert.equal(names(perPartition, 'kafka_mirror_committed_offset').length, 4)
    for (const name of ['kafka_mirror_lag_records', 'kafka_mirror_lag_seconds', 'kafka_mirror_partition_status']) {
      assert.ok(names(perTopic, name).every(series => !series.includes('partition=')), name)
      assert.equal(names(perTopic, name).length * 2, names(perPartition, name).length, `${name}: 2 topics instead of 4 partitions`)
    }
  }
)

test('a flow with a throughput limit exports the limit and the time it held fetching back; a flow without one exports neither', async () => {
  const limited = new MirrorMetrics(() => [snapshot([partition()])], { defaultMetrics: false, flows: [{ ...configured, throughputLimitBytes: 2_097_152 }] })
  let values = samples((await limited.exposition()).body)
  assert.equal(values.get(`kafka_mirror_throughput_limit_bytes_per_second{${L}}`), 2_097_152)
  assert.equal(values.get(`kafka_mirror_throttled_seconds_total{${L}}`), 0, 'present at 0 before the first wait, so rate() sees the first one')
  limited.throttled(flow, 0.25)
  limited.throttled(flow, 1.5)
  values = samples((await limited.exposition()).body)
  assert.equal(values.get(`kafka_mirror_throttled_seconds_total{${L}}`), 1.75)
  const unlimited = new MirrorMetrics(() => [snapshot([partition()])], { defaultMetrics: false, flows: [configured] })
  const body = (await unlimited.exposition()).body
  assert.doesNotMatch(body, /^kafka_mirror_throughput_limit_bytes_per_second\{/m)
  assert.doesNotMatch(body, /^kafka_mirror_throttled_seconds_total\{/m)
})

test('fetch requests are counted per flow, at 0 from the start so rate() sees the first', async () => {
  const metrics = new MirrorMetrics(() => [snapshot([partition()])], { defaultMetrics: false, flows: [configured] })
  assert.equal(samples((await metrics.exposition()).body).get(`kafka_mirror_fetch_requests_total{${L}}`), 0)
  metrics.fetched(flow)
  metrics.fetched(flow)
  metrics.fetched(flow)
  assert.equal(samples((await metrics.exposition()).body).get(`kafka_mirror_fetch_requests_total{${L}}`), 3)
})
