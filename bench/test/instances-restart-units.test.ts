import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareCopies } from '../../test/faults/copy-comparison.js'
import { parseBenchArgs, UsageError } from '../bench-options.js'
import { duplicateCopies } from '../duplicate-copies.js'
import { instancesRestartMarkdown } from '../instances-restart-report.js'
import type { InstancesRestartFigures, InstancesRestartSettings } from '../instances-restart-run.js'
import {
  longestOpenStallMs, partitionStalls, stallWindows, windowOfTargetOffset, windowStalls, type PartitionPoll,
} from '../partition-stalls.js'
import { TEST_ENVIRONMENT } from './fixtures/environment.js'

/** Polls of two partitions: [atMs, [source 0, source 1], [target 0, target 1]]. */
const polls = (...rows: Array<[number, [number, number], [number, number]]>): PartitionPoll[] =>
  rows.map(([atMs, source, target]) => ({ atMs, source, target }))

test('a partition copying steadily stalls only between polls; one whose target end stops while its source grows stalls until it grows again', () => {
  const series = polls(
    [0, [10, 10], [5, 5]],
    [200, [20, 20], [15, 15]],
    [400, [30, 30], [25, 25]],
    [600, [40, 40], [35, 25]],
    [800, [50, 50], [45, 25]],
    [2_800, [60, 60], [55, 25]],
    [3_000, [70, 70], [65, 60]]
  )
  const stalls = partitionStalls(series, 2)
  assert.deepEqual(stalls.filter(s => s.partition === 0).map(s => s.seconds), [0.2, 0.2, 0.2, 0.2, 2, 0.2])
  assert.deepEqual(stalls.filter(s => s.partition === 1), [
    { partition: 1, fromMs: 0, toMs: 200, seconds: 0.2, open: false },
    { partition: 1, fromMs: 200, toMs: 400, seconds: 0.2, open: false },
    { partition: 1, fromMs: 400, toMs: 3_000, seconds: 2.6, open: false },
  ])
})

test('a caught-up partition with nothing new on its source does not stall; its stall starts at the last poll it was caught up', () => {
  const series = polls(
    [0, [10, 10], [10, 10]],
    [1_000, [10, 10], [10, 10]],
    [2_000, [10, 12], [10, 10]],
    [5_000, [10, 12], [10, 12]]
  )
  const stalls = partitionStalls(series, 2)
  // The records arrived on the source between 1.0 s and 2.0 s: the stall counts from 1.0 s, within one poll gap.
  assert.deepEqual(stalls, [{ partition: 1, fromMs: 1_000, toMs: 5_000, seconds: 4, open: false }])
})

test('a target end read lower than before is no progress, and a stall not ended at the last poll is open', () => {
  const series = polls([0, [10, 10], [8, 10]], [500, [20, 10], [6, 10]], [1_000, [30, 10], [8, 10]], [3_000, [40, 10], [8, 10]])
  assert.deepEqual(partitionStalls(series, 2), [{ partition: 0, fromMs: 0, toMs: 3_000, seconds: 3, open: true }])
  assert.equal(longestOpenStallMs(series, 2), 3_000)
  assert.equal(longestOpenStallMs(polls([0, [10, 10], [10, 10]], [500, [20, 20], [20, 20]]), 2), 0)
})

test('windows: steady up to the first signal, then one per signal opened the lead before it, the last up to the end', () => {
  const windows = stallWindows(1_000, [{ label: 'SIGTERM 1', atMs: 10_000 }, { label: 'SIGKILL 1', atMs: 20_000 }], 35_000, 400)
  assert.deepEqual(windows, [
    { label: 'steady', startMs: 1_000, endMs: 9_600 },
    { label: 'SIGTERM 1', startMs: 9_600, endMs: 19_600 },
    { label: 'SIGKILL 1', startMs: 19_600, endMs: 35_000 },
  ])
  assert.deepEqual(stallWindows(1_000, [], 5_000, 400), [{ label: 'steady', startMs: 1_000, endMs: 5_000 }])
})

