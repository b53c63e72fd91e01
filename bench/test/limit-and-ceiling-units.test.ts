import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ThroughputFigures } from '../throughput-run.js'
import { parseBenchArgs } from '../bench-options.js'
import { reassignmentPlan, replicaCaughtUp, replicationMedians, type ReplicationCeilingFigures } from '../replication-ceiling.js'
import { replicationCeilingSection, throughputLimitSection, type ThroughputMedians } from '../report.js'
import { metricSum } from '../sidecar-metrics.js'
import { byteRate, sidecarThroughputLimit } from '../throughput-limit.js'

test('the throughput limit is read from the sidecar arguments in either form; 0 or none is no limit', () => {
  assert.equal(sidecarThroughputLimit(['--throughput.limit.bytes=10485760']), 10_485_760)
  assert.equal(sidecarThroughputLimit(['--pass.through=off', '--throughput.limit.bytes', '2000000']), 2_000_000)
  assert.equal(sidecarThroughputLimit(['--throughput.limit.bytes=0']), undefined)
  assert.equal(sidecarThroughputLimit(['--metrics.partition.labels=false']), undefined)
  assert.equal(sidecarThroughputLimit([]), undefined)
})

test('a byte rate between two counter readings; n/a without both or without time between them', () => {
  assert.equal(byteRate({ atMs: 1000, bytes: 1_000_000 }, { atMs: 3000, bytes: 5_000_000 }), 2_000_000)
  assert.ok(Number.isNaN(byteRate(undefined, { atMs: 3000, bytes: 1 })))
  assert.ok(Number.isNaN(byteRate({ atMs: 3000, bytes: 1 }, { atMs: 3000, bytes: 2 })))
  assert.ok(Number.isNaN(byteRate({ atMs: 1000, bytes: Number.NaN }, { atMs: 3000, bytes: 2 })))
})

test('metric sums over every label set of one name, not of names it prefixes', () => {
  const exposition = [
    '# HELP kafka_mirror_consumed_bytes_total Bytes',
    'kafka_mirror_consumed_bytes_total{flow="a->b",topic="x"} 100',
    'kafka_mirror_consumed_bytes_total{flow="a->b",topic="y"} 2.5e3',
    'kafka_mirror_consumed_bytes_total_other 7',
  ].join('\n')
  assert.equal(metricSum(exposition, 'kafka_mirror_consumed_bytes_total'), 2600)
  assert.ok(Number.isNaN(metricSum(exposition, 'kafka_mirror_throttled_seconds_total')))
  assert.ok(Number.isNaN(metricSum(undefined, 'kafka_mirror_consumed_bytes_total')))
})

test('the throughput-limit table: the fetched rate against the limit per run, absent without a limited run', () => {
  const run = {
    contender: 'sidecar',
    run: 1,
    records: 20_000,
    startupSeconds: 1,
    copySeconds: 5,
    totalSeconds: 6,
    recordsPerSecond: 4000,
    steadyRecordsPerSecond: 4000,
    mbPerSecond: 2,
    cpuSeconds: 1,
    copyCpuSeconds: 1,
    peakRssBytes: 1,
    brokerCpuSeconds: 1,
    cpuSecondsPerGb: 1,
    brokerCpuSecondsPerGb: 1,
    duplicates: 0,
    missing: 0,
    throughputLimit: { limitBytesPerSecond: 2_000_000, fetchedBytesPerSecond: 1_960_000, throttledSeconds: 4.25 },
  } satisfies ThroughputFigures
  const lines = throughputLimitSection([run], () => 'mirror-sidecar')
  assert.equal(lines[1], '## Throughput limit')
  assert.ok(lines.join('\n').includes('\n| mirror-sidecar | 1 | 2,000,000 | 1,960,000 | 0.98× | 4.3 | 5.0 | 4,000 |\n'), lines.join('\n'))
  assert.deepEqual(throughputLimitSection([{ ...run, throughputLimit: undefined }], () => 'x'), [])
})

test('replication ceiling: the plan gives every partition the same replicas, leader first', () => {
  assert.deepEqual(reassignmentPlan('t', 3, [1, 2]), [
    {
      topic: 't',
      partitionAssignment: [
        { partition: 0, replicas: [1, 2] },
        { partition: 1, replicas: [1, 2] },
        { partition: 2, replicas: [1, 2] },
      ],
    },
  ])
})

