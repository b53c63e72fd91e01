import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseBenchArgs, UsageError } from '../bench-options.js'
import { maxPerSpan } from '../cluster-warm-up.js'
import { requestRates, type LatencyFigures } from '../latency-run.js'
import { describeWindows, latencyWindows, p99Ratio, percentile, worstWindows } from '../latency-windows.js'
import { describeP99AgainstFloor, latencyMarkdown, latencyMedians, p99AgainstFloor } from '../report.js'
import { rotatedOrder } from '../run-order.js'
import { TEST_ENVIRONMENT } from './fixtures/environment.js'

test('percentile is the nearest rank of a sorted list; NaN when empty', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1)
  assert.equal(percentile(values, 0.5), 50)
  assert.equal(percentile(values, 0.99), 99)
  assert.equal(percentile(values, 1), 100)
  assert.equal(percentile([7], 0.99), 7)
  assert.ok(Number.isNaN(percentile([], 0.5)))
})

test('latency windows group records by send time from the start of the measured phase; the worst are those with the highest maximum', () => {
  const from = 1_000_000
  // Second 0: 100 records of 5 ms; second 1: one stalled record of 400 ms among 99 of 6 ms; second 3: 50 of 20 ms; one record before the phase.
  const sentAtMs = [
    from - 10,
    ...Array.from({ length: 100 }, (_, i) => from + i),
    ...Array.from({ length: 100 }, (_, i) => from + 1_000 + i),
    ...Array.from({ length: 50 }, () => from + 3_500),
  ]
  const latenciesMs = [900, ...Array<number>(100).fill(5), 400, ...Array<number>(99).fill(6), ...Array<number>(50).fill(20)]
  const windows = latencyWindows(sentAtMs, latenciesMs, from)
  assert.deepEqual(windows, [
    { startSeconds: 0, records: 100, p99Ms: 5, maxMs: 5 },
    { startSeconds: 1, records: 100, p99Ms: 6, maxMs: 400 },
    { startSeconds: 3, records: 50, p99Ms: 20, maxMs: 20 },
  ])
  assert.deepEqual(worstWindows(windows, 2).map(w => w.startSeconds), [1, 3])
  assert.equal(describeWindows(worstWindows(windows, 1)), 'at 1 s max 400 ms (p99 6 ms, 100 records)')
  assert.equal(describeWindows([]), 'no records')
  assert.throws(() => latencyWindows([1, 2], [1], from), RangeError)
})

test('the worst latency per 5 s span of 1 s windows shows how a warm-up settles', () => {
  const maxMs = (second: number): number => (second === 2 ? 900 : second === 7 ? 120 : 30)
  const windows = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(second => ({ startSeconds: second, records: 10, p99Ms: 1, maxMs: maxMs(second) }))
  assert.deepEqual(maxPerSpan(windows, 5), [900, 120, 30])
})

test("a mirror's p99 against the floor's p99: a ratio, NaN without a floor", () => {
  assert.equal(p99Ratio(66, 55), 1.2)
  assert.ok(Number.isNaN(p99Ratio(66, undefined)))
  assert.ok(Number.isNaN(p99Ratio(66, 0)))
  assert.ok(Number.isNaN(p99Ratio(Number.NaN, 55)))
})

function figures (contender: string, run: number, place: number, p99Ms: number): LatencyFigures {
  return {
    contender,
    run,
    place,
    produced: 10,
    received: 10,
    duplicates: 0,
    p50Ms: 5,
    p99Ms,
    maxMs: p99Ms,
    cpuSeconds: 1,
    cpuSystemSeconds: 0.2,
    peakRssBytes: 1,
    fetchesPerSecond: Number.NaN,
    producesPerSecond: Number.NaN,
    batchesPerSecond: Number.NaN,
    worstWindows: [],
  }
}

test('each mirror run is set against the no-mirror run with the same run number, not against a median', () => {
  const runs = [figures('direct', 1, 1, 50), figures('sidecar', 1, 2, 60), figures('sidecar', 2, 1, 40), figures('direct', 2, 2, 40), figures('mm2', 3, 1, 90)]
  assert.deepEqual(
    p99AgainstFloor(runs).map(row => [row.contender, row.run, row.place, row.ratio]),
    [['sidecar', 1, 2, 1.2], ['sidecar', 2, 1, 1], ['mm2', 3, 1, Number.NaN]]
  )
  assert.equal(describeP99AgainstFloor(runs.filter(row => row.run === 1)), 'p99 against the floor (50 ms): sidecar 60 ms 1.20×')
  assert.match(describeP99AgainstFloor([figures('mm2', 3, 1, 90)]), /floor was not measured/)
})

