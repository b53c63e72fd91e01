import assert from 'node:assert/strict'
import { test } from 'node:test'
import { coordinatorPartition } from '../../../../src/sidecar/pipeline/flow-coordinator.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'

test('the coordinator partition is partition 0 of the first mirrored topic by name, whatever the order topics come in', () => {
  assert.equal(coordinatorPartition(['orders', 'audit', 'payments']), partitionKey('audit', 0))
  assert.equal(coordinatorPartition(new Set(['payments', 'audit', 'orders'])), partitionKey('audit', 0))
  assert.equal(coordinatorPartition([]), undefined)
})
