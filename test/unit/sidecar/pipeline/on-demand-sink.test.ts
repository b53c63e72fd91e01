import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OnDemandSink } from '../../../../src/sidecar/pipeline/on-demand-sink.js'
import { MirrorFlow } from '../../../../src/sidecar/pipeline/mirror-flow.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import type { PartitionAck, PartitionWrite, RecordSink } from '../../../../src/ports/ports.js'
import { fakeFlowConfig, fakePorts, records, until } from '../../../helpers/fake-ports.js'

/** A sink that counts its starts and stops; `failStarts` makes that many starts reject. */
class CountingSink implements RecordSink {
  connected = false
  starts = 0
  stops = 0
  sends = 0
  failStarts = 0

  async start (): Promise<void> {
    this.starts++
    if (this.failStarts > 0) {
      this.failStarts--
      throw new MirrorError(ErrorCodes.CONNECTION, 'cannot connect', { retriable: true })
    }
    this.connected = true
  }

  async stop (): Promise<void> { this.stops++; this.connected = false }

  async send (writes: readonly PartitionWrite[]): Promise<PartitionAck[]> {
    this.sends++
    return writes.map(write => ({ topic: write.topic, partition: write.partition, baseOffset: 0n }))
  }
}

const write: PartitionWrite = { topic: 't', partition: 0, records: records(0, 1) }

test('an on-demand sink starts its sink at the first write, once, and only then stops it', async () => {
  const inner = new CountingSink()
  const sink = new OnDemandSink(inner)
  await sink.start()
  assert.equal(inner.starts, 0, 'start() starts nothing')
  assert.equal(sink.connected, true, 'not started: it holds readiness back for nothing')
  await Promise.all([sink.send([write], 1000), sink.send([write], 1000)])
  assert.equal(inner.starts, 1, 'two writes at once start it once')
  assert.equal(inner.sends, 2)
  inner.connected = false
  assert.equal(sink.connected, false, 'started: connected as its sink is')
  await sink.stop()
  assert.equal(inner.stops, 1)
  await assert.rejects(sink.send([write], 1000), (error: unknown) => error instanceof MirrorError && error.code === ErrorCodes.STOPPED && error.retriable)
  assert.equal(inner.starts, 1, 'a write after stop starts nothing')
})

test('an on-demand sink never written to is never started nor stopped; a failed start is tried again by the next write', async () => {
  const idle = new CountingSink()
  const unused = new OnDemandSink(idle)
  await unused.start()
  await unused.stop()
  assert.deepEqual([idle.starts, idle.stops], [0, 0])

  const inner = new CountingSink()
  inner.failStarts = 1
  const sink = new OnDemandSink(inner)
  await assert.rejects(sink.send([write], 1000), /cannot connect/)
  assert.equal(inner.sends, 0)
  await sink.send([write], 1000)
  assert.deepEqual([inner.starts, inner.sends], [2, 1], 'the second write started it again and was sent')
  await sink.stop()
  assert.equal(inner.stops, 1)
})

test('at least once near the target: the lanes past num.producers never connect; the flow reports its lanes, connected without them', {
  timeout: 15_000,
}, async t => {
  const config = fakeFlowConfig({ numProducers: 1 })
  const ports = fakePorts({ orders: 2 }, 2)
  const flow = new MirrorFlow(config, ports, { logger: silentLogger, drainTimeoutMs: 2_000 })
  t.after(() => flow.stop().catch(() => { /* clean-up: the test's own assertions report a failure */ }))
  await flow.start()
  const [eager, extra] = ports.sinkFakes
  assert.ok(eager !== undefined && extra !== undefined)
  assert.deepEqual([eager.connected, extra.connected], [true, false], 'only the first lane\'s producer connected')
  const source = ports.current()
  await source.deliver('orders', 0, records(0, 10))
  await source.deliver('orders', 1, records(0, 10))
  await until(() => ports.target.values('orders', 0).length === 10 && ports.target.values('orders', 1).length === 10, 'both partitions on the target')
  assert.equal(extra.sends, 0, 'quick answers: the extra lane took nothing')
  const snapshot = flow.snapshot()
  assert.equal(snapshot.targetConnected, true)
  assert.deepEqual(snapshot.producerLanes, { total: 2, writing: 1 })
  await flow.stop()
  assert.equal(extra.connected, false)
})
