import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)

interface EosManager {
  initProducerId: () => Promise<void>
  getSequence: (topic: string, partition: number) => number
  updateSequence: (topic: string, partition: number, increment: number) => void
}
const createEosManager = require('@kafka-mirror-sidecar/kafkajs/src/producer/eosManager') as (options: object) => EosManager

const INT32_MAX = 2 ** 31 - 1
const silent = { debug () {}, info () {}, warn () {}, error () {}, namespace () { return silent } }

/** kafkajs' idempotent producer state, initialised against a cluster faked to hand out producer id 7. */
async function idempotentManager (): Promise<EosManager> {
  const broker = { initProducerId: async () => ({ producerId: 7, producerEpoch: 0 }) }
  const cluster = { retry: { retries: 0 }, refreshMetadataIfNecessary: async () => {}, findControllerBroker: async () => broker }
  const manager = createEosManager({ logger: silent, cluster })
  await manager.initProducerId()
  return manager
}

/** Where the sequence stands after `increments` applied from `start` (set through one increment from 0). */
async function sequenceAfter (start: number, ...increments: number[]): Promise<number> {
  const manager = await idempotentManager()
  manager.updateSequence('t', 0, start)
  for (const increment of increments) manager.updateSequence('t', 0, increment)
  return manager.getSequence('t', 0)
}

// Kafka's DefaultRecordBatch.incrementSequence: the next sequence is (sequence + increment) mod 2^31.
test('the idempotent sequence moves forward across 2^31-1 as Kafka counts it: modulo 2^31', async () => {
  assert.equal(await sequenceAfter(INT32_MAX - 1, 1), INT32_MAX)
  assert.equal(await sequenceAfter(INT32_MAX - 2, 5), 2)
  assert.equal(await sequenceAfter(INT32_MAX, 1), 0)
})

test('a rollback across the wrap restores the sequence the batch was sent with, never a negative one', async () => {
  // A batch of 5 sent at INT32_MAX - 2 takes sequences INT32_MAX-2 .. 1; failing, it hands them back.
  assert.equal(await sequenceAfter(INT32_MAX - 2, 5, -5), INT32_MAX - 2)
  assert.equal(await sequenceAfter(INT32_MAX, 1, -1), INT32_MAX)
  assert.equal(await sequenceAfter(3, -3), 0)
})
