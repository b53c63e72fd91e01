import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseBenchArgs, UsageError } from '../bench-options.js'
import { longestPollGapSeconds, longestStall, type ProgressPoll } from '../progress-stall.js'
import { rollingRestartSection, throughputMarkdown } from '../report.js'
import { nodeClusterPorts } from '../rolling-restart.js'
import { SCENARIOS } from '../scenarios.js'
import { restartFigures, type ThroughputFigures } from '../throughput-run.js'
import { TEST_ENVIRONMENT } from './fixtures/environment.js'

const polls = (...pairs: Array<[number, number]>): ProgressPoll[] => pairs.map(([atMs, records]) => ({ atMs, records }))

test('the longest stall is the longest gap between two polls that saw the count grow', () => {
  const series = polls([0, 0], [100, 0], [200, 500], [300, 900], [400, 900], [500, 900], [1_900, 900], [2_000, 1_400], [2_100, 2_000])
  // Growth seen at 200, 300, 2000, 2100: the gap 300 -> 2000 holds four polls without growth.
  assert.deepEqual(longestStall(series), { seconds: 1.7, fromMs: 300, toMs: 2_000 })
})

test('the stall ignores polls before the first record and counts from the first poll that saw any', () => {
  // 5 s of start-up with nothing on the target is not a stall of the copy.
  assert.deepEqual(longestStall(polls([0, 0], [5_000, 0], [5_100, 10], [5_350, 20])), { seconds: 0.25, fromMs: 5_100, toMs: 5_350 })
})

test('a poll that reads less than an earlier one (a lagging replica answered) is no progress, and the stall lasts until the count passes the highest', () => {
  assert.deepEqual(longestStall(polls([0, 100], [100, 200], [200, 150], [300, 200], [900, 201])), { seconds: 0.8, fromMs: 100, toMs: 900 })
})

test('no stall with fewer than two polls that saw growth', () => {
  assert.equal(longestStall([]), undefined)
  assert.equal(longestStall(polls([0, 0], [100, 0])), undefined)
  assert.equal(longestStall(polls([0, 0], [100, 50], [200, 50])), undefined)
})

test('the longest poll gap is the resolution of the stall', () => {
  assert.equal(longestPollGapSeconds(polls([0, 0], [100, 1], [1_600, 1], [1_700, 2])), 1.5)
  assert.equal(longestPollGapSeconds(polls([0, 0])), 0)
  assert.equal(longestPollGapSeconds([]), 0)
})

test('restart figures: window, catch-up after the last node, stall measured from the first stop', () => {
  const restart = { startedAtMs: 10_000, endedAtMs: 40_000, nodes: [] }
  const figures = restartFigures(3_400, restart, polls([9_000, 3_000], [9_900, 3_400], [13_900, 3_500], [45_000, 10_000]), 1_000, 45_000)
  assert.equal(figures.startedAfterSeconds, 9)
  assert.equal(figures.windowSeconds, 30)
  assert.equal(figures.lastBackToDoneSeconds, 5)
  assert.equal(figures.longestStallSeconds, 31.1)
  assert.equal(Math.round(figures.longestStallFromRestartSeconds * 10) / 10, 3.9)
  assert.equal(figures.longestPollGapSeconds, 31.1)
  const stallBefore = restartFigures(
    3_400,
    restart,
    polls([1_000, 100], [8_000, 200], [9_900, 3_400], [10_500, 3_500], [12_500, 3_600], [13_000, 4_000], [45_000, 10_000]),
    500,
    45_000
  )
  assert.equal(stallBefore.longestStallSeconds, 32, 'the copy\'s longest stall: the 13.0 s -> 45.0 s gap')
  const startUpStall = restartFigures(
    3_400,
    restart,
    polls([1_000, 100], [8_000, 200], [9_900, 3_400], [10_500, 3_500], [12_500, 3_600], [13_000, 10_000]),
    500,
    13_000
  )
  assert.deepEqual(
    [startUpStall.longestStallSeconds, startUpStall.longestStallFromRestartSeconds],
    [7, -9],
    "a stall before the restart is the copy's longest, 9 s before the first stop"
  )
  assert.equal(startUpStall.restartStallSeconds, 2, 'from the first stop on: counted from the poll that started the restart (9.9 s)')
  const early = restartFigures(3_400, restart, polls([9_000, 3_000], [20_000, 10_000]), 1_000, 20_000)
  assert.equal(early.lastBackToDoneSeconds, -20, 'a copy done within the window')
})

test('the rolling-restart scenario is the tuned one on 3-node clusters', () => {
  const { name, title, rollingRestart, ...rest } = SCENARIOS['rolling-restart']
  const { name: _n, title: _t, ...tuned } = SCENARIOS.tuned
  assert.equal(name, 'rolling-restart')
  assert.equal(rollingRestart, true)
  assert.deepEqual(rest, tuned)
  assert.match(title, /rolling restart/)
  assert.equal(SCENARIOS.tuned.rollingRestart, undefined)
  assert.deepEqual(
    parseBenchArgs(['--scenario', 'rolling-restart', '--records', '100000', '--runs', '1', '--no-ceiling', '--contenders', 'sidecar']).scenarios.map(
      s => s.name
    ),
    ['rolling-restart']
  )
})

