import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MirrorFlow } from '../../../../src/sidecar/pipeline/mirror-flow.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import { createLogger, silentLogger } from '../../../../src/shared/logger.js'
import { fakeFlowConfig, fakePorts, fetchControl, records, until } from '../../../helpers/fake-ports.js'

const values = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => `v${from + i}`)

/** The next source offset of the partition not yet acknowledged by the target. */
function nextToMirror (flow: MirrorFlow, topic: string, partition: number): bigint | undefined {
  return flow.snapshot().partitions.find(p => p.topic === topic && p.partition === partition)?.nextOffsetToMirror
}

async function started (
  topics: Record<string, number>,
  overrides: Parameters<typeof fakeFlowConfig>[0] = {},
  options: { lanes?: number, logs?: string[] } = {}
) {
  const config = fakeFlowConfig({ numProducers: options.lanes ?? 2, ...overrides })
  const ports = fakePorts(topics, options.lanes ?? 2)
  const logger =
    options.logs === undefined
      ? silentLogger
      : createLogger({
        level: 'debug',
        write: line => {
          options.logs?.push(line)
        },
      })
  const flow = new MirrorFlow(config, ports, { logger, drainTimeoutMs: 2_000 })
  await flow.start()
  return { flow, ports, source: ports.current() }
}

test('keeps each partition in offset order, in one request at a time, across lanes and retried requests', { timeout: 15_000 }, async t => {
  const { flow, ports, source } = await started({ orders: 4 })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  // Both lanes fail their first requests: the retries must not reorder or skip anything.
  for (const sink of ports.sinkFakes) sink.failNext(2)
  const deliveries: Array<Promise<void>> = []
  for (let round = 0; round < 3; round++) {
    for (let p = 0; p < 4; p++) deliveries.push(source.deliver('orders', p, records(round * 10, 10)))
  }
  await Promise.all(deliveries)
  await until(() => [0, 1, 2, 3].every(p => ports.target.values('orders', p).length === 30), 'every record on the target')
  for (let p = 0; p < 4; p++) {
    assert.deepEqual(ports.target.values('orders', p), values(0, 30), `partition ${p} in order, each record once`)
  }
  assert.equal(ports.target.overlaps, 0, 'no partition was in two requests at once')
  assert.ok(ports.sinkFakes.some(sink => sink.sends >= 3), 'failed requests were retried')
  assert.ok(ports.sinkFakes.every(sink => sink.sends === 0 || sink.sends >= 3), 'every lane that sent retried its failed requests')
})

test('a request that fails after the target wrote some of its partitions is sent again for the others only', { timeout: 15_000 }, async t => {
  const { flow, ports, source } = await started({ orders: 3 }, {}, { lanes: 1 })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  const [sink] = ports.sinkFakes
  assert.ok(sink !== undefined)
  sink.gate.close()
  for (let p = 0; p < 3; p++) await source.deliver('orders', p, records(0, 10))
  // The three partitions' batches go out in one request; the first is written, then the request fails.
  sink.failAfterFirstPartition()
  sink.gate.release()
  await until(() => [0, 1, 2].every(p => nextToMirror(flow, 'orders', p) === 10n), 'every partition acknowledged')
  for (let p = 0; p < 3; p++) assert.deepEqual(ports.target.values('orders', p), values(0, 10), `partition ${p} once`)
})

test('commits only what the target acknowledged, never past an unacknowledged batch', { timeout: 15_000 }, async t => {
  const { flow, ports, source } = await started({ orders: 2 })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  const [lane0] = ports.sinkFakes
  assert.ok(lane0 !== undefined)
  lane0.gate.close()
  // Partition 0 goes out first, through lane 0 (held); partition 1 then through lane 1 (open).
  await source.deliver('orders', 0, records(0, 10))
  await until(() => lane0.sends >= 1, 'partition 0 sent through lane 0')
  await source.deliver('orders', 1, records(0, 10))
  await until(() => nextToMirror(flow, 'orders', 1) === 10n, 'partition 1 acknowledged')
  assert.equal(await flow.commit(), true)
  assert.equal(source.committed('orders', 1), 10n, 'the acknowledged partition is committed up to its last record + 1')
  assert.equal(source.committed('orders', 0) ?? 0n, 0n, 'nothing of the partition whose batch is in flight')

  await source.deliver('orders', 0, records(10, 10))
  assert.equal(await flow.commit(), true)
  assert.equal(source.committed('orders', 0) ?? 0n, 0n, 'a later batch queued behind the unacknowledged one is not committed either')
  lane0.gate.release()
  await until(() => nextToMirror(flow, 'orders', 0) === 20n, 'partition 0 acknowledged')
  assert.equal(await flow.commit(), true)
  assert.equal(source.committed('orders', 0), 20n)
})