test('stalls are charged to the window they start in; a partition counts once per window; the longest stall and poll gap are per window', () => {
  const windows = stallWindows(0, [{ label: 'SIGTERM 1', atMs: 10_000 }], 30_000, 400)
  const stall = (partition: number, fromMs: number, toMs: number, open = false): ReturnType<typeof partitionStalls>[number] =>
    ({ partition, fromMs, toMs, seconds: (toMs - fromMs) / 1000, open })
  const stalls = [
    stall(0, 1_000, 1_200),
    stall(0, 9_800, 14_000),
    stall(0, 14_000, 16_000),
    stall(1, 9_700, 9_900),
    stall(2, 12_000, 40_000, true),
  ]
  const pollTimes = polls([0, [0, 0], [0, 0]], [5_000, [0, 0], [0, 0]], [5_200, [0, 0], [0, 0]], [12_000, [0, 0], [0, 0]], [12_100, [0, 0], [0, 0]])
  assert.deepEqual(windowStalls(windows, stalls, pollTimes, 1.5), [
    { label: 'steady', seconds: 9.6, partitionsStalled: 0, partitionsStalledBefore: 0, longestStallSeconds: 0.2, openStalls: 0, longestPollGapSeconds: 6.8 },
    { label: 'SIGTERM 1', seconds: 20.4, partitionsStalled: 2, partitionsStalledBefore: 0, longestStallSeconds: 28, openStalls: 1, longestPollGapSeconds: 6.8 },
  ])
  const later = stallWindows(0, [{ label: 'SIGKILL 1', atMs: 10_000 }, { label: 'SIGKILL 2', atMs: 20_000 }], 30_000, 0)
  const carried = windowStalls(later, [stall(0, 9_000, 25_000), stall(1, 9_500, 19_000), stall(2, 19_500, 20_500)], [], 1.5)
  assert.deepEqual(carried.map(w => [w.label, w.partitionsStalled, w.partitionsStalledBefore]), [
    ['steady', 2, 0],
    ['SIGKILL 1', 0, 2],
    ['SIGKILL 2', 0, 1],
  ], 'a stall running through a signal counts as stalled before that window, in the window it started in only')
})

test('a duplicate is charged to the window of the first poll that saw the target end pass its offset', () => {
  const windows = stallWindows(0, [{ label: 'SIGKILL 1', atMs: 10_000 }], 20_000, 0)
  const series = polls([5_000, [50, 50], [40, 40]], [12_000, [90, 90], [80, 41]], [25_000, [90, 90], [90, 90]])
  assert.equal(windowOfTargetOffset(windows, series, 0, 39), 'steady')
  assert.equal(windowOfTargetOffset(windows, series, 0, 40), 'SIGKILL 1')
  assert.equal(windowOfTargetOffset(windows, series, 1, 41), undefined, 'seen first after the last window ended')
  assert.equal(windowOfTargetOffset(windows, series, 1, 95), undefined, 'never passed')
})

test('duplicate copies are the occurrences beyond the source count, as many as compareCopies counts', () => {
  const source = [{ partition: 0, key: 'a' }, { partition: 0, key: 'b' }, { partition: 0, key: 'b' }, { partition: 1, key: 'c' }]
  const target = [
    { partition: 0, offset: 0, key: 'a' },
    { partition: 0, offset: 1, key: 'b' },
    { partition: 0, offset: 2, key: 'a' },
    { partition: 0, offset: 3, key: 'b' },
    { partition: 0, offset: 4, key: 'b' },
    { partition: 1, offset: 0, key: 'c' },
    { partition: 1, offset: 1, key: 'x' },
    { partition: 1, offset: 2, key: 'a' },
  ]
  const extra = duplicateCopies(source, target)
  assert.deepEqual(extra.map(r => `${r.partition}@${r.offset}`), ['0@2', '0@4', '1@1', '1@2'])
  assert.equal(extra.length, compareCopies(source, target).duplicates)
})

test('--instances-rolling-restart: its defaults, its own flags, and the flags it refuses', () => {
  const options = parseBenchArgs(['--instances-rolling-restart'])
  assert.equal(options.mode, 'instances')
  assert.deepEqual(
    [options.instances, options.partitions, options.rateRecordsPerSecond, options.restartIntervalSeconds, options.restartsPerPhase, options.contenders],
    [3, 24, 2_400, 25, 3, ['sidecar', 'sidecar-eos']]
  )
  assert.deepEqual(options.restartPhases, ['SIGTERM', 'SIGKILL'])
  assert.deepEqual(parseBenchArgs(['--instances-rolling-restart', '--restart-phases', 'sigkill']).restartPhases, ['SIGKILL'])
  assert.deepEqual(parseBenchArgs(['--instances-rolling-restart', '--restart-phases', 'SIGKILL,sigterm,sigkill']).restartPhases, ['SIGKILL', 'SIGTERM'])
  assert.throws(() => parseBenchArgs(['--instances-rolling-restart', '--restart-phases', 'sighup']), /unknown phase "sighup"/)
  assert.throws(() => parseBenchArgs(['--instances-rolling-restart', '--restart-phases', ',']), /expected a comma list of sigterm, sigkill/)
  const short = parseBenchArgs([
    '--instances-rolling-restart', '--restarts-per-phase', '2', '--restart-interval-seconds', '20', '--rate', '1000', '--contenders', 'sidecar',
  ])
  assert.deepEqual([short.restartsPerPhase, short.restartIntervalSeconds, short.rateRecordsPerSecond, short.contenders], [2, 20, 1_000, ['sidecar']])
  assert.equal(parseBenchArgs([]).partitions, 8, 'other modes keep their defaults')
  assert.throws(() => parseBenchArgs(['--instances-rolling-restart', '--latency']), (e: Error) => e instanceof UsageError && /drop --latency/.test(e.message))
  assert.throws(() => parseBenchArgs(['--instances-rolling-restart', '--scenario', 'tuned']), /drop --scenario/)
  assert.throws(() => parseBenchArgs(['--instances-rolling-restart', '--contenders', 'sidecar,mm2']), /sidecar instances only .* drop mm2/)
  assert.throws(() => parseBenchArgs(['--restarts-per-phase', '2']), /add --instances-rolling-restart/)
  assert.throws(() => parseBenchArgs(['--static-membership']), /--static-membership: for the instances-rolling-restart scenario/)
  assert.equal(parseBenchArgs(['--instances-rolling-restart']).staticMembership, false)
  assert.equal(parseBenchArgs(['--instances-rolling-restart', '--static-membership']).staticMembership, true)
  assert.throws(() => parseBenchArgs(['--instances-rolling-restart', '--instances', '0']), /--instances "0": expected a positive integer/)
})

