import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BoundedQueue, QueueClosedError } from '../../../../src/sidecar/pipeline/bounded-queue.js'

const item = (records: number, bytes: number, tag = ''): { records: { length: number }, bytes: number, tag: string } => ({
  records: { length: records },
  bytes,
  tag,
})

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
  queue.checkInvariants()
  const small = item(1, 1, 'small')
  assert.equal(await queue.pushWithin(small, 0, 20), false, 'nothing fits next to an oversized item')
  queue.withdraw(small)
  queue.release((await queue.take(0, 1_000))[0] as ReturnType<typeof item>)
  queue.checkInvariants()
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

const keyed = (key: string, tag: string, bytes = 10): { records: { length: number }, bytes: number, tag: string, key: string } => ({
  records: { length: 1 },
  bytes,
  tag,
  key,
})
type Keyed = ReturnType<typeof keyed>

test('shared lanes: the batches pushed in one turn go to one taker together, partitions in arrival order', async () => {
  const queue = new BoundedQueue<Keyed>(100, 10_000, { keyOf: i => i.key })
  const first = queue.take(0, 1_000)
  const second = queue.take(1, 1_000)
  await queue.push(keyed('p0', 'a'))
  await queue.push(keyed('p1', 'b'))
  await queue.push(keyed('p0', 'c'))
  const taken = await first
  assert.deepEqual(taken.map(i => i.tag), ['a', 'c', 'b'], 'one taker, each partition whole, partitions by arrival')
  let secondTook = false
  void second.then(() => { secondTook = true })
  await new Promise(setImmediate)
  assert.equal(secondTook, false, 'nothing left for the other taker')
  queue.close()
  assert.deepEqual(await second, [])
})

test('shared lanes: a partition in flight is not taken again until all of its taken batches are released; others are', async () => {
  const queue = new BoundedQueue<Keyed>(100, 10_000, { keyOf: i => i.key })
  await queue.push(keyed('p0', 'a'))
  await queue.push(keyed('p0', 'b'))
  const inFlight = await queue.take(0, 1_000)
  assert.deepEqual(inFlight.map(i => i.tag), ['a', 'b'])
  await queue.push(keyed('p0', 'c'))
  await queue.push(keyed('p1', 'x'))
  assert.deepEqual((await queue.take(1, 1_000)).map(i => i.tag), ['x'], 'only the partition not in flight')
  let next: Keyed[] | undefined
  void queue.take(1, 1_000).then(taken => { next = taken })
  queue.release(inFlight[0] as Keyed)
  await new Promise(setImmediate)
  await new Promise(setImmediate)
  assert.equal(next, undefined, 'p0 still has a batch in flight')
  queue.release(inFlight[1] as Keyed)
  await new Promise(setImmediate)
  await new Promise(setImmediate)
  assert.deepEqual((next as Keyed[] | undefined)?.map(i => i.tag), ['c'], 'p0 is taken again once its request is done')
})

test('shared lanes: take stops before the byte limit (at least one batch) and drainQueued leaves batches in flight alone', async () => {
  const queue = new BoundedQueue<Keyed>(100, 10_000, { keyOf: i => i.key })
  await queue.push(keyed('p0', 'a', 60))
  await queue.push(keyed('p1', 'b', 60))
  await queue.push(keyed('p2', 'c', 200))
  assert.deepEqual((await queue.take(0, 100)).map(i => i.tag), ['a'])
  assert.deepEqual((await queue.take(1, 100)).map(i => i.tag), ['b'])
  assert.deepEqual((await queue.take(2, 100)).map(i => i.tag), ['c'], 'one batch larger than the limit goes alone')
  await queue.push(keyed('p0', 'd'))
  await queue.push(keyed('p3', 'e'))
  assert.deepEqual(queue.drainQueued().map(i => i.tag).sort(), ['d', 'e'])
  assert.equal(queue.records, 3, 'the three batches in flight still count')
})

