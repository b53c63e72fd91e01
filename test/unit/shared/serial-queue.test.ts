import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SerialQueue } from '../../../src/shared/serial-queue.js'

/** A promise that resolves when `release` is called: a task held in flight. */
function gate (): { promise: Promise<void>, release: () => void } {
  let release = (): void => {}
  const promise = new Promise<void>(resolve => { release = resolve })
  return { promise, release }
}

test('tasks run one at a time in the order given, each after the one before settled', async () => {
  const queue = new SerialQueue()
  const events: string[] = []
  const gates = [gate(), gate(), gate()]
  const runs = gates.map((g, i) => queue.run(async () => {
    events.push(`start ${i}`)
    queue.checkInvariants()
    await g.promise
    events.push(`end ${i}`)
    return i
  }))
  assert.equal(queue.size, 3)
  await new Promise(setImmediate)
  assert.deepEqual(events, ['start 0'], 'only the first runs while it is held')
  // Released in reverse: the order stays the order given.
  gates[2]?.release()
  gates[1]?.release()
  await new Promise(setImmediate)
  assert.deepEqual(events, ['start 0'], 'the later tasks wait for the first')
  gates[0]?.release()
  assert.deepEqual(await Promise.all(runs), [0, 1, 2])
  assert.deepEqual(events, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2'])
  assert.equal(queue.size, 0)
  queue.checkInvariants()
})

test('a failed task rejects its own run only; the next task runs and idle never rejects', async () => {
  const queue = new SerialQueue()
  const failed = queue.run(async () => { throw new Error('write refused') })
  const thrown = queue.run(() => { throw new Error('thrown synchronously') })
  const next = queue.run(async () => 'ran')
  await assert.rejects(failed, /write refused/)
  await assert.rejects(thrown, /thrown synchronously/)
  assert.equal(await next, 'ran')
  await queue.idle
  assert.equal(queue.size, 0)
  queue.checkInvariants()
})

test('a task never starts within the call that gives it, even on an idle queue', async () => {
  const queue = new SerialQueue()
  let started = false
  const run = queue.run(() => { started = true })
  assert.equal(started, false)
  assert.equal(queue.size, 1)
  await run
  assert.equal(started, true)
})

test('idle settles once the tasks given until it was read have settled, not the ones given after', async () => {
  const queue = new SerialQueue()
  const first = gate()
  const second = gate()
  void queue.run(async () => { await first.promise })
  const idle = queue.idle
  const later = queue.run(async () => { await second.promise })
  let idleSettled = false
  void idle.then(() => { idleSettled = true })
  first.release()
  await idle
  assert.equal(idleSettled, true)
  assert.equal(queue.size, 1, 'the task given after idle was read still runs')
  second.release()
  await later
  assert.equal(queue.size, 0)
  queue.checkInvariants()
})
