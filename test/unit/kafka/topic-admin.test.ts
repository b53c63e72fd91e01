import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopicsBatches, MAX_PARTITIONS_PER_CREATE_TOPICS } from '../../../src/kafka/topic-admin.js'

test('CreateTopics requests stay within the partitions a KRaft controller takes at once', () => {
  const topics = Array.from({ length: 1_250 }, (_, i) => ({ name: `t${i}`, partitions: 8 }))
  const batches = createTopicsBatches(topics)
  assert.ok(batches.every(batch => batch.reduce((sum, t) => sum + t.partitions, 0) <= MAX_PARTITIONS_PER_CREATE_TOPICS))
  assert.deepEqual(batches.flat(), topics, 'every topic once, in order')
  assert.equal(batches.length, 2)
  assert.deepEqual(createTopicsBatches([]), [])
  assert.deepEqual(createTopicsBatches([{ partitions: 6_000 }, { partitions: 1 }]).map(b => b.length), [1, 1], 'a topic larger than the bound goes alone')
})
