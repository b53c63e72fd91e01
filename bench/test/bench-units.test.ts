import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseBenchArgs, UsageError } from '../bench-options.js'
import { parseConsumerPerformance, parseProducerPerformance } from '../ceiling-run.js'
import { recordLines } from '../kcat-producer.js'
import { summariseHeapProfile, summariseProfile } from '../profile-summary.js'
import { median } from '../report.js'
import { runOrder } from '../run-order.js'
import { scaleMarkdown } from '../scale-run.js'

test('defaults match the issue: 1,000,000 records of 16 + 512 bytes, 8 partitions, 3 runs; --quick preloads 100,000', () => {
  const defaults = parseBenchArgs([])
  assert.equal(defaults.records, 1_000_000)
  assert.equal(defaults.keyBytes, 16)
  assert.equal(defaults.valueBytes, 512)
  assert.equal(defaults.partitions, 8)
  assert.equal(defaults.runs, 3)
  assert.equal(defaults.compression, 'none')
  assert.deepEqual(defaults.contenders, ['sidecar', 'mm2', 'mm1'])
  assert.equal(parseBenchArgs(['--quick']).records, 100_000)
  assert.equal(parseBenchArgs(['--quick', '--records', '5000']).records, 5_000)
})

test('a bad flag value is a usage error naming the flag and the value', () => {
  assert.throws(
    () => parseBenchArgs(['--runs', 'abc']),
    (error: unknown) => error instanceof UsageError && error.message === '--runs "abc": expected a positive integer'
  )
  assert.throws(() => parseBenchArgs(['--compression', 'brotli']), /--compression "brotli"/)
  assert.throws(() => parseBenchArgs(['--contenders', 'mm3']), /unknown contender "mm3"/)
  assert.throws(() => parseBenchArgs(['--producer-prop', 'acks=1']), /acks is set by the benchmark/)
  assert.deepEqual(parseBenchArgs(['--producer-prop', 'batch.size=262144', '--producer-prop', 'linger.ms=10']).producerProps, {
    'batch.size': '262144',
    'linger.ms': '10',
  })
  assert.throws(() => parseBenchArgs(['--consumer-prop', 'group.id=x']), /--consumer-prop "group.id=x": group.id is set by the benchmark itself/)
  assert.throws(() => parseBenchArgs(['--consumer-prop', 'fetch.min.bytes']), /--consumer-prop "fetch.min.bytes": expected key=value/)
  assert.deepEqual(parseBenchArgs(['--consumer-prop', 'fetch.min.bytes=65536', '--consumer-prop', 'fetch.max.wait.ms=10']).consumerProps, {
    'fetch.min.bytes': '65536',
    'fetch.max.wait.ms': '10',
  })
  assert.deepEqual(parseBenchArgs([]).consumerProps, {})
})

test('record lines carry a fixed-width hex key and a value of exactly the asked size', () => {
  const lines = recordLines({ keyBytes: 16, valueBytes: 512 }, 255, 3).trimEnd().split('\n')
  assert.equal(lines.length, 3)
  const [key, value] = lines[0]!.split('\t')
  assert.equal(key, '00000000000000ff')
  assert.equal(value!.length, 512)
  assert.match(value!, /^[A-Za-z0-9+/]+$/)
  assert.equal(lines[2]!.split('\t')[0], '0000000000000101')
})

test('compressible record values are the record number zero-padded to the value size', async () => {
  const { gzipSync } = await import('node:zlib')
  const text = recordLines({ keyBytes: 16, valueBytes: 512, compressibleValues: true }, 7, 1000)
  const [key, value] = text.split('\n')[0]!.split('\t')
  assert.equal(key, '0000000000000007')
  assert.equal(value, '7'.padStart(512, '0'))
  assert.ok(gzipSync(text).length * 50 < text.length, 'they compress by far more than 50x')
})

