import assert from 'node:assert/strict'
import { test } from 'node:test'
import { WriteChain } from '../../../../src/sidecar/offsets/write-chain.js'

/** A failure handler for writes that must not fail. */
const unexpected = (error: unknown): void => { assert.fail(`unexpected failure: ${String(error)}`) }

/** A promise that resolves when `release` is called: a write held in flight. */
function gate (): { promise: Promise<void>, release: () => void } {
  let release = (): void => {}
  const promise = new Promise<void>(resolve => { release = resolve })
  return { promise, release }
}

test('soon: one write in flight; the calls made meanwhile join one next write; run waits for the writes asked for before it', async () => {
  const chain = new WriteChain(0)
  const started: string[] = []
  const first = gate()
  chain.soon(async () => { started.push('soon 1'); await first.promise }, unexpected)
  await new Promise(setImmediate) // the microtasks ran: the first write started and waits on its gate
  assert.deepEqual(started, ['soon 1'])
  let joined = 0
  for (let i = 0; i < 5; i++) chain.soon(async () => { joined++; started.push('soon 2') }, unexpected)
  const flushed = chain.run(async () => { started.push('run') })
  first.release()
  await flushed
  assert.deepEqual(started, ['soon 1', 'soon 2', 'run'], 'in the order asked for, one at a time')
  assert.equal(joined, 1, 'five calls while a write was in flight: one write')
  await chain.settled
})

test('a failed soon write goes to its handler and does not fail the writes after it; a failed run is its caller\'s', async () => {
  const chain = new WriteChain(0)
  const failures: unknown[] = []
  chain.soon(async () => { throw new Error('target unreachable') }, error => { failures.push(error) })
  await chain.run(async () => {})
  assert.equal((failures[0] as Error).message, 'target unreachable')
  await assert.rejects(chain.run(async () => { throw new Error('flush failed') }), /flush failed/)
  let after = false
  chain.soon(async () => { after = true }, unexpected)
  await chain.settled
  assert.ok(after)
})

test('soon writes start at least minIntervalMs apart; a run asked for meanwhile is not held up; close drops a soon write still waiting', async () => {
  const chain = new WriteChain(40)
  const started: Array<[string, number]> = []
  const first = gate()
  chain.soon(async () => {
    started.push(['soon 1', performance.now()])
    await first.promise
  }, unexpected)
  await new Promise(setImmediate) // the first write started
  const second = gate()
  chain.soon(async () => {
    started.push(['soon 2', performance.now()])
    second.release()
  }, unexpected)
  first.release()
  await chain.run(async () => { started.push(['run', performance.now()]) })
  await second.promise
  assert.deepEqual(started.map(([what]) => what), ['soon 1', 'run', 'soon 2'], 'the run went ahead of the soon write waiting for its interval')
  const [[, soon1], , [, soon2]] = started as [[string, number], [string, number], [string, number]]
  assert.ok(soon2 - soon1 >= 39, `started ${soon2 - soon1} ms apart`)
  let dropped = true
  chain.soon(async () => { dropped = false }, unexpected)
  chain.close()
  chain.soon(async () => { dropped = false }, unexpected)
  await chain.run(async () => {})
  assert.ok(dropped, 'nothing started after close')
})
