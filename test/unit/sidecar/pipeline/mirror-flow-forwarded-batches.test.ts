import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { MirrorFlow } from '../../../../src/sidecar/pipeline/mirror-flow.js'
import type { PipelineObserver } from '../../../../src/ports/pipeline-observer.js'
import type { AckListener } from '../../../../src/ports/ports.js'
import { requestRounds } from '../../../../src/sidecar/pipeline/producer-worker.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { FakeForwardedBatch, fakeFlowConfig, fakePorts, records, until } from '../../../helpers/fake-ports.js'

const values = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => `v${from + i}`)

async function started (topics: Record<string, number>, lanes = 1, observer: PipelineObserver = {}) {
  const ports = fakePorts(topics, lanes)
  const flow = new MirrorFlow(fakeFlowConfig({ numProducers: lanes }), ports, { logger: silentLogger, drainTimeoutMs: 2_000, observer })
  await flow.start()
  return { flow, ports, source: ports.current() }
}

function batch (partition: number, forwarded: boolean, id: number): MirrorBatch {
  const recs = records(id * 10, 10)
  return {
    sourceTopic: 't',
    targetTopic: 't',
    partition,
    records: forwarded ? [] : recs,
    firstOffset: BigInt(id * 10),
    nextOffset: BigInt(id * 10 + 10),
    bytes: 1000,
    pollTimeMs: 0,
    ...(forwarded ? { forwarded: new FakeForwardedBatch(recs) } : {}),
  }
}

test('requests hold per partition either decoded batches or one forwarded batch, in queue order', () => {
  const a = batch(0, false, 0); const b = batch(0, true, 1); const c = batch(0, false, 2); const d = batch(0, false, 3)
  const e = batch(1, true, 0); const f = batch(1, true, 1)
  const rounds = requestRounds([a, e, b, f, c, d])
  assert.deepEqual(rounds.map(round => round.map(x => `${x.partition}:${x.firstOffset}`)), [
    ['0:0', '1:0'],
    ['0:10', '1:10'],
    ['0:20', '0:30'],
  ])
})

test('forwarded and decoded batches of one partition reach the target in offset order, each once, and are committed', { timeout: 15_000 }, async t => {
  const routed: string[] = []
  const { flow, ports, source } = await started({ orders: 2 }, 1, { batchRouted: (_flow, path) => { routed.push(path) } })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  const [sink] = ports.sinkFakes
  assert.ok(sink !== undefined)
  sink.gate.close()
  // Queued while the target waits, so one lane's take holds all of them: the requests must be cut.
  await source.deliverForwarded('orders', 0, new FakeForwardedBatch(records(0, 10)))
  await source.deliverForwarded('orders', 0, new FakeForwardedBatch(records(10, 10)))
  await source.deliver('orders', 0, records(20, 5))
  await source.deliverForwarded('orders', 0, new FakeForwardedBatch(records(25, 10)))
  await source.deliverForwarded('orders', 1, new FakeForwardedBatch(records(0, 10)))
  sink.gate.release()
  await until(() => ports.target.values('orders', 0).length === 35 && ports.target.values('orders', 1).length === 10, 'every record on the target')
  assert.deepEqual(ports.target.values('orders', 0), values(0, 35))
  assert.deepEqual(ports.target.values('orders', 1), values(0, 10))
  assert.equal(ports.target.forwardedWrites, 4, 'the forwarded batches were written as they were')
  assert.deepEqual(routed, ['pass_through', 'pass_through', 'pass_through', 'pass_through'])
  await flow.commit()
  assert.equal(source.committed('orders', 0), 35n)
  assert.equal(source.committed('orders', 1), 10n)
})