test('parses the summaries Kafka 4.1 ProducerPerformance and ConsumerPerformance print', () => {
  const producer = '499985 records sent, 99997.0 records/sec (50.35 MB/sec), 3.2 ms avg latency, 120.0 ms max latency.\n' +
    '1000000 records sent, 59988.0 records/sec (30.21 MB/sec), 250.31 ms avg latency, 801.00 ms max latency, 200 ms 50th, 700 ms 95th, 780 ms 99th, 800 ms 99.9th.\n'
  assert.deepEqual(parseProducerPerformance(producer), { recordsPerSecond: 59988, mbPerSecond: 30.21 })
  const consumer =
    'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n' +
    '2026-11-29 21:03:30:000, 2026-11-29 21:03:31:500, 50.3540, 33.5693, 100000, 66666.6667, 839, 661, 76.1785, 151285.9304\n'
  assert.deepEqual(parseConsumerPerformance(consumer), { recordsPerSecond: 151285.9304, mbPerSecond: 76.1785 })
  assert.throws(() => parseProducerPerformance('boom'), /no summary/)
})

test('median of odd and even counts, ignoring missing figures', () => {
  assert.equal(median([3, 1, 2]), 2)
  assert.equal(median([4, 1, 3, 2]), 2.5)
  assert.equal(median([5, Number.NaN, 1, 3]), 3)
  assert.ok(Number.isNaN(median([])))
})

test('profile summary adds self time per function and sorts by it', () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 } },
      { id: 2, callFrame: { functionName: 'encode', url: 'file:///x/node_modules/kafkajs/src/a.js', lineNumber: 9 } },
      { id: 3, callFrame: { functionName: 'encode', url: 'file:///x/node_modules/kafkajs/src/a.js', lineNumber: 9 } },
      { id: 4, callFrame: { functionName: 'flow', url: 'file:///x/dist/src/sidecar/pipeline/flow.js', lineNumber: 0 } },
    ],
    samples: [2, 3, 4, 2],
    timeDeltas: [1000, 1000, 500, 2000],
  }
  const { totalMs, top, byOriginMs } = summariseProfile(profile)
  assert.equal(totalMs, 4.5)
  assert.deepEqual(byOriginMs, { kafkajs: 4, 'this project': 0.5 })
  assert.deepEqual(top.map(entry => [entry.functionName, entry.location, entry.selfMs]), [
    ['encode', 'kafkajs/src/a.js:10', 4],
    ['flow', 'dist/src/sidecar/pipeline/flow.js:1', 0.5],
  ])
  // The last 2.5 ms only: the last two samples (0.5 ms of flow, 2 ms of encode).
  const tail = summariseProfile(profile, 25, 0.0025)
  assert.equal(tail.totalMs, 2.5)
  assert.deepEqual(tail.byOriginMs, { kafkajs: 2, 'this project': 0.5 })
})

test('heap profile summary adds live bytes per allocating function and per innermost frame of this project', () => {
  const frame = (functionName: string, url: string): { functionName: string, url: string, lineNumber: number } => ({ functionName, url, lineNumber: 0 })
  const profile = {
    head: {
      callFrame: frame('(root)', ''),
      selfSize: 0,
      children: [
        {
          callFrame: frame('track', 'file:///x/dist/src/sidecar/offsets/tracker.js'),
          selfSize: 100,
          children: [{ callFrame: frame('decode', 'file:///x/node_modules/kafkajs/src/d.js'), selfSize: 300, children: [] }],
        },
        { callFrame: frame('decode', 'file:///x/node_modules/kafkajs/src/d.js'), selfSize: 50, children: [] },
      ],
    },
  }
  const { totalBytes, top, byProjectFrame } = summariseHeapProfile(profile)
  assert.equal(totalBytes, 450)
  assert.deepEqual(
    top.map(({ site, bytes }) => [site, bytes]),
    [
      ['decode  (kafkajs/src/d.js:1)', 350],
      ['track  (dist/src/sidecar/offsets/tracker.js:1)', 100],
    ]
  )
  assert.deepEqual(
    byProjectFrame.map(({ site, bytes }) => [site, bytes]),
    [
      ['track  (dist/src/sidecar/offsets/tracker.js:1)', 400],
      ['(no frame of this project)', 50],
    ]
  )
})

