import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LOSS_CHECK_MAX_INTERVAL_MS, LOSS_CHECK_MIN_INTERVAL_MS, lossCheckIntervalMs } from '../../../../src/sidecar/integrity/loss-monitor.js'

test('loss check interval: 5 s up to 3,333 partitions, then 1.5 ms per partition, at most 30 s', () => {
  assert.equal(lossCheckIntervalMs(0), LOSS_CHECK_MIN_INTERVAL_MS)
  assert.equal(lossCheckIntervalMs(2_400), 5_000)
  assert.equal(lossCheckIntervalMs(3_333), 5_000)
  assert.equal(lossCheckIntervalMs(4_000), 6_000)
  assert.equal(lossCheckIntervalMs(10_000), 15_000)
  assert.equal(lossCheckIntervalMs(20_000), 30_000)
  assert.equal(lossCheckIntervalMs(100_000), LOSS_CHECK_MAX_INTERVAL_MS)
})
