import assert from 'node:assert/strict'
import { test } from 'node:test'
import { collectorFunction, heapBytes, IDLE_GC_POLICY, IdleGc, shouldCollect, type IdleGcState } from '../../../src/bin/idle-gc.js'
import { configFromMm1 } from '../../../src/config/mm1-args.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { silentLogger } from '../../../src/shared/logger.js'
import { writeProperties } from '../../helpers/sidecar.js'

const MiB = 2 ** 20
async function waitFor (condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

const idle: IdleGcState = { idleChecksInRow: 1, heapBytes: 200 * MiB, keptBytes: 70 * MiB, msSinceLastCollection: Number.POSITIVE_INFINITY }

test('idle gc: collects once idle for a check with the heap grown 1.5x and 32 MiB past what the last full collection kept', () => {
  assert.equal(shouldCollect(IDLE_GC_POLICY, idle), true)
  assert.equal(shouldCollect({ ...IDLE_GC_POLICY, idleChecks: 2 }, idle), false, 'one idle check of two')
  assert.equal(shouldCollect(IDLE_GC_POLICY, { ...idle, idleChecksInRow: 0 }), false, 'busy')
  assert.equal(shouldCollect(IDLE_GC_POLICY, { ...idle, heapBytes: 104 * MiB }), false, 'grown by less than 1.5x')
  assert.equal(shouldCollect(IDLE_GC_POLICY, { ...idle, heapBytes: 105 * MiB }), true, '1.5x and 35 MiB more')
  assert.equal(shouldCollect(IDLE_GC_POLICY, { ...idle, heapBytes: 40 * MiB, keptBytes: 10 * MiB }), false, '4x but only 30 MiB more')
  assert.equal(shouldCollect(IDLE_GC_POLICY, { ...idle, msSinceLastCollection: 59_999 }), false, 'at most once a minute')
  assert.equal(shouldCollect(IDLE_GC_POLICY, { ...idle, msSinceLastCollection: 60_000 }), true)
})

test('idle gc: the component collects once idle and grown, takes what the collection kept as the new baseline, and stops', async () => {
  let heap = 70 * MiB
  let collections = 0
  const collect = async (): Promise<void> => { collections++; heap = 75 * MiB }
  const gc = new IdleGc(
    silentLogger,
    { ...IDLE_GC_POLICY, checkIntervalMs: 20, idleChecks: 1, minIntervalMs: 0 },
    { heapBytes: () => heap, collector: () => collect }
  )
  gc.start()
  try {
    await waitFor(() => gc.checks >= 3)
    assert.equal(collections, 0, 'the heap has not grown')
    heap = 200 * MiB
    await waitFor(() => gc.collections === 1)
    const checks = gc.checks
    await waitFor(() => gc.checks >= checks + 3)
    assert.equal(collections, 1, 'the collection kept 75 MiB: nothing to collect until the heap grows again')
    heap = 150 * MiB
    await waitFor(() => gc.collections === 2)
  } finally {
    gc.stop()
  }
  const checks = gc.checks
  await new Promise(resolve => setTimeout(resolve, 100))
  assert.equal(gc.checks, checks, 'no check after stop()')
})

test('idle gc: on this node the collector exists and a collection frees garbage only a full collection frees', async () => {
  const collect = collectorFunction()
  assert.equal(typeof collect, 'function')
  // Held while allocated (so young collections move it to the old generation), then dropped.
  let held: Array<{ i: number, s: string }> | undefined = []
  for (let i = 0; i < 600_000; i++) held.push({ i, s: `garbage-${i}` })
  held = undefined
  const before = heapBytes()
  await collect?.({ type: 'major', execution: 'async' })
  const after = heapBytes()
  assert.equal(held, undefined)
  assert.ok(after < before - 16 * MiB, `before ${Math.round(before / MiB)} MiB, after ${Math.round(after / MiB)} MiB`)
})

test('idle gc: --idle.gc takes true or false, default true', () => {
  const base = {
    'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
    'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
    whitelist: 'orders',
  }
  assert.equal(configFromMm1(base).idleGc, true)
  assert.equal(configFromMm1({ ...base, 'idle.gc': 'false' }).idleGc, false)
  assert.throws(
    () => configFromMm1({ ...base, 'idle.gc': 'sometimes' }),
    (error: unknown) => error instanceof ConfigError && error.message === '--idle.gc "sometimes": expected true or false'
  )
})
