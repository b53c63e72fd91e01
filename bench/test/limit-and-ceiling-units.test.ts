import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ThroughputFigures } from '../throughput-run.js'
import { throughputLimitSection } from '../report.js'
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
    contender: 'sidecar', run: 1, records: 20_000, startupSeconds: 1, copySeconds: 5, totalSeconds: 6, recordsPerSecond: 4000, steadyRecordsPerSecond: 4000, mbPerSecond: 2,
    cpuSeconds: 1, copyCpuSeconds: 1, peakRssBytes: 1, brokerCpuSeconds: 1, cpuSecondsPerGb: 1, brokerCpuSecondsPerGb: 1, duplicates: 0, missing: 0,
    throughputLimit: { limitBytesPerSecond: 2_000_000, fetchedBytesPerSecond: 1_960_000, throttledSeconds: 4.25 },
  } satisfies ThroughputFigures
  const lines = throughputLimitSection([run], () => 'mirror-sidecar')
  assert.equal(lines[1], '## Throughput limit')
  assert.ok(lines.join('\n').includes('\n| mirror-sidecar | 1 | 2,000,000 | 1,960,000 | 0.98× | 4.3 | 5.0 | 4,000 |\n'), lines.join('\n'))
  assert.deepEqual(throughputLimitSection([{ ...run, throughputLimit: undefined }], () => 'x'), [])
})
