import assert from 'node:assert/strict'
import { afterEach, test } from 'node:test'
import { BoundedQueue } from '../../../../src/sidecar/pipeline/bounded-queue.js'
import { ExactlyOnceLanes, type HeldBytes } from '../../../../src/sidecar/pipeline/exactly-once-lanes.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { bucketOf } from '../../../../src/ports/partition-bucket.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import { PartitionProgress } from '../../../../src/sidecar/pipeline/partition-progress.js'
import type { CommitOffset, PartitionAck, PartitionWrite, PositionStore, SourcePosition, TransactionalSink } from '../../../../src/ports/ports.js'
import type { WorkerListener } from '../../../../src/sidecar/pipeline/producer-worker.js'
import { TransactionFailedError } from '../../../../src/ports/transaction-failed-error.js'
import { MAX_RETAKES } from '../../../../src/sidecar/pipeline/exactly-once-lane.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { fetchControl, records } from '../../../helpers/fake-ports.js'
import { checked } from '../../../helpers/checked.js'

class FakeTransactionalSink implements TransactionalSink {
  readonly connected = true
  readonly calls: string[] = []
  readonly commits: SourcePosition[][] = []
  failCommit: Error | undefined
  /** When set, each commit settles only when the test settles it (`settle`): the lane writes on meanwhile. */
  holdCommits = false
  readonly #held: Array<{ resolve: () => void, reject: (error: Error) => void }> = []
  /** Called at every call of the lane into its sink: the test checks the invariants there (`setup`). */
  onCall: () => void = () => {}
  async start (): Promise<void> {}
  async stop (): Promise<void> {}
  async acquire (): Promise<void> {
    this.onCall()
    this.calls.push('acquire')
  }

  async release (): Promise<void> {
    this.onCall()
    this.calls.push('release')
  }

  readonly staged: SourcePosition[][] = []
  stagePositions (positions: readonly SourcePosition[]): void {
    this.onCall()
    this.staged.push([...positions])
  }