test('holds intake while the queue is full, heartbeating, and resumes without dropping when the target acknowledges', { timeout: 15_000 }, async t => {
  const { flow, ports, source } = await started({ orders: 1 }, { queueMaxRecords: 10 }, { lanes: 1 })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  const [sink] = ports.sinkFakes
  assert.ok(sink !== undefined)
  sink.gate.close()
  await source.deliver('orders', 0, records(0, 10))
  const control = fetchControl()
  let accepted = false
  const second = source.deliver('orders', 0, records(10, 10), control).then(() => { accepted = true })
  await until(() => control.heartbeats >= 2, 'heartbeats while held back')
  assert.equal(accepted, false, 'the second batch waits for room')
  sink.gate.release()
  await second
  await until(() => ports.target.values('orders', 0).length === 20, 'both batches written')
  assert.deepEqual(ports.target.values('orders', 0), values(0, 20))
})

test('a record the target refuses for good stops the flow, and nothing past it is committed', { timeout: 15_000 }, async () => {
  const { flow, ports, source } = await started({ orders: 1 }, {}, { lanes: 1 })
  ports.sinkFakes[0]?.refuse(5)
  await source.deliver('orders', 0, records(0, 10))
  await assert.rejects(
    flow.done,
    (error: unknown) => error instanceof MirrorError && error.code === ErrorCodes.SEND_FAILED && /orders partition 0 offset 5 /.test(error.message)
  )
  assert.equal(flow.state, 'failed')
  assert.deepEqual(ports.target.values('orders', 0), values(0, 5), 'the records before the refused one are on the target')
  assert.equal(source.committed('orders', 0), 5n, 'the commit reaches the refused record and stops there')
})

test(
  "a rebalance with records in flight: no commit for a partition given away; when it comes back, no commit below the group's offset",
  { timeout: 15_000 },
  async t => {
    const { flow, ports, source } = await started({ orders: 1 }, {}, { lanes: 1 })
    t.after(() =>
      flow.stop().catch(() => {
        /* clean-up: a flow the test made fail rejects its stop */
      })
    )
    const [sink] = ports.sinkFakes
    assert.ok(sink !== undefined)
    sink.gate.close()
    await source.deliver('orders', 0, records(0, 10))
    source.assign(new Set())
    sink.gate.release()
    await until(() => nextToMirror(flow, 'orders', 0) === 10n || ports.target.values('orders', 0).length === 10, 'in-flight batch written')
    await until(() => flow.snapshot().queueRecords === 0, 'in-flight batch acknowledged')
    assert.equal(await flow.commit(), true)
    assert.equal(source.committed('orders', 0), undefined, 'the new owner commits that partition, not this process')
    // The new owner copied on and committed 15; then the partition comes back here, and the source fetches it from 15.
    source.assign(new Set([partitionKey('orders', 0)]))
    assert.equal(await flow.commit(), true)
    assert.equal(
      source.committed('orders', 0),
      undefined,
      'what this process acknowledged before it lost the partition (10) is not committed: the group is at 15'
    )
    await source.deliver('orders', 0, records(15, 5))
    await until(() => nextToMirror(flow, 'orders', 0) === 20n, 'the new records acknowledged')
    assert.deepEqual(ports.target.values('orders', 0), [...values(0, 10), ...values(15, 5)])
    assert.equal(await flow.commit(), true)
    assert.equal(source.committed('orders', 0), 20n)
  }
)

test('a partition given away and back while a commit waits for the offset syncs: the offset it had before is not committed', { timeout: 15_000 }, async t => {
  const config = fakeFlowConfig({ numProducers: 1 })
  const ports = fakePorts({ orders: 1 }, 1)
  let release = (): void => {}
  let flushing = (): void => {}
  const flushStarted = new Promise<void>(resolve => { flushing = resolve })
  const ackListener = { acknowledged: () => {}, flush: async () => { flushing(); await new Promise<void>(resolve => { release = resolve }) } }
  const flow = new MirrorFlow(config, ports, { logger: silentLogger, drainTimeoutMs: 2_000, ackListener })
  await flow.start()
  t.after(() => { release(); return flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }) })
  const source = ports.current()
  await source.deliver('orders', 0, records(0, 10))
  await until(() => nextToMirror(flow, 'orders', 0) === 10n, 'acknowledged')
  const commit = flow.commit()
  await flushStarted
  // While the offset syncs are written: the partition goes to another member (which commits on) and comes back.
  source.assign(new Set())
  source.assign(new Set([partitionKey('orders', 0)]))
  release()
  assert.equal(await commit, true)
  assert.equal(source.committed('orders', 0), undefined, 'offset 10 is not committed over what the other member committed')
})