test('--baseline-entry adds the baseline contender; asking for it without an entry is a usage error; sidecar and baseline alternate first', () => {
  assert.deepEqual(parseBenchArgs(['--baseline-entry', 'old/mirror-sidecar.js']).contenders, ['sidecar', 'baseline', 'mm2', 'mm1'])
  assert.equal(parseBenchArgs(['--baseline-entry', 'old/mirror-sidecar.js']).baselineEntry, 'old/mirror-sidecar.js')
  assert.throws(
    () => parseBenchArgs(['--contenders', 'sidecar,baseline']),
    (error: unknown) => error instanceof UsageError && /baseline contender needs --baseline-entry/.test(error.message)
  )
  const named = ['sidecar', 'baseline', 'mm2'].map(name => ({ name }))
  assert.deepEqual(runOrder(named, 1).map(c => c.name), ['sidecar', 'baseline', 'mm2'])
  assert.deepEqual(runOrder(named, 2).map(c => c.name), ['baseline', 'sidecar', 'mm2'])
  assert.deepEqual(runOrder([{ name: 'sidecar' }, { name: 'mm2' }], 2).map(c => c.name), ['sidecar', 'mm2'])
})

test(
  '--scale: 300 topics x 8 partitions of 50 small records, a 5 s commit interval, 30 s caught up; --commit-interval-ms and --sidecar-arg pass through',
  () => {
    const scale = parseBenchArgs(['--scale'])
    assert.deepEqual(
      [scale.mode, scale.topics, scale.partitions, scale.recordsPerPartition, scale.valueBytes, scale.commitIntervalMs, scale.idleSeconds],
      ['scale', 300, 8, 50, 100, 5_000, 30]
    )
    assert.equal(parseBenchArgs([]).commitIntervalMs, undefined, 'other modes keep each tool\'s own interval')
    const custom = parseBenchArgs([
      '--scale',
      '--topics',
      '1250',
      '--records-per-partition',
      '400',
      '--commit-interval-ms',
      '20000',
      '--sidecar-arg=--metrics.partition.labels=false',
    ])
    assert.deepEqual(
      [custom.topics, custom.recordsPerPartition, custom.commitIntervalMs, custom.sidecarArgs],
      [1250, 400, 20_000, ['--metrics.partition.labels=false']]
    )
    assert.equal(scale.precreateTarget, false, 'the mirror creates the target topics unless --precreate-target')
    assert.equal(parseBenchArgs(['--scale', '--precreate-target']).precreateTarget, true)
    assert.throws(() => parseBenchArgs(['--scale', '--latency']), /different modes/)
    assert.throws(() => parseBenchArgs(['--scale', '--topics', '0']), /--topics "0": expected a positive integer/)
  }
)

test('the scale report has one row per run with every figure, n/a where a contender has none', () => {
  const row = {
    contender: 'mm2',
    run: 1,
    topics: 300,
    partitions: 2400,
    records: 120_000,
    totalSeconds: 12.34,
    cpuSeconds: 20,
    peakRssBytes: 2 ** 30,
    idleCpuPercent: 4.2,
    idleTailCpuPercent: 1.5,
    allCommittedAfterSeconds: Number.NaN,
    commits: Number.NaN,
    commitIntervals: 8,
    commitIntervalsUntilAllCommitted: Number.NaN,
    failedCommits: Number.NaN,
    metricSeries: Number.NaN,
    duplicates: 0,
    missing: 0,
  }
  const markdown = scaleMarkdown('# header', [row], 5_000)
  assert.match(
    markdown,
    /\| mm2 \| 1 \| 300 x 8 = 2400 \| 120000 \| 12\.3 s \| 20\.0 \| 1024 MiB \| 4\.2 % \| 1\.5 % \| not within the window \| n\/a \/ n\/a \| n\/a \/ 8 \| n\/a \| n\/a \| 0 \/ 0 \|/
  )
  const sidecar = { ...row, contender: 'sidecar', allCommittedAfterSeconds: 3.1, commits: 2, commitIntervalsUntilAllCommitted: 3 }
  assert.match(scaleMarkdown('# header', [sidecar], 5_000), /\| 3\.1 s \| 2 \/ 3 \| 2 \/ 8 \|/)
})