test('the result file names the scenario and the command, and gives totals and one row per window', () => {
  const settings: InstancesRestartSettings = {
    instances: 3,
    partitions: 24,
    ratePerSecond: 2_400,
    restartIntervalMs: 25_000,
    restartsPerPhase: 1,
    phases: ['SIGTERM', 'SIGKILL'],
    pollIntervalMs: 200,
    stallThresholdSeconds: 1.5,
    timeoutMs: 600_000,
    shape: { keyBytes: 16, valueBytes: 512 },
    staticMembership: false,
  }
  const window = { seconds: 25, openStalls: 0, longestPollGapSeconds: 0.3, partitionsStalledBefore: 0 }
  const run: InstancesRestartFigures = {
    contender: 'sidecar',
    label: 'mirror-sidecar (this project)',
    exactlyOnce: false,
    topic: 'bench-instances-x',
    group: 'bench-x',
    written: 120_000,
    sourceRecords: 120_000,
    targetRecords: 120_350,
    missing: 0,
    duplicates: 350,
    outOfOrderPartitions: 0,
    caughtUpSeconds: 2.5,
    startSplit: [8, Number.NaN, 8],
    restarts: [
      { phase: 'SIGTERM', instance: 0, label: 'SIGTERM 1', atSeconds: 25, exitSeconds: 0.8, exit: 'exit 0', rebalancedSeconds: 4.2, split: [12, 0, 12] },
      {
        phase: 'SIGKILL',
        instance: 0,
        label: 'SIGKILL 1',
        atSeconds: 50,
        exitSeconds: 0,
        exit: 'SIGKILL',
        rebalancedSeconds: undefined,
        split: undefined
      },
    ],
    windows: [
      { ...window, label: 'steady', partitionsStalled: 0, longestStallSeconds: 0.4, duplicates: 0 },
      { ...window, label: 'SIGTERM 1', partitionsStalled: 8, longestStallSeconds: 3.1, duplicates: 0 },
      { ...window, label: 'SIGKILL 1', partitionsStalled: 8, longestStallSeconds: 41.7, duplicates: 350, openStalls: 2, partitionsStalledBefore: 3 },
    ],
    duplicatesOutsideWindows: 0,
    polls: 500,
    finalExits: ['exit 0', 'exit 0', 'exit 0'],
  }
  const failures = [{ contender: 'sidecar-eos', reason: 'timed out' }]
  const markdown = instancesRestartMarkdown(TEST_ENVIRONMENT, settings, 'npm run bench -- --instances-rolling-restart', [run], failures)
  assert.match(markdown, /^# Scenario instances-rolling-restart/)
  assert.match(markdown, /Command: `npm run bench -- --instances-rolling-restart`/)
  assert.ok(markdown.includes('| mirror-sidecar (this project) | 8/n/a/8 | 120,000 | 120,000 | 120,350 | 0 | 350 | 0 | 2.5 s | exit 0, exit 0, exit 0 |'))
  assert.match(markdown, /\| sidecar \| steady \| {2}\| {2}\| {2}\| 0 \| 0 \| 0\.4 s \| 0\.3 s \| 0 \|/)
  assert.match(markdown, /\| sidecar \| SIGTERM 1 \| 0 \| 0\.8 s \(exit 0\) \| 4\.2 s \(12\/0\/12\) \| 0 \| 8 \| 3\.1 s \| 0\.3 s \| 0 \|/)
  assert.ok(markdown.includes('| sidecar | SIGKILL 1 | 0 | 0.0 s (SIGKILL) | not within the interval | 3 | 8 (2 not ended) | 41.7 s | 0.3 s | 350 |'))
  assert.match(markdown, /## Runs that did not complete\n\n- sidecar-eos: timed out/)
})
