import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { ErrorCode, IdempotentBrokers } from '../../helpers/idempotent-brokers.js'

const require = createRequire(import.meta.url)
type Send = (request: {
  acks: number
  timeout: number
  compression: number
  topicMessages: Array<{ topic: string, messages: Array<{ partition: number, value: string }> }>
}) => Promise<Answer[]>
const createSendMessages = require('@kafka-mirror-sidecar/kafkajs/src/producer/sendMessages') as (options: object) => Send
const createEosManager = require('@kafka-mirror-sidecar/kafkajs/src/producer/eosManager') as (options: object) => {
  initProducerId: () => Promise<void>
  getSequence: (topic: string, partition: number) => number
}
const createRetry = require('@kafka-mirror-sidecar/kafkajs/src/retry') as (options: object) => unknown
const createPartitioner = require('@kafka-mirror-sidecar/kafkajs/src/producer/partitioners/default') as () => unknown
const { KafkaJSRequestTimeoutError } = require('@kafka-mirror-sidecar/kafkajs/src/errors') as { KafkaJSRequestTimeoutError: new (message: string) => Error }

interface Answer { topicName: string, partition: number, errorCode: number, baseOffset: string }
interface SendFailure { writtenPartitions?: Answer[], partitionErrors?: Array<{ topicName: string, partition: number, error: { type?: string } }> }

const silent = { debug () {}, info () {}, warn () {}, error () {}, namespace () { return silent } }

/** kafkajs' own idempotent send path (sendMessages, eosManager, retrier, partitioner) over `brokers`. */
async function producerOn (brokers: IdempotentBrokers, retries: number) {
  const cluster = brokers.cluster()
  const eosManager = createEosManager({ logger: silent, cluster })
  await eosManager.initProducerId()
  const sendMessages = createSendMessages({
    logger: silent,
    cluster,
    partitioner: createPartitioner(),
    eosManager,
    retrier: createRetry({ retries, initialRetryTime: 5, maxRetryTime: 20 }),
  })
  const send = async (topic: string, perPartition: Record<number, string[]>): Promise<Answer[]> => {
    const messages = Object.entries(perPartition).flatMap(([partition, values]) => values.map(value => ({ partition: Number(partition), value })))
    return await sendMessages({ acks: -1, timeout: 1000, compression: 0, topicMessages: [{ topic, messages }] })
  }
  return { send, eosManager }
}

/** The failure `promise` rejects with. */
async function failureOf (promise: Promise<unknown>): Promise<SendFailure & Error> {
  try {
    await promise
  } catch (error) {
    return error as SendFailure & Error
  }
  assert.fail('the send succeeded')
}

const offsets = (answers: readonly Answer[]): Record<number, string> =>
  Object.fromEntries([...answers].sort((a, b) => a.partition - b.partition).map(a => [a.partition, a.baseOffset]))

test('a leader that moves mid-request: the moved partition is written once by its new leader, none is dropped', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2] })
  brokers.beforeWrite = nodeId => {
    // Broker 2 hands partition 1 to broker 1, which has already answered for partition 0.
    if (nodeId === 2) brokers.leaders.set('t', [1, 1])
  }
  const { send } = await producerOn(brokers, 5)
  const answers = await send('t', { 0: ['a0', 'a1'], 1: ['b0', 'b1'] })
  assert.deepEqual(offsets(answers), { 0: '0', 1: '0' })
  assert.deepEqual(brokers.log('t', 0), ['a0', 'a1'])
  assert.deepEqual(brokers.log('t', 1), ['b0', 'b1'])
})

test('with no in-request retry, the error names the partitions written, and a resend of the others writes each record once', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2, 2] })
  brokers.beforeWrite = nodeId => { if (nodeId === 2) brokers.leaders.set('t', [1, 1, 2]) }
  const { send } = await producerOn(brokers, 0)
  const failure = await failureOf(send('t', { 0: ['a0'], 1: ['b0', 'b1'], 2: ['c0'] }))
  assert.deepEqual(offsets(failure.writtenPartitions ?? []), { 0: '0', 2: '0' })
  assert.deepEqual(failure.partitionErrors?.map(e => [e.partition, e.error.type]), [[1, 'NOT_LEADER_FOR_PARTITION']])
  // The caller (the mirror's worker) resends only what was not written, through the same producer.
  brokers.beforeWrite = undefined
  assert.deepEqual(offsets(await send('t', { 1: ['b0', 'b1'] })), { 1: '0' })
  assert.deepEqual([brokers.log('t', 0), brokers.log('t', 1), brokers.log('t', 2)], [['a0'], ['b0', 'b1'], ['c0']])
})

test('a slow broker: no partition is sent again while a request for it is in flight', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2] })
  let slowed = false
  brokers.beforeWrite = async nodeId => {
    if (nodeId === 1 && !slowed) {
      slowed = true
      await delay(150)
    }
  }
  let refused = false
  brokers.refuse = (nodeId, _topic, entry) => {
    if (nodeId !== 2 || entry.partition !== 1 || refused) return undefined
    refused = true
    return ErrorCode.NOT_ENOUGH_REPLICAS
  }
  const { send } = await producerOn(brokers, 5)
  const answers = await send('t', { 0: ['a0', 'a1', 'a2'], 1: ['b0'] })
  assert.deepEqual(offsets(answers), { 0: '0', 1: '0' })
  assert.deepEqual(brokers.sentWhileInFlight, [])
  assert.deepEqual(brokers.log('t', 0), ['a0', 'a1', 'a2'])
  assert.deepEqual(brokers.log('t', 1), ['b0'])
})