test('whenEmpty resolves at the release that empties the queue, bytes held in two steps included', async () => {
  const queue = new BoundedQueue<ReturnType<typeof item>>(100, 1_000, 1)
  await queue.whenEmpty()
  await queue.push(item(2, 10, 'a'), 0)
  await queue.push(item(3, 10, 'b'), 0)
  let empty = false
  const waiting = queue.whenEmpty().then(() => { empty = true })
  const [a, b] = await queue.take(0, 1_000) as [ReturnType<typeof item>, ReturnType<typeof item>]
  queue.release(a)
  queue.release(b, 'records')
  await new Promise(setImmediate)
  assert.equal(empty, false, 'the bytes of b are still held')
  assert.equal(queue.records, 0)
  queue.release(b, 'bytes')
  await waiting
  assert.equal(empty, true)
  assert.equal(queue.bytes, 0)
})

const sized = (key: string, tag: string, records: number): Keyed => ({ records: { length: records }, bytes: records, tag, key })

test('a batch of 12,000 records (capacity 10,000) is admitted amid steady traffic of other partitions, before any push that came after it', async () => {
  const queue = new BoundedQueue<Keyed>(10_000, 64 * 1024 * 1024, { keyOf: i => i.key })
  const admitted: string[] = []
  const pushes: Array<Promise<void>> = []
  const push = (batch: Keyed): void => { pushes.push(queue.push(batch).then(() => { admitted.push(batch.tag) })) }
  const others = ['p1', 'p2', 'p3', 'p4']
  for (const key of others) push(sized(key, `${key}-0`, 1_000))
  await Promise.all(pushes)
  push(sized('p0', 'large', 12_000))
  const pushedAfterLarge = new Set<string>()
  // Each step: the producers take what they may, the other partitions' next batches are fetched
  // and pushed while those are in flight (so the queue never empties of itself), then the taken are acknowledged.
  for (let step = 1; step <= 20; step++) {
    const taken = await queue.take(0, Number.MAX_SAFE_INTEGER)
    for (const batch of taken) {
      if (batch.key === 'p0') continue
      const next = sized(batch.key, `${batch.key}-${step}`, 1_000)
      if (!admitted.includes('large')) pushedAfterLarge.add(next.tag)
      push(next)
    }
    await new Promise(setImmediate)
    queue.checkInvariants()
    for (const batch of taken) queue.release(batch)
    queue.checkInvariants()
    await new Promise(setImmediate)
    await new Promise(setImmediate)
    queue.checkInvariants()
  }
  assert.ok(admitted.includes('large'), `the 12,000-record batch was admitted (admitted: ${admitted.join(' ')})`)
  const largeAt = admitted.indexOf('large')
  const overtook = admitted.slice(0, largeAt).filter(tag => pushedAfterLarge.has(tag))
  assert.deepEqual(overtook, [], 'no push that came after the large batch was admitted before it')
  assert.ok(admitted.length > largeAt + others.length, 'the other partitions flowed on after it')
  queue.close()
  await Promise.allSettled(pushes)
})

test('a push that gives up (pushWithin) keeps its place in the line; withdraw lets the one behind it in', async () => {
  const queue = new BoundedQueue<Keyed>(10, 1_000, { keyOf: i => i.key })
  const first = sized('p0', 'first', 8)
  await queue.push(first)
  const waiting = sized('p1', 'waiting', 5)
  assert.equal(await queue.pushWithin(waiting, undefined, 10), false)
  const small = sized('p2', 'small', 1)
  assert.equal(await queue.pushWithin(small, undefined, 10), false, 'fits, but waits behind the push that came first')
  queue.checkInvariants()
  queue.release((await queue.take(0, 1_000))[0] as Keyed)
  assert.equal(await queue.pushWithin(small, undefined, 10), false, 'still behind the first push, which did not come back yet')
  assert.equal(await queue.pushWithin(waiting, undefined, 10), true, 'the first of the line kept its place')
  assert.equal(await queue.pushWithin(small, undefined, 10), true)
  queue.checkInvariants()
  const dropped = sized('p3', 'dropped', 10)
  const behind = sized('p4', 'behind', 1)
  assert.equal(await queue.pushWithin(dropped, undefined, 10), false)
  const admittedBehind = queue.pushWithin(behind, undefined, 1_000)
  queue.withdraw(dropped)
  assert.equal(await admittedBehind, true, 'in once the push before it was withdrawn')
  queue.checkInvariants()
})
