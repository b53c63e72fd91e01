import assert from 'node:assert/strict'
import { test } from 'node:test'
import { filterAbortedMessages } from '../../../src/kafka/kafkajs-internals.js'

type Message = Parameters<typeof filterAbortedMessages>[0]['messages'][number]

/** A record of `producerId` at `offset`, inside a transaction; `abort` makes it that transaction's abort marker. */
function message (offset: number, producerId: string, abort = false): Message {
  return {
    offset: String(offset),
    key: abort ? Buffer.from([0, 0, 0, 0]) : Buffer.from(`k${offset}`),
    value: Buffer.from(`v${offset}`),
    isControlRecord: abort,
    batchContext: { producerId, inTransaction: true },
  } as unknown as Message
}

test('aborted transactions are filtered whatever order the broker lists them in (it lists them by when they ended)', () => {
  // Producer B began at 0 and was aborted at 5; producer A began at 2 and was aborted at 3; C committed.
  const messages = [message(0, 'B'), message(1, 'C'), message(2, 'A'), message(3, 'A', true), message(4, 'C'), message(5, 'B', true), message(6, 'C')]
  // The broker's order: A's abort was written first, so A comes first although B began earlier.
  const abortedTransactions = [{ producerId: 'A', firstOffset: '2' }, { producerId: 'B', firstOffset: '0' }]
  const kept = filterAbortedMessages({ messages, abortedTransactions }).filter(m => !(m as unknown as { isControlRecord: boolean }).isControlRecord)
  assert.deepEqual(kept.map(m => m.offset), ['1', '4', '6'])
})

test('a fetch that starts inside several aborted transactions filters all of them', () => {
  const messages = [message(10, 'A'), message(11, 'B'), message(12, 'B', true), message(13, 'A', true), message(14, 'C')]
  const abortedTransactions = [{ producerId: 'B', firstOffset: '4' }, { producerId: 'A', firstOffset: '1' }]
  const kept = filterAbortedMessages({ messages, abortedTransactions }).filter(m => !(m as unknown as { isControlRecord: boolean }).isControlRecord)
  assert.deepEqual(kept.map(m => m.offset), ['14'])
})
