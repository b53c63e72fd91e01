import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { acksOf, sendFailureOf } from '../../../src/kafka/record-sink.js'
import { PartialSendError } from '../../../src/ports/partial-send-error.js'
import type { PartitionWrite } from '../../../src/ports/ports.js'
import { records } from '../../helpers/fake-ports.js'

const require = createRequire(import.meta.url)
const { createErrorFromCode } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/error') as {
  createErrorFromCode: (code: number) => Error & { type: string }
}
const { KafkaJSNumberOfRetriesExceeded, KafkaJSNonRetriableError } = require('@kafka-mirror-sidecar/kafkajs/src/errors') as {
  KafkaJSNumberOfRetriesExceeded: new (e: Error, options: object) => Error
  KafkaJSNonRetriableError: new (e: Error, options?: object) => Error
}

const target = { alias: 'target', brokers: ['127.0.0.1:9092'], clientId: 'test' }
const writes: PartitionWrite[] = [0, 1, 2].map(partition => ({ topic: 't', partition, records: records(0, 2) }))

/**
 * A failed kafkajs send as the patched sendMessages throws it: the retrier's error (its cause the
 * last error), with the written partitions and per-partition errors.
 */
function kafkajsFailure (error: Error, written: number[], failed: Array<[number, Error]>): Error {
  return Object.assign(error, {
    writtenPartitions: written.map(partition => ({ topicName: 't', partition, errorCode: 0, baseOffset: String(100 + partition) })),
    partitionErrors: failed.map(([partition, e]) => ({ topicName: 't', partition, error: e })),
  })
}

test('acksOf keeps the acknowledgements that arrived: a partition left out is a retriable PartialSendError carrying the others', () => {
  const answer = [{ topicName: 't', partition: 0, baseOffset: '5' }, { topicName: 't', partition: 2, baseOffset: '9' }]
  assert.throws(() => acksOf(answer, writes, target), (error: unknown) => {
    assert.ok(error instanceof PartialSendError)
    assert.equal(error.retriable, true)
    assert.deepEqual(error.written, [{ topic: 't', partition: 0, baseOffset: 5n }, { topic: 't', partition: 2, baseOffset: 9n }])
    assert.deepEqual(error.failed.map(f => [f.partition, f.error.kafkaCode]), [[1, 'UNKNOWN_TOPIC_OR_PARTITION']])
    assert.match(error.message, /did not acknowledge t-1$/)
    return true
  })
  assert.deepEqual(acksOf([...answer, { topicName: 't', partition: 1, baseOffset: '7' }], writes, target).map(a => a.partition), [0, 2, 1])
})

test('sendFailureOf passes a PartialSendError from acksOf through with its acknowledgements', () => {
  const partial = (() => { try { acksOf([{ topicName: 't', partition: 0, baseOffset: '5' }], writes, target) } catch (error) { return error } })()
  const failure = sendFailureOf(partial, writes, target)
  assert.equal(failure.error, partial)
  assert.equal(failure.retriable, true)
})

test('sendFailureOf keeps each partition\'s error apart; a partition refused for good makes the send permanent, the written ones stay written', () => {
  const notLeader = createErrorFromCode(6)
  const tooLarge = createErrorFromCode(10)
  const failure = sendFailureOf(
    kafkajsFailure(
      new KafkaJSNonRetriableError(tooLarge, { cause: tooLarge }),
      [0],
      [
        [1, notLeader],
        [2, tooLarge],
      ]
    ),
    writes,
    target
  )
  assert.ok(failure.error instanceof PartialSendError)
  assert.equal(failure.retriable, false)
  assert.equal(failure.error.kafkaCode, 'MESSAGE_TOO_LARGE')
  assert.deepEqual(failure.error.written, [{ topic: 't', partition: 0, baseOffset: 100n }])
  assert.deepEqual(
    failure.error.failed.map(f => [f.partition, f.error.kafkaCode, f.error.retriable]),
    [
      [1, 'NOT_LEADER_FOR_PARTITION', true],
      [2, 'MESSAGE_TOO_LARGE', false],
    ]
  )
  assert.equal(failure.producerStateLost, false)
})

test('sendFailureOf: a forwarded batch answered CORRUPT_MESSAGE is refused for good, a decoded one beside it stays retriable', () => {
  const forwardedWrites: PartitionWrite[] = [
    { ...(writes[0] as PartitionWrite), records: [], forwarded: {} as PartitionWrite['forwarded'] },
    writes[1] as PartitionWrite,
  ]
  const corrupt = createErrorFromCode(2)
  const failure = sendFailureOf(
    kafkajsFailure(
      new KafkaJSNumberOfRetriesExceeded(corrupt, { retryCount: 0, retryTime: 0, cause: corrupt }),
      [],
      [
        [0, corrupt],
        [1, createErrorFromCode(2)],
      ]
    ),
    forwardedWrites,
    target
  )
  assert.ok(failure.error instanceof PartialSendError)
  assert.equal(failure.retriable, false)
  assert.deepEqual(failure.error.failed.map(f => [f.partition, f.error.retriable]), [[0, false], [1, true]])
})

test('sendFailureOf: an error without per-partition detail stays one error (every unwritten partition failed with it)', () => {
  const failure = sendFailureOf(new KafkaJSNumberOfRetriesExceeded(createErrorFromCode(6), { retryCount: 0, retryTime: 0 }), writes, target)
  assert.ok(!(failure.error instanceof PartialSendError))
  assert.equal(failure.retriable, true)
})

test('sendFailureOf: a lost producer state in any partition\'s answer is seen, whichever error the send carries', () => {
  const tooLarge = createErrorFromCode(10)
  const failure = sendFailureOf(
    kafkajsFailure(
      new KafkaJSNonRetriableError(tooLarge, { cause: tooLarge }),
      [0],
      [
        [1, createErrorFromCode(47)],
        [2, tooLarge],
      ]
    ),
    writes,
    target
  )
  assert.equal(failure.error.kafkaCode, 'MESSAGE_TOO_LARGE')
  assert.deepEqual([...failure.kafkaCodes].sort(), ['INVALID_PRODUCER_EPOCH', 'MESSAGE_TOO_LARGE'])
  assert.equal(failure.producerStateLost, true)
})
