import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../../../../src/kafka/wire/group/consumer-protocol.js'

test('a subscription is written as Java\'s ConsumerProtocol v3 writes it and read back', () => {
  const subscription = {
    topics: ['a', 'b'],
    userData: null,
    ownedPartitions: [{ topic: 'a', partition: 1 }, { topic: 'a', partition: 0 }],
    generationId: 7,
    rackId: null,
  }
  const bytes = encodeSubscription(subscription)
  // int16 version 3; topics [2: "a", "b"]; user data null (-1); owned [1: "a" [0, 1]]; generation 7; rack null (-1).
  const expected = Buffer.from([
    0, 3, 0, 0, 0, 2, 0, 1, 0x61, 0, 1, 0x62, 0xff, 0xff, 0xff, 0xff,
    0, 0, 0, 1, 0, 1, 0x61, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1,
    0, 0, 0, 7, 0xff, 0xff,
  ])
  assert.deepEqual(bytes, expected)
  assert.deepEqual(decodeSubscription(bytes), { ...subscription, ownedPartitions: [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 1 }] })
})

test('a v0 subscription (topics and user data only) reads with no owned partitions and generation -1', () => {
  const v0 = Buffer.from([0, 0, 0, 0, 0, 1, 0, 1, 0x61, 0, 0, 0, 2, 9, 9])
  assert.deepEqual(decodeSubscription(v0), { topics: ['a'], userData: Buffer.from([9, 9]), ownedPartitions: [], generationId: -1, rackId: null })
})

test('an assignment round-trips, and empty bytes are no partitions', () => {
  const partitions = [{ topic: 'x', partition: 2 }, { topic: 'y', partition: 0 }]
  assert.deepEqual(decodeAssignment(encodeAssignment(partitions)), partitions)
  assert.deepEqual(decodeAssignment(Buffer.alloc(0)), [])
})