test('the latency order rotates one place per run, so over as many runs each contender is at every place once', () => {
  const order = ['direct', 'sidecar', 'mm2', 'mm1']
  const runs = [1, 2, 3, 4].map(run => rotatedOrder(order, run))
  assert.deepEqual(runs[0], order)
  assert.deepEqual(runs[1], ['sidecar', 'mm2', 'mm1', 'direct'])
  for (const name of order) assert.deepEqual(runs.map(run => run.indexOf(name)).sort(), [0, 1, 2, 3], name)
  assert.deepEqual(rotatedOrder(order, 5), order)
  assert.deepEqual(rotatedOrder([], 2), [])
})

test('the latency warm-ups: defaults 30 s through the clusters and 10 s per contender, 0 turns one off, only with --latency', () => {
  const defaults = parseBenchArgs(['--latency'])
  assert.equal(defaults.latencyWarmUpSeconds, 30)
  assert.equal(defaults.latencyTopicWarmUpSeconds, 10)
  const off = parseBenchArgs(['--latency', '--latency-warm-up-seconds', '0', '--latency-topic-warm-up-seconds', '0'])
  assert.equal(off.latencyWarmUpSeconds, 0)
  assert.equal(off.latencyTopicWarmUpSeconds, 0)
  assert.throws(
    () => parseBenchArgs(['--latency', '--latency-warm-up-seconds=-1']),
    (error: unknown) => error instanceof UsageError && error.message === '--latency-warm-up-seconds "-1": expected a whole number of seconds, 0 or more'
  )
  assert.throws(() => parseBenchArgs(['--latency-topic-warm-up-seconds', '5']), /is for the latency mode; add --latency/)
})

test('request rates are counter differences over the seconds between two readings; NaN without both readings or without metrics', () => {
  const before = { atMs: 1_000, fetches: 100, produces: 50, batches: 300 }
  assert.deepEqual(requestRates(before, { atMs: 3_000, fetches: 1_100, produces: 650, batches: 2_300 }), {
    fetchesPerSecond: 500,
    producesPerSecond: 300,
    batchesPerSecond: 1_000,
  })
  assert.ok(Number.isNaN(requestRates(undefined, before).fetchesPerSecond))
  assert.ok(Number.isNaN(requestRates(before, { atMs: 2_000, fetches: Number.NaN, produces: 60, batches: 310 }).fetchesPerSecond))
})

test('the latency report gives the kernel part of the CPU, and the sidecar requests section only for contenders with request figures', () => {
  const env = TEST_ENVIRONMENT
  const options = parseBenchArgs(['--latency', '--duration-seconds', '30'])
  const sidecar = {
    ...figures('sidecar', 1, 2, 20),
    cpuSeconds: 6,
    cpuSystemSeconds: 1.5,
    fetchesPerSecond: 400,
    producesPerSecond: 200,
    batchesPerSecond: 800,
  }
  const mm1 = { ...figures('mm1', 1, 3, 20), cpuSeconds: 7 }
  const medians = [
    latencyMedians([sidecar], { name: 'sidecar', label: 'the sidecar', heap: 'h' }),
    latencyMedians([mm1], { name: 'mm1', label: 'MirrorMaker 1', heap: 'h' }),
  ]
  const text = latencyMarkdown(env, options, medians, [sidecar, mm1])
  assert.match(text, /\| the sidecar \|[^\n]*\| 6\.0 \(1\.5\) \|/)
  assert.match(text, /\| MirrorMaker 1 \|[^\n]*\| 7\.0 \(0\.2\) \|/)
  // 6 CPU s over 30 s at 600 requests/s: 333 µs each; 2 batches per fetch, 4 per produce request.
  assert.match(text, /## Requests of the sidecar[\s\S]*\| the sidecar \| 400 \| 200 \| 800 \| 2\.00 \| 4\.00 \| 333 \|/)
  assert.doesNotMatch(text, /\| MirrorMaker 1 \| NaN/)
  const withoutSidecar = latencyMarkdown(env, options, [medians[1]!], [mm1])
  assert.doesNotMatch(withoutSidecar, /## Requests of the sidecar/)
})

test('the bare forwarders are latency-mode contenders only', () => {
  assert.deepEqual(parseBenchArgs(['--latency', '--contenders', 'bare,bare-kafkajs,sidecar']).contenders, ['bare', 'bare-kafkajs', 'sidecar'])
  assert.throws(() => parseBenchArgs(['--contenders', 'bare-kafkajs']), /the bare-kafkajs contender .* latency mode only/)
  assert.throws(
    () => parseBenchArgs(['--contenders', 'bare,sidecar']),
    (error: unknown) =>
      error instanceof UsageError && /--contenders "bare,sidecar": the bare contender .* latency mode only; add --latency/.test(error.message)
  )
})
