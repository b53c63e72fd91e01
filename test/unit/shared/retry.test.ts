import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCodes, MirrorError } from '../../../src/shared/errors.js'
import { backoffMs, retry } from '../../../src/shared/retry.js'

const retriable = (): MirrorError => new MirrorError(ErrorCodes.CONNECTION, 'down', { retriable: true })

test('retries retriable errors with growing capped backoff and reports each retry', async () => {
  const seen: Array<[number, number]> = []
  let calls = 0
  const result = await retry(
    async () => {
      if (++calls < 4) throw retriable()
      return 'ok'
    },
    { initialBackoffMs: 1, maxBackoffMs: 4, onRetry: (_e, attempt, wait) => seen.push([attempt, wait]) }
  )
  assert.equal(result, 'ok')
  assert.deepEqual(seen.map(([attempt]) => attempt), [1, 2, 3])
  for (const [attempt, wait] of seen) assert.ok(wait <= Math.min(4, 2 ** (attempt - 1)), `attempt ${attempt} waited ${wait}`)
  assert.equal(backoffMs(10, { initialBackoffMs: 100, maxBackoffMs: 1_000 }, () => 1), 1_000)
  assert.equal(backoffMs(1, { initialBackoffMs: 100 }, () => 0), 50)
})

test('does not retry non-retriable errors, stops after maxAttempts and when the signal aborts', async () => {
  let calls = 0
  await assert.rejects(retry(async () => { calls++; throw new MirrorError(ErrorCodes.SEND_FAILED, 'too large') }), /too large/)
  assert.equal(calls, 1)
  calls = 0
  await assert.rejects(retry(async () => { calls++; throw retriable() }, { maxAttempts: 3, initialBackoffMs: 1 }), /down/)
  assert.equal(calls, 3)
  const controller = new AbortController()
  calls = 0
  const running = retry(async () => { calls++; throw retriable() }, { initialBackoffMs: 10_000, signal: controller.signal })
  controller.abort()
  await assert.rejects(running, /down/)
  assert.equal(calls, 1)
})
