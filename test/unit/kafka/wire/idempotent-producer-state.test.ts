import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  IdempotentProducerState,
  incrementSequence,
  isLeaderError,
  MAX_IN_FLIGHT_PER_PARTITION,
  NO_ANSWER,
  ProduceErrors,
  produceErrorName,
} from '../../../../src/kafka/wire/idempotent-producer-state.js'

function started (): IdempotentProducerState<string> {
  const state = new IdempotentProducerState<string>()
  state.initialized(7n, 0)
  return state
}

test('sequences advance only by the record count of acknowledged batches, in order; at most 5 in flight per partition (invariants A, B)', () => {
  const state = started()
  const sequences = ['a', 'b', 'c', 'd', 'e'].map(batch => state.send('t-0', batch, 10)?.baseSequence)
  assert.deepEqual(sequences, [0, 10, 20, 30, 40])
  assert.equal(state.send('t-0', 'f', 10), undefined, 'a sixth batch waits (KAFKA-5494)')
  assert.equal(state.send('t-1', 'x', 3)?.baseSequence, 0, 'each partition has its own sequence')
  state.checkInvariants()
  assert.throws(() => state.acknowledged('t-0', 'b'), /acknowledged before sequence 0/)
  state.acknowledged('t-0', 'a')
  state.checkInvariants()
  assert.equal(state.send('t-0', 'f', 4)?.baseSequence, 50)
  for (const batch of ['b', 'c', 'd', 'e', 'f']) state.acknowledged('t-0', batch)
  assert.deepEqual(state.send('t-0', 'g', 1), { producerId: 7n, producerEpoch: 0, baseSequence: 54 })
  state.checkInvariants()
})

test('a retriable error resends the batch and the later ones with the same sequences once the partition has no request in flight', () => {
  const state = started()
  for (const batch of ['a', 'b', 'c']) state.send('t-0', batch, 2)
  assert.equal(state.failed('t-0', 'a', ProduceErrors.NOT_LEADER_OR_FOLLOWER), 'retry')
  assert.equal(state.canSend('t-0'), false, 'nothing new while a batch waits for its resend')
  assert.deepEqual(state.resends('t-0'), [], 'b and c still await their answers')
  // The new leader has not seen sequence 0: a later batch is out of order, which only says an earlier one is missing.
  assert.equal(state.failed('t-0', 'b', ProduceErrors.OUT_OF_ORDER_SEQUENCE_NUMBER), 'retry')
  assert.equal(state.failed('t-0', 'c', NO_ANSWER), 'retry')
  assert.equal(state.bumpPending, false)
  assert.deepEqual(state.resends('t-0').map(({ batch, fields }) => [batch, fields.baseSequence, fields.producerEpoch]), [['a', 0, 0], ['b', 2, 0], ['c', 4, 0]])
  state.checkInvariants()
  for (const batch of ['a', 'b', 'c']) state.acknowledged('t-0', batch)
  assert.equal(state.send('t-0', 'd', 1)?.baseSequence, 6)
})

test('KIP-360: OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID on the first unacknowledged batch bumps the epoch and restarts every sequence at 0', () => {
  for (const code of [ProduceErrors.OUT_OF_ORDER_SEQUENCE_NUMBER, ProduceErrors.UNKNOWN_PRODUCER_ID]) {
    const state = started()
    state.send('t-0', 'a', 5)
    state.acknowledged('t-0', 'a')
    state.send('t-0', 'b', 5)
    state.send('t-1', 'x', 2)
    assert.equal(state.failed('t-0', 'b', code), 'bump')
    assert.equal(state.bumpPending, true)
    assert.equal(state.canSend('t-2'), false, 'invariant D: nothing is sent while a bump is pending')
    assert.equal(state.quiet, false, 'x still awaits its answer')
    state.acknowledged('t-1', 'x')
    assert.equal(state.quiet, true)
    assert.deepEqual(state.bumped(7n, 1), { unresolved: [] })
    assert.deepEqual(state.resends('t-0'), [{ batch: 'b', fields: { producerId: 7n, producerEpoch: 1, baseSequence: 0 } }])
    assert.equal(state.send('t-1', 'y', 1)?.baseSequence, 0, 'every partition starts again at 0')
    state.checkInvariants()
  }
})

test('invariant C: at a bump a batch that may have been written is given up with its partition\'s later batches, never resent under the new epoch', () => {
  const state = started()
  for (const batch of ['a', 'b']) state.send('t-0', batch, 1)
  state.send('t-1', 'x', 1)
  assert.equal(state.failed('t-0', 'a', ProduceErrors.REQUEST_TIMED_OUT), 'retry')
  assert.equal(state.failed('t-0', 'b', ProduceErrors.NOT_ENOUGH_REPLICAS), 'retry')
  assert.equal(state.failed('t-1', 'x', ProduceErrors.UNKNOWN_PRODUCER_ID), 'bump')
  const { unresolved } = state.bumped(9n, 0)
  assert.deepEqual(unresolved.map(given => [given.batch, given.maybeWritten]), [['a', true], ['b', false]])
  assert.deepEqual(state.resends('t-0'), [])
  assert.deepEqual(state.resends('t-1').map(({ fields }) => fields), [{ producerId: 9n, producerEpoch: 0, baseSequence: 0 }])
  state.checkInvariants()
})

test('a non-retriable error fails the batch and bumps the epoch; bumping with a batch in flight is refused', () => {
  const state = started()
  state.send('t-0', 'a', 1)
  state.send('t-0', 'b', 1)
  assert.equal(state.failed('t-0', 'a', ProduceErrors.MESSAGE_TOO_LARGE), 'fatal')
  assert.throws(() => state.bumped(7n, 1), /batches in flight/)
  state.failed('t-0', 'b', ProduceErrors.OUT_OF_ORDER_SEQUENCE_NUMBER)
  const given = state.bumped(7n, 1).unresolved.map(({ batch, error }) => [batch, error])
  assert.deepEqual(given, [['a', ProduceErrors.MESSAGE_TOO_LARGE], ['b', ProduceErrors.OUT_OF_ORDER_SEQUENCE_NUMBER]])
})

test('sequences wrap to 0 after 2^31-1 as Kafka\'s do', () => {
  assert.equal(incrementSequence(0x7fffffff, 1), 0)
  assert.equal(incrementSequence(0x7ffffffe, 5), 3)
  assert.equal(incrementSequence(10, 5), 15)
  assert.equal(MAX_IN_FLIGHT_PER_PARTITION, 5)
})

test('leader errors and lost answers send the partition to its leader again; errors are named as Kafka names them', () => {
  assert.equal(isLeaderError(ProduceErrors.NOT_LEADER_OR_FOLLOWER), true)
  assert.equal(isLeaderError(NO_ANSWER), true)
  assert.equal(isLeaderError(ProduceErrors.OUT_OF_ORDER_SEQUENCE_NUMBER), false)
  assert.equal(produceErrorName(ProduceErrors.UNKNOWN_PRODUCER_ID), 'UNKNOWN_PRODUCER_ID')
  assert.equal(produceErrorName(999), 'error code 999')
})