test('--target-outage-seconds with the rolling-restart scenario is a usage error naming both', () => {
  assert.throws(
    () => parseBenchArgs(['--scenario', 'tuned,rolling-restart', '--target-outage-seconds', '20']),
    (error: unknown) =>
      error instanceof UsageError && /--target-outage-seconds "20" freezes a single-node target; the rolling-restart scenario/.test(error.message)
  )
  assert.equal(parseBenchArgs(['--scenario', 'tuned', '--target-outage-seconds', '20']).targetOutageSeconds, 20)
})

test('the 3-node clusters\' base ports come from KAFKA_BENCH_NODES_SOURCE_PORT / KAFKA_BENCH_NODES_TARGET_PORT, default 21092 / 31092', () => {
  assert.deepEqual(nodeClusterPorts({}), { source: 21_092, target: 31_092 })
  assert.deepEqual(nodeClusterPorts({ KAFKA_BENCH_NODES_SOURCE_PORT: '21792', KAFKA_BENCH_NODES_TARGET_PORT: '31792' }), { source: 21_792, target: 31_792 })
  assert.deepEqual(nodeClusterPorts({ KAFKA_BENCH_NODES_SOURCE_PORT: '' }), { source: 21_092, target: 31_092 })
  assert.throws(
    () => nodeClusterPorts({ KAFKA_BENCH_NODES_SOURCE_PORT: 'abc' }),
    /KAFKA_BENCH_NODES_SOURCE_PORT "abc": expected a base port between 1024 and 65514/
  )
  assert.throws(() => nodeClusterPorts({ KAFKA_BENCH_NODES_TARGET_PORT: '65520' }), /KAFKA_BENCH_NODES_TARGET_PORT "65520"/)
  assert.throws(() => nodeClusterPorts({ KAFKA_BENCH_NODES_SOURCE_PORT: '31082' }), /overlap; set them at least 22 apart/)
})

test('the results table lists each restarted run, and a copy done within the restart window says so', () => {
  const run = (contender: string, lastBackToDoneSeconds: number): ThroughputFigures => ({
    contender,
    run: 1,
    records: 100_000,
    startupSeconds: 1,
    copySeconds: 10,
    totalSeconds: 11,
    recordsPerSecond: 10_000,
    steadyRecordsPerSecond: 10_000,
    mbPerSecond: 5,
    cpuSeconds: 1,
    copyCpuSeconds: 1,
    peakRssBytes: 2 ** 27,
    brokerCpuSeconds: 1,
    cpuSecondsPerGb: 4,
    brokerCpuSecondsPerGb: 2,
    duplicates: 12,
    missing: 0,
    rollingRestart: {
      atRecords: 34_000,
      startedAfterSeconds: 3,
      windowSeconds: 41.5,
      lastBackToDoneSeconds,
      restartStallSeconds: 3.5,
      longestStallSeconds: 3.75,
      longestStallFromRestartSeconds: 0.2,
      longestPollGapSeconds: 0.31,
      nodes: [],
    },
  })
  const lines = rollingRestartSection([run('sidecar', 2.5), run('mm2', -30), { ...run('mm1', 1), rollingRestart: undefined }], name => name.toUpperCase()).join(
    '\n'
  )
  assert.match(lines, /## Rolling restart of the target/)
  assert.match(lines, /\| SIDECAR \| 1 \| 34,000 \(34%\) \| 41\.5 \| 3\.50 \| 3\.75 \| 0\.2 \| 0\.31 \| 2\.5 \| 10,000 \| 12 \/ 0 \|/)
  assert.match(lines, /\| MM2 \| .* \| done 30\.0 s before \|/)
  assert.doesNotMatch(lines, /MM1/)
  assert.deepEqual(rollingRestartSection([{ ...run('sidecar', 1), rollingRestart: undefined }], name => name), [])
})

test('a result on the 3-node clusters names them in its versions line; the others keep the single-node clusters', () => {
  const env = TEST_ENVIRONMENT
  const options = parseBenchArgs(['--scenario', 'rolling-restart', '--no-ceiling'])
  assert.match(
    throughputMarkdown(env, options, [], undefined, { clusters: 'two 3-node KRaft clusters, -Xmx384m per node' }),
    /Kafka brokers 4\.1\.1 \(two 3-node KRaft clusters, -Xmx384m per node\)/
  )
  assert.match(throughputMarkdown(env, options, [], undefined, {}), /Kafka brokers 4\.1\.1 \(two single-node KRaft clusters/)
})
