import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AtLeastOnceDelivery } from '../../../../src/sidecar/pipeline/at-least-once-delivery.js'
import { LinkRoundTrip } from '../../../../src/sidecar/pipeline/link-round-trip.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import type { WorkerListener } from '../../../../src/sidecar/pipeline/producer-worker.js'
import { records } from '../../../helpers/fake-ports.js'

test('the link is long once the shortest of the last window of round trips reaches longMs, and short again after one quick answer', async () => {
  const link = new LinkRoundTrip(40, 4)
  let woken = false
  void link.whenLong().then(() => { woken = true })
  for (const ms of [200, 210, 205]) link.record(ms)
  assert.equal(link.long, false, 'three samples of a window of four decide nothing')
  link.record(39)
  assert.equal(link.long, false, 'one answer under 40 ms in the window')
  for (const ms of [200, 201, 202]) link.record(ms)
  assert.equal(link.long, false, 'the 39 ms answer is still among the last four')
  link.record(203)
  assert.equal(link.long, true)
  await new Promise(setImmediate)
  assert.equal(woken, true, 'whenLong resolves when the link turns long')
  await link.whenLong()
  link.record(2)
  assert.equal(link.long, false, 'a busy broker is slow for a while; a near one answers quickly at least once')
})

function batch (partition: number): MirrorBatch {
  return { sourceTopic: 't', targetTopic: 't', partition, records: records(0, 1), firstOffset: 0n, nextOffset: 1n, bytes: 100, pollTimeMs: 0 }
}

test('at least once: lanes from numProducers on take only while the target round trip is long; a closed queue ends them; reports pass through', async () => {
  const durations: Array<[number, boolean]> = []
  const acks: WorkerListener = {
    acknowledged: () => {},
    skipped: () => {},
    produceRequest: (seconds, ok) => durations.push([seconds, ok]),
    retry: () => {},
  }
  const delivery = new AtLeastOnceDelivery({ queueMaxRecords: 100, queueMaxBytes: 100_000, numProducers: 1 }, 2, acks)
  assert.equal(delivery.onDemandFrom, 1, 'the lane past numProducers starts on demand')
  assert.equal(delivery.lanesWriting(), 1)
  const eager = delivery.lane(0)
  const extra = delivery.lane(1)
  let extraTook: MirrorBatch[] | undefined
  const extraTake = extra.delivery.take(1_000_000).then(taken => { extraTook = taken })

  await delivery.queue.push(batch(0))
  assert.deepEqual((await eager.delivery.take(1_000_000))?.map(b => b.partition), [0], 'the first lane takes at once')
  await delivery.queue.push(batch(1))
  for (let i = 0; i < 16; i++) eager.listener.produceRequest(0.002, true)
  await new Promise(setImmediate)
  assert.equal(extraTook, undefined, 'round trips of 2 ms: the extra lane waits')
  assert.equal(delivery.lanesWriting(), 1)

  for (let i = 0; i < 15; i++) extra.listener.produceRequest(0.2, true)
  eager.listener.produceRequest(5, false)
  await new Promise(setImmediate)
  assert.equal(extraTook, undefined, 'failed requests do not count: one 2 ms answer is still among the last 16')
  eager.listener.produceRequest(0.2, true)
  await extraTake
  assert.deepEqual((extraTook as MirrorBatch[] | undefined)?.map(b => b.partition), [1], '16 answers of 200 ms: the extra lane takes')
  assert.equal(delivery.lanesWriting(), 2, 'both lanes write while the link is long')
  assert.equal(durations.length, 16 + 15 + 1 + 1, 'every request is reported to the flow')
  assert.deepEqual(durations.at(-2), [5, false])

  for (let i = 0; i < 16; i++) eager.listener.produceRequest(0.001, true)
  assert.equal(delivery.lanesWriting(), 1)
  const ended = extra.delivery.take(1_000_000)
  delivery.queue.close()
  assert.deepEqual(await ended, [], 'the link is short again and the queue closes: the extra lane ends')
})