test('a partition the producer\'s metadata does not list yet is written after one metadata refresh', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2] })
  brokers.leaders.set('t', [1, 2, 2]) // partition 2 added on the target after the producer read its metadata
  const refreshesBefore = brokers.metadataRefreshes
  const { send } = await producerOn(brokers, 5)
  const answers = await send('t', { 0: ['a0'], 1: ['b0'], 2: ['c0', 'c1'] })
  assert.deepEqual(offsets(answers), { 0: '0', 1: '0', 2: '0' })
  assert.equal(brokers.metadataRefreshes - refreshesBefore, 1)
  assert.deepEqual([brokers.log('t', 0), brokers.log('t', 1), brokers.log('t', 2)], [['a0'], ['b0'], ['c0', 'c1']])
})

test('a partition that does not exist is reported as UNKNOWN_TOPIC_OR_PARTITION for itself only; the others are written once', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2] })
  const { send } = await producerOn(brokers, 2)
  const failure = await failureOf(send('t', { 0: ['a0'], 1: ['b0'], 2: ['c0'] }))
  assert.deepEqual(offsets(failure.writtenPartitions ?? []), { 0: '0', 1: '0' })
  assert.deepEqual(failure.partitionErrors?.map(e => [e.partition, e.error.type]), [[2, 'UNKNOWN_TOPIC_OR_PARTITION']])
  brokers.leaders.set('t', [1, 2, 1])
  assert.deepEqual(offsets(await send('t', { 2: ['c0'] })), { 2: '0' })
  assert.deepEqual([brokers.log('t', 0), brokers.log('t', 1), brokers.log('t', 2)], [['a0'], ['b0'], ['c0']])
})

test('an answer lost after the broker wrote: the resend carries the same sequence and gets the original offset', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2] })
  let lost = false
  brokers.afterWrite = nodeId => {
    if (nodeId === 1 && !lost) {
      lost = true
      throw new KafkaJSRequestTimeoutError('Request produce(key: 0, version: 7) timed out')
    }
  }
  const { send } = await producerOn(brokers, 5)
  const answers = await send('t', { 0: ['a0', 'a1'], 1: ['b0'] })
  assert.deepEqual(offsets(answers), { 0: '0', 1: '0' })
  assert.deepEqual(offsets(await send('t', { 0: ['a2'] })), { 0: '2' })
  assert.deepEqual(brokers.log('t', 0), ['a0', 'a1', 'a2'])
  assert.deepEqual(brokers.log('t', 1), ['b0'])
})

test(
  "one partition refused in a broker's answer: its sibling is reported written and keeps its sequence; only the refused one's sequence goes back",
  async () => {
    const brokers = new IdempotentBrokers({ t: [1, 1] })
    brokers.refuse = (_nodeId, _topic, entry) => (entry.partition === 1 && entry.messages.length > 1 ? ErrorCode.MESSAGE_TOO_LARGE : undefined)
    const { send, eosManager } = await producerOn(brokers, 5)
    const failure = await failureOf(send('t', { 0: ['a0', 'a1', 'a2'], 1: ['b0', 'b1', 'b2'] }))
    assert.deepEqual(offsets(failure.writtenPartitions ?? []), { 0: '0' })
    assert.deepEqual(
      failure.partitionErrors?.map(e => [e.partition, e.error.type]),
      [[1, 'MESSAGE_TOO_LARGE']]
    )
    assert.deepEqual([eosManager.getSequence('t', 0), eosManager.getSequence('t', 1)], [3, 0])
    // The refused partition is written in smaller pieces; the written one goes on from its sequence.
    for (const value of ['b0', 'b1', 'b2']) await send('t', { 1: [value] })
    await send('t', { 0: ['a3'] })
    assert.deepEqual(brokers.log('t', 0), ['a0', 'a1', 'a2', 'a3'])
    assert.deepEqual(brokers.log('t', 1), ['b0', 'b1', 'b2'])
  }
)

test('a topic named twice in one send: the messages of both entries are written', async () => {
  const brokers = new IdempotentBrokers({ t: [1, 2] })
  const cluster = brokers.cluster()
  const eosManager = createEosManager({ logger: silent, cluster })
  await eosManager.initProducerId()
  const sendMessages = createSendMessages({ logger: silent, cluster, partitioner: createPartitioner(), eosManager, retrier: createRetry({ retries: 0 }) })
  const answers = await sendMessages({
    acks: -1,
    timeout: 1000,
    compression: 0,
    topicMessages: [
      { topic: 't', messages: [{ partition: 0, value: 'a0' }] },
      {
        topic: 't',
        messages: [
          { partition: 1, value: 'b0' },
          { partition: 0, value: 'a1' },
        ],
      },
    ],
  })
  assert.deepEqual(offsets(answers), { 0: '0', 1: '0' })
  assert.deepEqual([brokers.log('t', 0), brokers.log('t', 1)], [['a0', 'a1'], ['b0']])
})
