import { test } from 'node:test'
import assert from 'node:assert/strict'
import { batchSpanInput, traceparentOf } from '../../../src/ports/batch-span-input.js'
import type { MirrorBatch } from '../../../src/ports/mirror-batch.js'

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

test('traceparentOf reads bytes, strings and repeated headers, undefined when absent', () => {
  assert.equal(traceparentOf({ traceparent: Buffer.from(TP) }), TP)
  assert.equal(traceparentOf({ traceparent: TP }), TP)
  assert.equal(traceparentOf({ traceparent: [Buffer.from(TP), 'other'] }), TP)
  assert.equal(traceparentOf({ other: 'x' }), undefined)
  assert.equal(traceparentOf(undefined), undefined)
})

test('traceparentOf: a null header value is no traceparent', () => {
  assert.equal(traceparentOf({ traceparent: null }), undefined)
  assert.equal(traceparentOf({ traceparent: [null, 'x'] }), undefined, 'the first value counts')
})

test('batchSpanInput describes a MirrorBatch and reads headers only when asked', () => {
  const batch: MirrorBatch = {
    sourceTopic: 'orders',
    targetTopic: 'eu.orders',
    partition: 2,
    firstOffset: 10n,
    nextOffset: 13n,
    bytes: 30,
    pollTimeMs: 0,
    records: [
      { offset: '10', key: null, value: null, timestamp: '1', headers: { traceparent: Buffer.from(TP) } },
      { offset: '11', key: null, value: null, timestamp: '2' },
      { offset: '12', key: null, value: null, timestamp: '3', headers: { traceparent: TP } },
    ],
  }
  const flow = { flow: 'eu->us', source: 'eu', target: 'us' }
  assert.deepEqual(batchSpanInput(flow, batch, true, 'mirror-group'), {
    flow: 'eu->us',
    sourceAlias: 'eu',
    targetAlias: 'us',
    topic: 'orders',
    targetTopic: 'eu.orders',
    partition: 2,
    firstOffset: 10n,
    lastOffset: 12n,
    count: 3,
    traceparents: [TP, undefined, TP],
    consumerGroup: 'mirror-group',
  })
  assert.deepEqual(batchSpanInput(flow, batch, false).traceparents, [])
})
