import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { applyHeapGrowth, SIDECAR_HEAP_GROWING_PERCENT } from '../../src/shared/heap-growth.js'

test('the sidecar sets its heap growing percent unless node was given one on the command line or in NODE_OPTIONS', () => {
  assert.deepEqual(applyHeapGrowth(['--enable-source-maps'], '--max-old-space-size=128'), { applied: true, percent: SIDECAR_HEAP_GROWING_PERCENT })
  assert.deepEqual(applyHeapGrowth(['--heap-growing-percent=0'], undefined), { applied: false, reason: 'given' })
  assert.deepEqual(applyHeapGrowth(['--heap_growing_percent', '20'], undefined), { applied: false, reason: 'given' })
  assert.deepEqual(applyHeapGrowth([], '--max-old-space-size=128 --heap-growing-percent=80'), { applied: false, reason: 'given' })
  assert.deepEqual(applyHeapGrowth(['--heap-growing-percentage=3'], '--no-heap-growing-percent-x'), { applied: true, percent: SIDECAR_HEAP_GROWING_PERCENT })
})

test('V8 takes the flag at run time: the heap stays smaller with it than without', () => {
  // Keeps 60 MiB alive and allocates 1 GiB of arrays that live for 40 allocations each; prints the largest heap seen.
  const script = `
    if (process.argv[1] === 'set') require('node:v8').setFlagsFromString('--heap-growing-percent=${SIDECAR_HEAP_GROWING_PERCENT}')
    const live = []
    for (let i = 0; i < 60; i++) live.push(new Array(128 * 1024).fill(i))
    let recent = []
    let largest = 0
    for (let round = 0; round < 2000; round++) {
      recent.push(new Array(64 * 1024).fill(round))
      if (recent.length > 40) recent = []
      if (round % 50 === 0) largest = Math.max(largest, process.memoryUsage().heapTotal)
    }
    console.log(live.length > 0 ? largest : 0)`
  const heapBytes = (mode: string): number => Number(spawnSync(process.execPath, ['-e', script, mode], { encoding: 'utf8' }).stdout.trim())
  const without = heapBytes('unset')
  const withFlag = heapBytes('set')
  assert.ok(withFlag > 0 && without > 0)
  assert.ok(withFlag < 0.75 * without, `heap with --heap-growing-percent=${SIDECAR_HEAP_GROWING_PERCENT}: ${withFlag >> 20} MiB, without: ${without >> 20} MiB`)
})