  async send (_writes: readonly PartitionWrite[]): Promise<PartitionAck[]> { return [] }
  async commitTransaction (positions: readonly SourcePosition[]): Promise<{ committed: Promise<void> }> {
    this.onCall()
    if (this.failCommit !== undefined) throw this.failCommit
    this.commits.push([...positions])
    this.calls.push('commit')
    if (!this.holdCommits) return { committed: Promise.resolve() }
    return { committed: new Promise<void>((resolve, reject) => this.#held.push({ resolve, reject })) }
  }

  /** Settles the oldest commit still open. */
  settle (error?: Error): void {
    this.onCall()
    const next = this.#held.shift()
    if (next === undefined) throw new Error('no commit is open')
    if (error === undefined) next.resolve()
    else next.reject(error)
  }
}

/** Invariants found broken during a test's lane steps (`setup`). */
const violations: Error[] = []
afterEach(() => {
  const found = violations.splice(0)
  assert.deepEqual(found.map(error => error.message), [], 'the lanes kept their invariants at every step')
})

/** Records which batches had their queue bytes given back (and passes each to `then`). */
function heldBytes (capacityBytes = 1_000_000_000, then: (batch: MirrorBatch) => void = () => {}): HeldBytes & { released: MirrorBatch[] } {
  const released: MirrorBatch[] = []
  return {
    capacityBytes,
    released,
    releaseBytes: batch => {
      released.push(batch)
      then(batch)
    },
  }
}

function setup (
  stored: Map<string, bigint> = new Map(),
  lanes = 4,
  positionsOverride?: PositionStore,
  held = heldBytes()
): {
    lanes: ExactlyOnceLanes
    held: ReturnType<typeof heldBytes>
    sinks: FakeTransactionalSink[]
    progress: PartitionProgress
    acked: MirrorBatch[]
    inner: WorkerListener
    seeks: CommitOffset[]
    stored: Map<string, bigint>
    hooks: { onSeek: () => void }
  } {
  const sinks = Array.from({ length: lanes }, () => new FakeTransactionalSink())
  const positions: PositionStore = positionsOverride ?? {
    start: async () => {},
    stop: async () => {},
    read: async keys => new Map([...stored].filter(([key]) => keys.includes(key))),
  }
  const progress = checked(new PartitionProgress())
  const acked: MirrorBatch[] = []
  // As the flow's AckRecorder: an acknowledgement moves the partition's committable offset.
  const inner: WorkerListener = {
    acknowledged: batch => {
      acked.push(batch)
      progress.acknowledged(batch, 0)
      check()
    },
    skipped: () => {},
    produceRequest: () => {},
    retry: () => {},
  }
  const labels = { flow: 'a->b', source: 'a', target: 'b' }
  const seeks: CommitOffset[] = []
  const hooks = { onSeek: () => {} }
  const exactlyOnce = new ExactlyOnceLanes({
    sinks,
    positions,
    progress,
    commitIntervalMs: 60_000,
    heartbeatIntervalMs: 50,
    takeBackoffMs: { initial: 1, max: 2 },
    labels,
    observer: {},
    logger: silentLogger,
    signal: new AbortController().signal,
    onFatal: error => {
      throw error
    },
    seek: offsets => {
      seeks.push(...offsets)
      hooks.onSeek()
    },
    acks: inner,
    held,
  })
  // Every step of a lane reaches its sink or passes an acknowledgement on: the invariants hold at each.
  // A broken one is kept too, as the lane logs and goes on when giving its id up fails.
  function check (): void {
    try {
      exactlyOnce.checkInvariants()
    } catch (error) {
      violations.push(error as Error)
      throw error
    }
  }
  for (const sink of sinks) sink.onCall = check
  return { lanes: exactlyOnce, held, sinks, progress, acked, inner, seeks, stored, hooks }
}

function batch (topic: string, partition: number, from: number, count: number): MirrorBatch {
  return {
    sourceTopic: topic,
    targetTopic: topic,
    partition,
    records: records(from, count),
    firstOffset: BigInt(from),
    nextOffset: BigInt(from + count),
    bytes: count * 10,
    pollTimeMs: 0,
  }
}

test('bucketOf: the same bucket for a partition everywhere, partitions of a topic spread over the buckets', () => {
  assert.equal(bucketOf('orders', 3, 4), bucketOf('orders', 3, 4))
  assert.deepEqual(new Set([0, 1, 2, 3].map(p => bucketOf('orders', p, 4))).size, 4)
  for (const p of [0, 1, 7, 1000]) {
    const b = bucketOf('a-topic-with-a-negative-hash-ääää', p, 3)
    assert.ok(b >= 0 && b < 3, `bucket ${b}`)
  }
})

test('acknowledgements are held until the lane\'s transaction committed, with the position each partition reached', async () => {
  const { lanes, held, sinks, progress, acked } = setup()
  const lane = lanes.laneOf('t', 0)
  lanes.assign(new Set([partitionKey('t', 0)]))
  const ticket = await lanes.admit('t', 0, fetchControl())
  assert.notEqual(ticket, undefined)
  const { transaction, listener } = lanes.lane(lane)
  const first = batch('t', 0, 0, 10)
  const second = batch('t', 0, 10, 5)
  for (const b of [first, second]) {
    lanes.stamp(b, ticket as number)
    progress.admitted(b)
  }
  await transaction.write([first, second], async written => {
    for (const b of written) listener.acknowledged(b, [{ from: 0, count: b.records.length, targetBaseOffset: 0n }], 0, b.records.length)
  })
  assert.deepEqual(acked, [], 'nothing goes on before the commit')
  assert.deepEqual(held.released, [], 'their queue bytes stay held until the commit')
  assert.deepEqual(progress.commitCandidates().map(c => c.offset), [0n], 'the source commit may not pass the first record yet')
  await transaction.idle()
  assert.deepEqual(sinks[lane]?.commits, [[{ topic: 't', partition: 0, offset: 15n }]])
  assert.deepEqual(acked, [first, second])
  assert.deepEqual(held.released, [first, second])
  assert.deepEqual(progress.commitCandidates().map(c => c.offset), [15n])
})

test('a partition resumes from the position the target holds: the source is sought there, and records below it are dropped at intake', async () => {
  const { lanes, progress, seeks } = setup(new Map([[partitionKey('t', 1), 50n]]))
  lanes.assign(new Set([partitionKey('t', 1), partitionKey('t', 2)]))
  assert.notEqual(await lanes.admit('t', 1, fetchControl()), undefined)
  assert.notEqual(await lanes.admit('t', 2, fetchControl()), undefined)
  assert.deepEqual(seeks, [{ topic: 't', partition: 1, offset: 50n }], 'a partition without a position is fetched from the group offset')
  assert.equal(progress.admitFrom('t', 1, records(40, 20)), 10, 'offsets 40..49 are on the target already')
})

test(
  'a batch continuing from past what was handed over is refused and the partition fetched again from there; from the position or before it is admitted',
  async () => {
    const { lanes, seeks } = setup(new Map([[partitionKey('t', 1), 50n]]))
    lanes.assign(new Set([partitionKey('t', 1)]))
    assert.notEqual(await lanes.admit('t', 1, fetchControl()), undefined)
    assert.equal(lanes.contiguous('t', 1, 40n), true, 'a fetch from the group offset, before the position')
    assert.equal(lanes.contiguous('t', 1, 50n), true)
    assert.equal(lanes.contiguous('t', 1, undefined), true, 'a batch that does not say where it continues from')
    assert.deepEqual(seeks, [{ topic: 't', partition: 1, offset: 50n }], 'the source was sought to the position when the lane was taken')
    assert.equal(lanes.contiguous('t', 1, 60n), false, 'offsets 50..59 would never be copied')
    assert.deepEqual(seeks, [{ topic: 't', partition: 1, offset: 50n }, { topic: 't', partition: 1, offset: 50n }])
    assert.equal(lanes.contiguous('t', 2, 60n), true, 'a partition not seen yet starts wherever the source fetches')
  }
)

test('batches admitted before the lane was taken again are not written; a lane given up is released and its failures dropped', async () => {
  const { lanes, held, sinks } = setup()
  const lane = lanes.laneOf('t', 2)
  const key = partitionKey('t', 2)
  lanes.assign(new Set([key]))
  const ticket = await lanes.admit('t', 2, fetchControl()) as number
  const old = batch('t', 2, 0, 3)
  lanes.stamp(old, ticket)
  lanes.assign(new Set())
  lanes.assign(new Set([key]))
  assert.notEqual(await lanes.admit('t', 2, fetchControl()), ticket, 'a new acquisition, a new ticket')
  const { transaction } = lanes.lane(lane)
  let written = 0
  await transaction.write([old], async b => { written += b.length })
  assert.equal(written, 0, 'the old batch belongs to a transaction that is gone')
  assert.deepEqual(held.released, [old], 'and its queue bytes are given back at once')
  assert.deepEqual(sinks[lane]?.calls, ['acquire', 'release', 'acquire'])

  // Given up while writing: the fenced transaction is dropped, not a failure of the flow.
  const fresh = batch('t', 2, 0, 3)
  lanes.stamp(fresh, await lanes.admit('t', 2, fetchControl()) as number)
  await transaction.write([fresh], async () => {
    lanes.assign(new Set())
    throw new TransactionFailedError('fenced', { kafkaCode: 'PRODUCER_FENCED' })
  })
  assert.equal(await lanes.admit('t', 2, fetchControl()), undefined, 'not owned here any more')
  assert.deepEqual(held.released, [old, fresh], 'the dropped transaction gave its bytes back')
})

test(
  'a transaction aborted on a lane still owned: the lane is taken again, its partitions fetched again from the positions on the target (or what was acknowledged), and nothing of the aborted transaction is acknowledged',
  async () => {
    const { lanes, held, sinks, progress, acked, seeks, stored, hooks } = setup()
    const lane = lanes.laneOf('t', 0)
    const sink = sinks[lane] as FakeTransactionalSink
    lanes.assign(new Set([partitionKey('t', 0)]))
    const first = await lanes.admit('t', 0, fetchControl()) as number
    const { transaction, listener } = lanes.lane(lane)
    const write = async (ticket: number, from: number, count: number): Promise<MirrorBatch> => {
      const b = batch('t', 0, from, count)
      lanes.stamp(b, ticket)
      progress.admitted(b)
      await transaction.write([b], async written => { for (const w of written) listener.acknowledged(w, [], 0, count) })
      return b
    }
    const committed = await write(first, 0, 2)
    await transaction.idle()
    assert.deepEqual(acked, [committed])
    const aborted = await write(first, 2, 3)
    sink.failCommit = new TransactionFailedError('fenced', { kafkaCode: 'INVALID_PRODUCER_EPOCH' })
    await transaction.idle()
    sink.failCommit = undefined
    assert.deepEqual(acked, [committed], 'nothing of the aborted transaction is acknowledged')
    assert.ok(held.released.includes(aborted), 'its queue bytes are given back')

    // A batch fetched before the lane is taken again waits for it; the source's seek makes it stale (kafkajs: isStale).
    const waiting = fetchControl()
    hooks.onSeek = () => { waiting.active = false }
    const second = await lanes.admit('t', 0, waiting)
    assert.equal(second, undefined, 'a batch fetched before the seek (its control inactive once the source seeks) is not admitted')
    assert.deepEqual(sink.calls, ['acquire', 'commit', 'acquire'], 'the lane\'s producers were started again')
    assert.deepEqual(seeks, [{ topic: 't', partition: 0, offset: 2n }], 'no position on the target: back to what was acknowledged')
    const retaken = await lanes.admit('t', 0, fetchControl()) as number
    assert.notEqual(retaken, first)
    assert.equal(progress.admitFrom('t', 0, records(2, 3)), 0, 'offsets 2..4 are admitted again')
    let written = 0
    await transaction.write([aborted], async () => { written++ })
    assert.equal(written, 0, 'a batch of the aborted transaction is never written in the new one')

    // With a position on the target, the partition goes back to it.
    stored.set(partitionKey('t', 0), 2n)
    await write(retaken, 2, 3)
    sink.failCommit = new TransactionFailedError('fenced', { kafkaCode: 'PRODUCER_FENCED' })
    await transaction.idle()
    sink.failCommit = undefined
    assert.ok(await lanes.admit('t', 0, fetchControl()) !== undefined)
    assert.deepEqual(seeks.at(-1), { topic: 't', partition: 0, offset: 2n })
    assert.deepEqual(progress.commitCandidates().map(c => c.offset), [2n], 'the source commit stays at the last committed transaction')
  }
)

test(`a lane whose transactions are all aborted stops the flow after ${MAX_RETAKES} in a row; a commit in between starts the count again`, async () => {
  const { lanes, sinks, progress } = setup()
  const lane = lanes.laneOf('t', 0)
  const sink = sinks[lane] as FakeTransactionalSink
  lanes.assign(new Set([partitionKey('t', 0)]))
  const { transaction, listener } = lanes.lane(lane)
  const writeAndCommit = async (fail: boolean): Promise<void> => {
    const ticket = await lanes.admit('t', 0, fetchControl()) as number
    const b = batch('t', 0, 0, 2)
    lanes.stamp(b, ticket)
    progress.admitted(b)
    await transaction.write([b], async written => { for (const w of written) listener.acknowledged(w, [], 0, 2) })
    sink.failCommit = fail ? new TransactionFailedError('timed out', { kafkaCode: 'INVALID_PRODUCER_EPOCH' }) : undefined
    await transaction.idle()
  }
  for (let i = 0; i < MAX_RETAKES - 1; i++) await writeAndCommit(true)
  await writeAndCommit(false)
  for (let i = 0; i < MAX_RETAKES; i++) await writeAndCommit(true)
  await assert.rejects(
    writeAndCommit(true),
    (error: Error) => error instanceof TransactionFailedError && error.message.includes(`lost ${MAX_RETAKES} transactions in a row`)
  )
})

test(
  'what a transaction wrote keeps its queue bytes until the commit, and a lane commits early once it holds its share (half of queue.bytes over the lanes)',
  async () => {
    // 2 lanes, 400 bytes: a lane's share is 100 bytes, i.e. 10 records of the batches below.
    const queue = new BoundedQueue<MirrorBatch>(1_000, 400, 2)
    const { lanes, sinks, progress, acked } = setup(new Map(), 2, undefined, heldBytes(queue.capacityBytes, b => queue.release(b, 'bytes')))
    const lane = lanes.laneOf('t', 0)
    lanes.assign(new Set([partitionKey('t', 0)]))
    const ticket = await lanes.admit('t', 0, fetchControl()) as number
    const { transaction, listener } = lanes.lane(lane)
    const write = async (from: number, count: number): Promise<MirrorBatch> => {
      const b = batch('t', 0, from, count)
      lanes.stamp(b, ticket)
      progress.admitted(b)
      await queue.push(b, lane)
      const taken = await queue.take(lane, 1_000_000)
      await transaction.write(taken, async written => {
        for (const w of written) listener.acknowledged(w, [{ from: 0, count, targetBaseOffset: 0n }], 0, count)
      })
      for (const t of taken) queue.release(t, 'records')
      return b
    }
    const first = await write(0, 6)
    assert.equal(queue.records, 0, 'written: its records are no longer counted')
    assert.equal(queue.bytes, 60, 'but its bytes are held by the open transaction')
    assert.deepEqual(sinks[lane]?.commits, [], 'below the share (100 bytes): no commit yet (interval 60 s)')
    const second = await write(6, 5)
    assert.deepEqual(sinks[lane]?.commits, [[{ topic: 't', partition: 0, offset: 11n }]], '110 bytes held: committed at once')
    assert.equal(queue.bytes, 0)
    assert.deepEqual(acked, [first, second])
  }
)

test('a queue whose bytes are all held for a commit admits nothing until the commit gives them back', async () => {
  const queue = new BoundedQueue<MirrorBatch>(1_000, 100, 1)
  const held = batch('t', 0, 0, 10)
  await queue.push(held, 0)
  await queue.take(0, 1_000)
  queue.release(held, 'records')
  assert.equal(queue.records, 0)
  let admitted = false
  const next = queue.push(batch('t', 0, 10, 1), 0).then(() => { admitted = true })
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(admitted, false, 'no records queued, but no bytes free either')
  queue.release(held, 'bytes')
  await next
  assert.equal(admitted, true)
  assert.equal(queue.bytes, 10)
})

/** One lane of `setup` with partition t-0 taken, and a way to write and acknowledge a batch of it. */
async function takenLane (
  capacityBytes?: number
): Promise<
  ReturnType<typeof setup> & {
    lane: number
    sink: FakeTransactionalSink
    held: ReturnType<typeof heldBytes>
    write: (from: number, count: number) => Promise<MirrorBatch>
    transaction: ReturnType<ExactlyOnceLanes['lane']>['transaction']
  }
> {
  const context = setup(new Map(), 4, undefined, heldBytes(capacityBytes))
  const lane = context.lanes.laneOf('t', 0)
  context.lanes.assign(new Set([partitionKey('t', 0)]))
  const ticket = (await context.lanes.admit('t', 0, fetchControl())) as number
  const { held } = context
  const { transaction, listener } = context.lanes.lane(lane)
  const write = async (from: number, count: number): Promise<MirrorBatch> => {
    const b = batch('t', 0, from, count)
    context.lanes.stamp(b, ticket)
    context.progress.admitted(b)
    await transaction.write([b], async written => {
      for (const w of written) listener.acknowledged(w, [{ from: 0, count, targetBaseOffset: 0n }], 0, count)
    })
    return b
  }
  return { ...context, lane, sink: context.sinks[lane] as FakeTransactionalSink, held, write, transaction }
}

test('the next transaction is written while the one before commits; acknowledgements and queue bytes wait for their own commit, in order', async () => {
  const { sink, held, acked, progress, write, transaction } = await takenLane()
  sink.holdCommits = true
  const first = await write(0, 4)
  // Commit the first transaction (as the interval would), then write on without waiting for it.
  const idle = transaction.idle()
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(sink.commits.length, 1, 'the commit was asked for')
  sink.settle()
  await idle
  assert.deepEqual(acked, [first])
  sink.holdCommits = true
  const second = await write(4, 3)
  const third = await write(7, 2)
  const secondIdle = transaction.idle()
  await new Promise(resolve => setImmediate(resolve))
  assert.deepEqual(sink.commits.at(-1), [{ topic: 't', partition: 0, offset: 9n }])
  assert.deepEqual(acked, [first], 'not acknowledged before its commit settled')
  assert.deepEqual(held.released, [first], 'nor its queue bytes given back')
  assert.deepEqual(progress.commitCandidates().map(c => c.offset), [4n])
  sink.settle()
  await secondIdle
  assert.deepEqual(acked, [first, second, third])
  assert.deepEqual(held.released, [first, second, third])
  assert.deepEqual(progress.commitCandidates().map(c => c.offset), [9n])
})

test(
  'a commit that fails after the lane went on writing is found at the next write, or at idle: the lane is taken again, and nothing of that transaction, or after it, is acknowledged',
  async () => {
  // 4 lanes, 320 bytes: a lane's share is 40 bytes, so a 4-record batch (40 bytes) is committed by its write.
    const { sink, acked, progress, write, transaction, held } = await takenLane(320)
    sink.holdCommits = true
    const first = await write(0, 4)
    assert.equal(sink.commits.length, 1, 'the write asked for the commit, and returned without waiting for it')
    sink.settle(new TransactionFailedError('fenced while committing', { kafkaCode: 'PRODUCER_FENCED' }))
    await new Promise(resolve => setImmediate(resolve))
    const next = await write(4, 1)
    assert.deepEqual(acked, [])
    assert.deepEqual(held.released, [first, next], 'the written batch and the one after it gave their queue bytes back')
    await transaction.idle()
    assert.deepEqual(progress.commitCandidates().map(c => c.offset), [0n], 'nothing of the failed transaction may be committed on the source')
    assert.deepEqual(sink.calls, ['acquire', 'commit', 'acquire'], 'taken again')
    assert.equal(sink.commits.length, 1, 'the batch after the failed commit is not written in the new transaction')

    const other = await takenLane()
    other.sink.holdCommits = true
    await other.write(0, 2)
    const idle = other.transaction.idle()
    await new Promise(resolve => setImmediate(resolve))
    other.sink.settle(new TransactionFailedError('timed out', { kafkaCode: 'INVALID_PRODUCER_EPOCH' }))
    await idle
    assert.deepEqual(other.acked, [])
    assert.notEqual(await other.lanes.admit('t', 0, fetchControl()), undefined)
    assert.deepEqual(other.sink.calls, ['acquire', 'commit', 'acquire'], 'idle waited for the commit, and the lane was taken again')
    assert.deepEqual(other.seeks, [{ topic: 't', partition: 0, offset: 0n }])
  }
)

test(
  'the write that closes a transaction carries its positions; a transaction with a failed write is never committed, even when the lane is given up',
  async () => {
  // 4 lanes, 320 bytes: a lane's share is 40 bytes (4 records of these batches).
    const { lanes, sink, acked, write, transaction } = await takenLane(320)
    await write(0, 2)
    assert.deepEqual(sink.staged, [], 'an interval of 60 s and 20 bytes of 40: the transaction stays open, no positions yet')
    await write(2, 2)
    assert.deepEqual(sink.staged, [[{ topic: 't', partition: 0, offset: 4n }]], 'the closing write stages where the transaction takes the partition')
    assert.deepEqual(sink.commits, [[{ topic: 't', partition: 0, offset: 4n }]])
    // A write whose requests failed for good (the flow stops): what it wrote may be on the target.
    const failing = batch('t', 0, 4, 2)
    lanes.stamp(failing, await lanes.admit('t', 0, fetchControl()) as number)
    await assert.rejects(transaction.write([failing], async () => { throw new Error('the target refused it for good') }), /refused it for good/)
    lanes.assign(new Set())
    await lanes.stop()
    assert.equal(sink.commits.length, 1, 'nothing of the failed transaction was committed')
    assert.equal(acked.length, 2, 'only the committed transaction\'s batches were acknowledged')
  }
)

test(
  'a lane whose positions cannot be read for a while (the target unreachable, its leaders moving) is taken once they can, however many attempts that takes',
  async () => {
    let failures = 25
    const positions: PositionStore = {
      start: async () => {},
      stop: async () => {},
      read: async () => {
        if (failures-- > 0) throw new MirrorError(ErrorCodes.CONNECTION, 'cannot reach the target cluster', { retriable: true })
        return new Map([[partitionKey('t', 1), 70n]])
      },
    }
    const { lanes, seeks } = setup(new Map(), 4, positions)
    lanes.assign(new Set([partitionKey('t', 1)]))
    assert.notEqual(await lanes.admit('t', 1, fetchControl()), undefined, 'admitted once the lane is taken')
    assert.deepEqual(seeks, [{ topic: 't', partition: 1, offset: 70n }])
    assert.equal(failures, -1, 'every failed read was retried')
  }
)

test('a committed transaction\'s batches reach the ack listener before their bytes go back, so a digest reading them keeps them counted', async () => {
  const ackedWhenReleased: boolean[] = []
  // Read when the lane gives bytes back, after setup() made the acknowledgements' list.
  const seen: { acked: readonly MirrorBatch[] } = { acked: [] }
  const held = heldBytes(1_000_000_000, b => { ackedWhenReleased.push(seen.acked.includes(b)) })
  const { lanes, progress, acked } = setup(new Map(), 4, undefined, held)
  seen.acked = acked
  const lane = lanes.laneOf('t', 0)
  lanes.assign(new Set([partitionKey('t', 0)]))
  const ticket = await lanes.admit('t', 0, fetchControl())
  const { transaction, listener } = lanes.lane(lane)
  const batches = [batch('t', 0, 0, 10), batch('t', 0, 10, 5)]
  for (const b of batches) {
    lanes.stamp(b, ticket as number)
    progress.admitted(b)
  }
  await transaction.write(batches, async written => {
    for (const b of written) listener.acknowledged(b, [{ from: 0, count: b.records.length, targetBaseOffset: 0n }], 0, b.records.length)
  })
  await transaction.idle()
  assert.deepEqual(ackedWhenReleased, [true, true], 'each batch acknowledged to the listener (its digest started) before its bytes went back')
})

test('checkInvariants names the invariant a lane breaks: an acknowledgement held on a lane without its transactional id', () => {
  const { lanes } = setup()
  lanes.checkInvariants()
  const { listener } = lanes.lane(lanes.laneOf('t', 0))
  // A worker writing for a lane never taken (a caller breaking the lane's contract).
  listener.acknowledged(batch('t', 0, 0, 2), [{ from: 0, count: 2, targetBaseOffset: 0n }], 0, 2)
  assert.throws(
    () => lanes.checkInvariants(),
    /^Error: Invariant B broken: lane \d+ gave up its transactional id with 0 batches written, 1 acknowledgements held/
  )
})

test('a lane given up while its commit is unsettled gives its transactional id up only once the commit settled', async () => {
  const { lanes, sink, acked, write } = await takenLane()
  sink.holdCommits = true
  const first = await write(0, 4)
  lanes.assign(new Set())
  await new Promise(resolve => setImmediate(resolve))
  assert.deepEqual(sink.calls, ['acquire', 'commit'], 'the open transaction is committed; the id is still held')
  sink.settle()
  await lanes.stop()
  assert.deepEqual(sink.calls, ['acquire', 'commit', 'release'])
  assert.deepEqual(acked, [first])
  lanes.checkInvariants()
})