test('a forwarded batch the target refuses as it is goes decoded, counted with its reason', { timeout: 15_000 }, async t => {
  const reasons: Array<string | undefined> = []
  const { flow, ports, source } = await started({ orders: 1 }, 1, { batchRouted: (_flow, path, reason) => { if (path === 'deep') reasons.push(reason) } })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  const [sink] = ports.sinkFakes
  assert.ok(sink !== undefined)
  sink.refuseForwarded = true
  const forwarded = new FakeForwardedBatch(records(0, 10))
  await source.deliverForwarded('orders', 0, forwarded)
  await until(() => ports.target.values('orders', 0).length === 10, 'the records on the target')
  assert.deepEqual(ports.target.values('orders', 0), values(0, 10))
  assert.equal(ports.target.forwardedWrites, 0)
  assert.equal(forwarded.decodes, 1)
  assert.deepEqual(reasons, ['refused_by_target'])
  await flow.commit()
  assert.equal(source.committed('orders', 0), 10n)
})

test('a forwarded batch refetched after part of it was handed over is decoded and only its new records go', { timeout: 15_000 }, async t => {
  const reasons: Array<string | undefined> = []
  const { flow, ports, source } = await started({ orders: 1 }, 1, { batchRouted: (_flow, path, reason) => { if (path === 'deep') reasons.push(reason) } })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  await source.deliver('orders', 0, records(0, 5))
  // A refetch returns the whole batch 0..9 although 0..4 were handed over already.
  await source.deliverForwarded('orders', 0, new FakeForwardedBatch(records(0, 10)))
  // And a batch entirely handed over already is dropped.
  await source.deliverForwarded('orders', 0, new FakeForwardedBatch(records(0, 10)))
  await until(() => ports.target.values('orders', 0).length >= 10, 'the records on the target')
  await flow.commit()
  assert.deepEqual(ports.target.values('orders', 0), values(0, 10), 'each record once')
  assert.deepEqual(reasons, ['starts_before_position'])
  assert.equal(source.committed('orders', 0), 10n)
})

test(
  'a forwarded batch of 12,000 records (queue.size 10,000) goes through intake, queue and lane amid steady traffic of five other partitions',
  { timeout: 30_000 },
  async t => {
    const { flow, ports, source } = await started({ orders: 6 })
    t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
    let largeQueued = false
    let trafficBatches = 0
    // Each of partitions 1-5 hands over 2,000 records as soon as its last were queued, as a fetcher does, until the large batch is in.
    const traffic = [1, 2, 3, 4, 5].map(async partition => {
      for (let from = 0; !largeQueued && from < 1_000_000; from += 2_000) {
        await source.deliver('orders', partition, records(from, 2_000))
        trafficBatches++
      }
    })
    await until(() => trafficBatches >= 6, 'traffic flowing')
    await source.deliverForwarded('orders', 0, new FakeForwardedBatch(records(0, 12_000)))
    largeQueued = true
    await Promise.all(traffic)
    await until(() => ports.target.values('orders', 0).length === 12_000, 'the large batch on the target')
    assert.deepEqual(ports.target.values('orders', 0), values(0, 12_000))
    assert.equal(ports.target.forwardedWrites, 1, 'written as it was fetched, whole')
  }
)

test('a forwarded batch its ack listener reads after the acknowledgement (a digest) holds its bytes until the read ended', { timeout: 15_000 }, async t => {
  let endRead!: () => void
  const reading = new Promise<void>(resolve => { endRead = resolve })
  const ackListener: AckListener = {
    acknowledged: () => { /* the target fake counts the records */ },
    flush: async () => { /* nothing buffered */ },
    heldUntil: () => reading,
  }
  const ports = fakePorts({ orders: 1 }, 1)
  const flow = new MirrorFlow(fakeFlowConfig({ numProducers: 1 }), ports, { logger: silentLogger, drainTimeoutMs: 2_000, ackListener })
  await flow.start()
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  await ports.current().deliverForwarded('orders', 0, new FakeForwardedBatch(records(0, 10)))
  await until(() => ports.target.values('orders', 0).length === 10 && flow.snapshot().queueRecords === 0, 'the batch acknowledged and its records released')
  assert.equal(flow.snapshot().queueBytes, 1_000, 'its bytes held while the digest reads it')
  endRead()
  await until(() => flow.snapshot().queueBytes === 0, 'its bytes released once the read ended')
})