test('stop gives up on records in flight at the drain deadline and leaves them uncommitted', { timeout: 15_000 }, async () => {
  const config = fakeFlowConfig({ numProducers: 1 })
  const ports = fakePorts({ orders: 1 }, 1)
  const flow = new MirrorFlow(config, ports, { logger: silentLogger, drainTimeoutMs: 150 })
  await flow.start()
  const source = ports.current()
  await source.deliver('orders', 0, records(0, 5))
  await until(() => nextToMirror(flow, 'orders', 0) === 5n, 'first batch acknowledged')
  ports.sinkFakes[0]?.gate.close()
  await source.deliver('orders', 0, records(5, 5))
  const started = Date.now()
  await flow.stop()
  const elapsed = Date.now() - started
  assert.ok(elapsed >= 140, `waited for the drain deadline (${elapsed} ms)`)
  assert.ok(elapsed < 3_000, `and not much longer (${elapsed} ms)`)
  assert.equal(source.committed('orders', 0), 5n, 'the final commit covers what was acknowledged, not what was in flight')
  assert.equal(flow.state, 'stopped')
  assert.ok(source.stopped)
})

test('a consumer that restarts and fetches again from an earlier offset causes no second copy', { timeout: 15_000 }, async t => {
  const { flow, ports, source } = await started({ orders: 1 }, {}, { lanes: 1 })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  await source.deliver('orders', 0, records(0, 10))
  await until(() => ports.target.values('orders', 0).length === 10, 'first fetch written')
  // kafkajs restarts a crashed consumer, which fetches again from the committed offset (none yet).
  await source.deliver('orders', 0, records(0, 15))
  await until(() => ports.target.values('orders', 0).length >= 15, 'the new records written')
  assert.deepEqual(ports.target.values('orders', 0), values(0, 15))
})

test('a source crash it will not recover from fails the flow after committing what was acknowledged', { timeout: 15_000 }, async () => {
  const { flow, source } = await started({ orders: 1 }, {}, { lanes: 1 })
  await source.deliver('orders', 0, records(0, 10))
  await until(() => nextToMirror(flow, 'orders', 0) === 10n, 'records acknowledged')
  source.listener?.onCrash(new MirrorError(ErrorCodes.KAFKA, 'source consumer of group "mirror" stopped'))
  await assert.rejects(flow.done, /source consumer of group "mirror" stopped/)
  assert.equal(flow.state, 'failed')
  assert.equal(source.committed('orders', 0), 10n)
})

test(
  'a stop whose final commit fails rejects with MIRROR_COMMIT_FAILED; failing commits are logged as errors from the third',
  { timeout: 15_000 },
  async () => {
    const logs: string[] = []
    const { flow, ports, source } = await started({ orders: 1 }, {}, { lanes: 1, logs })
    source.commitError = new MirrorError(ErrorCodes.KAFKA, 'coordinator gone', { retriable: false })
    await source.deliver('orders', 0, records(0, 3))
    await until(() => ports.target.values('orders', 0).length === 3, 'records written')
    assert.equal(await flow.commit(), false)
    assert.equal(await flow.commit(), false)
    const levels = (): string[] =>
      logs
        .map(line => JSON.parse(line) as { level: string, msg: string })
        .filter(l => /commit/.test(l.msg))
        .map(l => l.level)
    assert.deepEqual(levels(), ['warn', 'warn'])
    await assert.rejects(flow.stop(), (error: unknown) => error instanceof MirrorError && error.code === ErrorCodes.COMMIT_FAILED)
    assert.deepEqual(levels().slice(0, 3), ['warn', 'warn', 'error'], 'the third failure in a row is an error')
    assert.equal(source.committed('orders', 0), undefined)
  }
)

test('the coordination log line names the coordinator partition by topic and partition, with no internal key in it', { timeout: 15_000 }, async t => {
  const logs: string[] = []
  const { flow, source } = await started({ orders: 2 }, {}, { logs })
  t.after(() => flow.stop().catch(() => { /* clean-up: a flow the test made fail rejects its stop */ }))
  await source.deliver('orders', 0, records(0, 1))
  await until(() => logs.some(line => line.includes('coordinates the flow')), 'the coordination line')
  const line = logs.find(entry => entry.includes('coordinates the flow')) as string
  // eslint-disable-next-line no-control-regex -- the NUL character is what the line must not hold
  assert.doesNotMatch(line, /\\u0000|\u0000/, line)
  assert.match(line, /"topic":"orders"/)
  assert.match(line, /"partition":\d/)
})
