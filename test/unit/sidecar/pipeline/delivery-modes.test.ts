import assert from 'node:assert/strict'
import { test } from 'node:test'
import { deliveryModeFor, type DeliveryContext } from '../../../../src/sidecar/pipeline/delivery-modes.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import { PartitionProgress } from '../../../../src/sidecar/pipeline/partition-progress.js'
import type { PartitionAck, PartitionWrite, PositionStore, SourcePosition, TransactionalSink } from '../../../../src/ports/ports.js'
import { ProducerWorker, type WorkerListener } from '../../../../src/sidecar/pipeline/producer-worker.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { fakeFlowConfig, fakePorts, fetchControl, records } from '../../../helpers/fake-ports.js'

const exactlyOnce = {
  key: '--exactly.once',
  commitIntervalMs: 60_000,
  transactionTimeoutMs: 60_000,
  positionsTopic: 'mirror-positions.source.internal',
  positionsReplicationFactor: -1,
}

/** Hears nothing: the lanes' acknowledgements, where a test does not look at them. */
const noAcks: WorkerListener = { acknowledged: () => {}, skipped: () => {}, produceRequest: () => {}, retry: () => {} }

function context (progress = new PartitionProgress(), acks = noAcks): DeliveryContext {
  return {
    acks,
    progress,
    labels: { flow: 'a->b', source: 'a', target: 'b' },
    observer: {},
    logger: silentLogger,
    signal: new AbortController().signal,
    onFatal: error => {
      throw error
    },
    seek: () => {},
    ackListener: undefined,
  }
}

/** A transactional sink whose commits wait until the test lets them through. */
class HeldCommitSink implements TransactionalSink {
  readonly connected = true
  readonly commits: SourcePosition[][] = []
  readonly #open: Array<() => void> = []
  #nextOffset = 0n
  async start (): Promise<void> {}
  async stop (): Promise<void> {}
  async acquire (): Promise<void> {}
  async release (): Promise<void> {}
  stagePositions (): void {}
  async send (writes: readonly PartitionWrite[]): Promise<PartitionAck[]> {
    return writes.map(write => {
      const ack = { topic: write.topic, partition: write.partition, baseOffset: this.#nextOffset }
      this.#nextOffset += BigInt(write.records.length)
      return ack
    })
  }

  async commitTransaction (positions: readonly SourcePosition[]): Promise<{ committed: Promise<void> }> {
    this.commits.push([...positions])
    return { committed: new Promise(resolve => this.#open.push(resolve)) }
  }

  /** Lets the oldest commit through. */
  settle (): void { this.#open.shift()?.() }
}

function batch (from: number, count: number): MirrorBatch {
  return {
    sourceTopic: 't',
    targetTopic: 't',
    partition: 0,
    records: records(from, count),
    firstOffset: BigInt(from),
    nextOffset: BigInt(from + count),
    bytes: count * 10,
    pollTimeMs: 0,
  }
}

test('at-least-once is chosen without exactly.once: every partition is admitted at once, into no fixed lane', () => {
  const config = fakeFlowConfig()
  const mode = deliveryModeFor(config, fakePorts({ t: 1 }), context())
  assert.equal(mode.name, 'at-least-once')
  assert.equal(mode.gate.admit('t', 0, fetchControl()), 0, 'admitted without waiting: no promise')
  assert.equal(mode.gate.laneOf('t', 0), undefined)
  assert.equal(mode.gate.contiguous('t', 0, 100n), true)
})

test('exactly-once is chosen with exactly.once, and refused when the ports have no transactional sink per lane', () => {
  const config = fakeFlowConfig({ exactlyOnce })
  assert.throws(
    () => deliveryModeFor(config, fakePorts({ t: 1 }), context()),
    (error: unknown) => error instanceof MirrorError && error.code === ErrorCodes.INTERNAL
  )
  const sinks = [new HeldCommitSink(), new HeldCommitSink()]
  const positions: PositionStore = { start: async () => {}, stop: async () => {}, read: async () => new Map() }
  const mode = deliveryModeFor(config, { ...fakePorts({ t: 1 }), sinks, exactlyOnce: { sinks, positions } }, context())
  assert.equal(mode.name, 'exactly-once')
  assert.equal(typeof mode.gate.laneOf('t', 0), 'number')
})

test('exactly-once through a worker: acknowledgements and the queue\'s bytes are released only once the transaction committed', async () => {
  const config = fakeFlowConfig({ exactlyOnce, numProducers: 1 })
  const sink = new HeldCommitSink()
  const progress = new PartitionProgress()
  const positions: PositionStore = { start: async () => {}, stop: async () => {}, read: async () => new Map() }
  const acked: MirrorBatch[] = []
  const acks: WorkerListener = {
    acknowledged: b => {
      acked.push(b)
      progress.acknowledged(b, 0)
    },
    skipped: () => {},
    produceRequest: () => {},
    retry: () => {},
  }
  const mode = deliveryModeFor(config, { ...fakePorts({ t: 1 }, 1), sinks: [sink], exactlyOnce: { sinks: [sink], positions } }, context(progress, acks))
  mode.assigned(new Set([partitionKey('t', 0)]))
  const admission = await mode.gate.admit('t', 0, fetchControl())
  assert.equal(admission, 1, 'the lane\'s first acquisition')
  const { delivery, listener } = mode.lane(0)
  const worker = new ProducerWorker(
    delivery,
    sink,
    { maxRequestBytes: 1 << 20, requestTimeoutMs: 1_000, abortOnSendFailure: true, signal: new AbortController().signal },
    listener,
    silentLogger
  ).run()
  const written = batch(0, 5)
  mode.gate.stamp(written, admission as number)
  progress.admitted(written)
  await mode.queue.push(written, mode.gate.laneOf('t', 0))
  mode.queue.close()
  // The worker writes, finds the queue closed and empty, and commits what is open on its way out.
  while (sink.commits.length === 0) await new Promise(resolve => setImmediate(resolve))
  assert.equal(mode.queue.records, 0, 'written: its records are no longer counted')
  assert.equal(mode.queue.bytes, 50, 'its bytes wait for the commit')
  assert.deepEqual(acked, [], 'nothing acknowledged before the commit')
  const empty = mode.queue.whenEmpty()
  sink.settle()
  await worker
  await empty
  assert.deepEqual(acked, [written])
  assert.deepEqual(sink.commits, [[{ topic: 't', partition: 0, offset: 5n }]])
  assert.equal(progress.idle, true)
  await mode.stop()
})
