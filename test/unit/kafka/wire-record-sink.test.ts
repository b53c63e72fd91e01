import assert from 'node:assert/strict'
import { test } from 'node:test'
import { partitionSends, sameParts } from '../../../src/kafka/wire-record-sink.js'
import type { PartitionWrite } from '../../../src/ports/ports.js'
import { FakeForwardedBatch, records } from '../../helpers/fake-ports.js'

test('a send is cut per target partition, in first-seen order, each partition\'s writes and parts in order', () => {
  const a = records(0, 2)
  const b = records(2, 3)
  const forwarded = new FakeForwardedBatch(records(5, 1))
  const writes: PartitionWrite[] = [
    { topic: 't', partition: 1, records: a },
    { topic: 'u', partition: 0, records: [], forwarded },
    { topic: 't', partition: 1, records: b },
  ]
  const sends = partitionSends(writes)
  assert.deepEqual(sends.map(send => [send.topic, send.partition, send.writes.length]), [['t', 1, 2], ['u', 0, 1]])
  assert.equal(sends[0]!.parts[0], a)
  assert.equal(sends[0]!.parts[1], b)
  assert.equal(sends[1]!.parts[0], forwarded)
})

test('Invariant R\'s match: a resend of the same record arrays and forwarded batches is the same batch; copies, other orders and subsets are not', () => {
  const a = records(0, 2)
  const b = records(2, 3)
  const forwarded = new FakeForwardedBatch(records(5, 1))
  assert.ok(sameParts([a, b], [a, b]))
  assert.ok(sameParts([forwarded], [forwarded]))
  assert.ok(!sameParts([a, b], [b, a]))
  assert.ok(!sameParts([a, b], [a]))
  assert.ok(!sameParts([a], [[...a]]), 'equal records in another array are other records (a half, a decoded copy)')
  assert.ok(!sameParts([forwarded], [new FakeForwardedBatch(records(5, 1))]))
})
