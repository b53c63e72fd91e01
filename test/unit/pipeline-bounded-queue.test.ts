import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BoundedQueue, QueueClosedError } from '../../src/pipeline/bounded-queue.js'

const item = (records: number, bytes: number, tag = ''): { records: { length: number }, bytes: number, tag: string } => ({ records: { length: records }, bytes, tag })

test('push waits while the queue is full in records and resumes after a release', async () => {
  const queue = new BoundedQueue<ReturnType<typeof item>>(10, 1_000, 1)
  await queue.push(item(8, 10, 'a'), 0)
  let pushed = false
  const second = queue.push(item(5, 10, 'b'), 0).then(() => { pushed = true })
  await new Promise(setImmediate)
  assert.equal(pushed, false, 'no room for 5 more records')
  const taken = await queue.take(0, 1_000)
  assert.deepEqual(taken.map(i => i.tag), ['a'])
  await new Promise(setImmediate)
  assert.equal(pushed, false, 'taking does not free capacity: in-flight records still count')
  queue.release(taken[0] as ReturnType<typeof item>)
  await second
  assert.equal(queue.records, 5)
})

test('the byte bound holds as well, and an item larger than the capacity is admitted alone', async () => {
  const queue = new BoundedQueue<ReturnType<typeof item>>(100, 100, 1)
  await queue.push(item(1, 500, 'huge'), 0)
  assert.equal(await queue.pushWithin(item(1, 1, 'small'), 0, 20), false, 'nothing fits next to an oversized item')
  queue.release((await queue.take(0, 1_000))[0] as ReturnType<typeof item>)
  assert.equal(await queue.pushWithin(item(1, 60, 'x'), 0, 20), true)
  assert.equal(await queue.pushWithin(item(1, 60, 'y'), 0, 20), false, '120 bytes exceed the 100 byte bound')
})

test('take keeps lane order and stops before the byte limit, taking at least one item', async () => {
  const queue = new BoundedQueue<ReturnType<typeof item>>(100, 10_000, 2)
  for (const tag of ['a', 'b', 'c']) await queue.push(item(1, 40, tag), 0)
  await queue.push(item(1, 40, 'other'), 1)
  assert.deepEqual((await queue.take(0, 90)).map(i => i.tag), ['a', 'b'])
  assert.deepEqual((await queue.take(0, 10)).map(i => i.tag), ['c'])
  assert.deepEqual((await queue.take(1, 10)).map(i => i.tag), ['other'])
})

test('close fails waiting pushes, lets lanes drain, then take returns []', async () => {
  const queue = new BoundedQueue<ReturnType<typeof item>>(1, 100, 1)
  await queue.push(item(1, 1, 'a'), 0)
  const blocked = queue.push(item(1, 1, 'b'), 0)
  const waitingTake = new BoundedQueue<ReturnType<typeof item>>(1, 1, 1)
  const emptyTake = waitingTake.take(0, 10)
  queue.close()
  waitingTake.close()
  await assert.rejects(blocked, QueueClosedError)
  assert.deepEqual((await queue.take(0, 10)).map(i => i.tag), ['a'])
  assert.deepEqual(await queue.take(0, 10), [])
  assert.deepEqual(await emptyTake, [])
  await assert.rejects(queue.push(item(1, 1), 0), QueueClosedError)
})
