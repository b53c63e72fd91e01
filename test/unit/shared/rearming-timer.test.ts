import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RearmingTimer } from '../../../src/shared/rearming-timer.js'

test('runs never overlap: the next run is armed only when a slow one ended; stop ends the runs', { timeout: 10_000 }, async () => {
  let running = 0
  let overlapped = false
  let runs = 0
  let release: (() => void) | undefined
  const timer = new RearmingTimer(5, async () => {
    running++
    if (running > 1) overlapped = true
    runs++
    if (runs === 1) await new Promise<void>(resolve => { release = resolve })
    running--
  })
  timer.start()
  while (release === undefined) await new Promise(resolve => setTimeout(resolve, 1))
  // The first run is held for many intervals: no second run may start meanwhile.
  await new Promise(resolve => setTimeout(resolve, 50))
  assert.equal(runs, 1, 'no run started while the first was still going')
  release()
  while (runs < 3) await new Promise(resolve => setTimeout(resolve, 1))
  timer.stop()
  const stoppedAt = runs
  await new Promise(resolve => setTimeout(resolve, 30))
  assert.equal(runs, stoppedAt, 'no run starts after stop')
  assert.equal(overlapped, false)
})

test('a task that rejects does not end the timer', { timeout: 10_000 }, async () => {
  let runs = 0
  const timer = new RearmingTimer(2, async () => { runs++; throw new Error('boom') })
  timer.start()
  while (runs < 3) await new Promise(resolve => setTimeout(resolve, 1))
  timer.stop()
})

test('an interval given as a function is asked again before each wait', { timeout: 10_000 }, async () => {
  const asked: number[] = []
  let runs = 0
  const timer = new RearmingTimer(() => { asked.push(runs); return 1 }, async () => { runs++ })
  timer.start()
  while (runs < 3) await new Promise(resolve => setTimeout(resolve, 1))
  timer.stop()
  assert.deepEqual(asked.slice(0, 3), [0, 1, 2], 'once before the first wait, then after each run')
})