test('replication ceiling: done once no reassignment of the topic is left and every partition has the follower in sync', () => {
  const none = { topics: [] }
  const isr = (...lists: number[][]): Map<number, number[]> => new Map(lists.map((list, partition) => [partition, list]))
  assert.equal(replicaCaughtUp('t', none, isr([1, 2], [1, 2]), 2, 2), true)
  assert.equal(replicaCaughtUp('t', none, isr([1, 2], [1]), 2, 2), false, 'partition 1 still copying')
  assert.equal(replicaCaughtUp('t', none, isr([1, 2]), 2, 2), false, 'partition 1 not in the metadata')
  assert.equal(
    replicaCaughtUp('t', { topics: [{ topic: 't', partitions: [{ partitionIndex: 0, replicas: [1, 2], addingReplicas: [2] }] }] }, isr([1, 2], [1, 2]), 2, 2),
    false
  )
  assert.equal(replicaCaughtUp('t', { topics: [{ topic: 'other', partitions: [{ partitionIndex: 0, replicas: [1, 2] }] }] }, isr([1, 2], [1, 2]), 2, 2), true)
})

test('replication ceiling: medians over runs, a section with each run and every contender as a ratio of it', () => {
  const row = (run: number, seconds: number): ReplicationCeilingFigures => ({
    run,
    records: 1_000_000,
    seconds,
    recordsPerSecond: 1_000_000 / seconds,
    mbPerSecond: 528 / seconds,
    brokerCpuSeconds: 1,
    brokerCpuSecondsPerGb: 1.9,
    longestPollGapSeconds: 0.06,
  })
  const runs = [row(1, 2), row(2, 4), row(3, 2.5)]
  const medians = replicationMedians(runs)
  assert.equal(medians?.recordsPerSecond, 400_000)
  assert.equal(medians?.runs, 3)
  assert.equal(replicationMedians([]), undefined)
  const sidecar = {
    contender: 'sidecar',
    label: 'mirror-sidecar',
    heap: 'h',
    runs: 3,
    records: 1_000_000,
    startupSeconds: 1,
    copySeconds: 3.125,
    totalSeconds: 4,
    recordsPerSecond: 320_000,
    steadyRecordsPerSecond: 1,
    mbPerSecond: 161.1,
    cpuSeconds: 1,
    copyCpuSeconds: 1,
    peakRssBytes: 1,
    brokerCpuSeconds: 1,
    cpuSecondsPerGb: 1,
    brokerCpuSecondsPerGb: 1,
    duplicates: 0,
    missing: 0,
    maxDuplicates: 0,
    maxMissing: 0,
  } satisfies ThroughputMedians
  const text = replicationCeilingSection(runs, [sidecar, { ...sidecar, contender: 'mm2', label: 'MirrorMaker 2', runs: 0 }]).join('\n')
  assert.match(text, /## Replication ceiling/)
  assert.match(text, /\n\| 2 \| 1,000,000 \| 4\.00 \| 250,000 \| 132\.0 \| 1\.9 \| 0\.06 \|\n/)
  assert.match(text, /\n\| mirror-sidecar \| 320,000 \| 161\.1 \| 0\.80× \| 0\.76× \|\n/)
  assert.doesNotMatch(text, /MirrorMaker 2/, 'a contender without a completed run has no ratio')
  assert.deepEqual(replicationCeilingSection([], [sidecar]), [])
})

test('--replication-ceiling is a throughput-mode flag; --wide-area-delay-ms a latency-mode one', () => {
  assert.equal(parseBenchArgs([]).replicationCeiling, false)
  assert.equal(parseBenchArgs(['--scenario', 'tuned', '--replication-ceiling']).replicationCeiling, true)
  assert.throws(() => parseBenchArgs(['--replication-ceiling', '--latency']), /--replication-ceiling is for the throughput mode; drop --latency/)
  assert.equal(parseBenchArgs(['--latency']).wideAreaDelayMs, 0)
  assert.equal(parseBenchArgs(['--latency', '--wide-area-delay-ms', '100']).wideAreaDelayMs, 100)
  assert.throws(() => parseBenchArgs(['--wide-area-delay-ms', '25']), /is for the latency mode .*add --latency/)
  assert.throws(() => parseBenchArgs(['--latency', '--wide-area-delay-ms', 'far']), /--wide-area-delay-ms "far": expected a positive integer/)
})
