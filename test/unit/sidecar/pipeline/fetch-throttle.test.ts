import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FetchThrottle } from '../../../../src/sidecar/pipeline/fetch-throttle.js'

/** A clock the test moves by hand. */
function fakeClock (): { nowMs: () => number, advance: (ms: number) => void } {
  let now = 1_000_000
  return { nowMs: () => now, advance: ms => { now += ms } }
}

test('a full bucket lets one second of the limit through at once, then each byte waits its share of a second', () => {
  const clock = fakeClock()
  const throttle = new FetchThrottle(1000, clock.nowMs)
  assert.deepEqual(throttle.reserve(1000), { waitMs: 0, throttledMs: 0 })
  assert.deepEqual(throttle.reserve(500), { waitMs: 500, throttledMs: 500 })
  // The next one waits behind the debt of the one before.
  assert.deepEqual(throttle.reserve(250), { waitMs: 750, throttledMs: 250 })
  clock.advance(750)
  assert.equal(throttle.tokens, 0)
  assert.deepEqual(throttle.reserve(0), { waitMs: 0, throttledMs: 0 }, 'nothing fetched, nothing to wait for')
})

test('tokens refill at the limit and never beyond one second of it', () => {
  const clock = fakeClock()
  const throttle = new FetchThrottle(2048, clock.nowMs)
  throttle.reserve(2048)
  clock.advance(250)
  assert.equal(throttle.tokens, 512)
  clock.advance(60_000)
  assert.equal(throttle.tokens, 2048)
  assert.equal(throttle.burstBytes, 2048)
})

test('a batch larger than the burst is never refused: it waits for its bytes at the limit', () => {
  const clock = fakeClock()
  const throttle = new FetchThrottle(1000, clock.nowMs)
  assert.deepEqual(throttle.reserve(5000), { waitMs: 4000, throttledMs: 4000 })
})

test('overlapping waits count once as throttled time; a wait after an idle spell counts again', () => {
  const clock = fakeClock()
  const throttle = new FetchThrottle(1000, clock.nowMs)
  throttle.reserve(1000)
  const first = throttle.reserve(1000)
  clock.advance(200)
  const second = throttle.reserve(1000)
  assert.equal(first.throttledMs, 1000)
  assert.equal(second.waitMs, 1800)
  assert.equal(second.throttledMs, 1000, 'only the part after the first wait ends is new')
  clock.advance(10_000)
  assert.equal(throttle.reserve(1500).throttledMs, 500)
})

test('bytes handed on by any time t never exceed the limit times (1 s + t), whatever the batch sizes', () => {
  const clock = fakeClock()
  const startMs = clock.nowMs()
  const limit = 4096
  const throttle = new FetchThrottle(limit, clock.nowMs)
  // A deterministic mix of small and larger-than-burst batches, each handed on once its wait is over.
  const releases: Array<{ atMs: number, bytes: number }> = []
  let seed = 7
  for (let i = 0; i < 400; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    const bytes = 1 + (seed % 9000)
    const { waitMs } = throttle.reserve(bytes)
    releases.push({ atMs: clock.nowMs() + waitMs, bytes })
    clock.advance(seed % 700)
  }
  releases.sort((a, b) => a.atMs - b.atMs)
  let handedOn = 0
  for (const release of releases) {
    handedOn += release.bytes
    const bound = limit * (1 + (release.atMs - startMs) / 1000)
    assert.ok(handedOn <= bound + 1e-6, `${handedOn} bytes by ${release.atMs - startMs} ms, bound ${bound}`)
  }
  // And the limit is reached, not just respected: the last release is within a batch of the bound.
  const last = releases[releases.length - 1] as { atMs: number }
  assert.ok(handedOn >= limit * ((last.atMs - startMs) / 1000) - 9000)
})

test('a clock that steps back neither adds nor takes tokens', () => {
  let now = 5000
  const throttle = new FetchThrottle(1000, () => now)
  throttle.reserve(1000)
  now = 4000
  assert.equal(throttle.tokens, 0)
  now = 5500
  assert.equal(throttle.tokens, 500)
})

test('a limit that is not a positive number is a programming error', () => {
  assert.throws(() => new FetchThrottle(0), RangeError)
  assert.throws(() => new FetchThrottle(Number.NaN), RangeError)
})
