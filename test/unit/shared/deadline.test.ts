import assert from 'node:assert/strict'
import { test } from 'node:test'
import { settleWithin } from '../../../src/shared/deadline.js'

test('settleWithin: true when the work resolves or rejects in time, false when the bound passes first', async () => {
  assert.equal(await settleWithin(Promise.resolve('done'), 1_000), true)
  assert.equal(await settleWithin(Promise.reject(new Error('refused')), 1_000), true, 'a rejection is settled, not thrown')
  let release: () => void = () => {}
  const pending = new Promise<void>(resolve => { release = resolve })
  assert.equal(await settleWithin(pending, 20), false, 'work that never settles in time')
  release()
  assert.equal(await settleWithin(pending, 20), true, 'the same work once it settled')
})
