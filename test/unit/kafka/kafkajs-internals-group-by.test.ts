import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)
const groupBy = require('@kafka-mirror-sidecar/kafkajs/src/utils/groupBy') as <T, K>(
  array: readonly T[],
  groupFn: (item: T) => K | Promise<K>,
) => Promise<Map<K, T[]>>

test('kafkajs\' groupBy (patched to append in place) groups in order, with async keys, into arrays of their own', async () => {
  const items = Array.from({ length: 10 }, (_, i) => ({ i, group: i % 3 === 0 ? 'a' : 'b' }))
  const grouped = await groupBy(items, async item => item.group)
  assert.deepEqual([...grouped.keys()], ['a', 'b'])
  assert.deepEqual(grouped.get('a')?.map(item => item.i), [0, 3, 6, 9])
  assert.deepEqual(grouped.get('b')?.map(item => item.i), [1, 2, 4, 5, 7, 8])
  assert.notEqual(grouped.get('a'), items)
  assert.equal((await groupBy([], () => 'x')).size, 0)
})
