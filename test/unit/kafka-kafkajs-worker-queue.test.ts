import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)

interface SharedRun { (options: { next: () => unknown }): Promise<void>, running: () => boolean }
interface Worker { run: SharedRun }
const createWorker = require('@kafka-mirror-sidecar/kafkajs/src/consumer/worker') as (options: {
  handler: (batch: number, meta: { workerId: number }) => Promise<void>
  workerId: number
}) => Worker
const createWorkerQueue = require('@kafka-mirror-sidecar/kafkajs/src/consumer/workerQueue') as (options: { workers: Worker[] }) => {
  push: (...batches: number[]) => Promise<void>
}

/** `count` workers around `handler`, each counting the calls of its `run` that started it (it was idle). */
function countedWorkers (count: number, handler: (batch: number) => Promise<void>): { workers: Worker[], started: () => number } {
  let started = 0
  const workers = Array.from({ length: count }, (_, workerId) => {
    const worker = createWorker({ handler: async batch => await handler(batch), workerId })
    const run = worker.run
    const counted = Object.assign((options: { next: () => unknown }) => {
      if (!run.running()) started++
      return run(options)
    }, { running: run.running })
    return { run: counted }
  })
  return { workers, started: () => started }
}

test('kafkajs\' worker queue (patched) wakes at most one idle worker per batch, and every batch is handled once', async () => {
  const handled: number[] = []
  const { workers, started } = countedWorkers(16, async batch => {
    await new Promise(resolve => setImmediate(resolve))
    handled.push(batch)
  })
  const queue = createWorkerQueue({ workers })
  await queue.push(1)
  assert.deepEqual(handled, [1])
  assert.equal(started(), 1, 'one batch, one worker started (not all 16)')
  await queue.push(2, 3, 4)
  assert.deepEqual(handled.slice(1).sort(), [2, 3, 4])
  assert.equal(started(), 4)
  // Pushes that overlap: workers still running take the new batches too; none is lost or handled twice.
  await Promise.all([queue.push(5, 6), queue.push(7), queue.push(8, 9, 10)])
  assert.deepEqual(handled.slice().sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  assert.ok(started() <= 4 + 6, `at most one start per batch, ${started()} starts`)
})

test('kafkajs\' worker queue (patched) still rejects the push whose batch failed', async () => {
  const { workers } = countedWorkers(4, async batch => {
    if (batch === 2) throw new Error('batch 2 failed')
  })
  const queue = createWorkerQueue({ workers })
  await assert.rejects(queue.push(1, 2, 3), /batch 2 failed/)
  await queue.push(4)
})
