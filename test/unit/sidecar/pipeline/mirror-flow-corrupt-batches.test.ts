import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MirrorMetrics } from '../../../../src/sidecar/metrics/mirror-metrics.js'
import { MirrorFlow } from '../../../../src/sidecar/pipeline/mirror-flow.js'
import type { CorruptBatch } from '../../../../src/ports/ports.js'
import { ErrorCodes, MirrorError } from '../../../../src/shared/errors.js'
import { createLogger } from '../../../../src/shared/logger.js'
import { fakeFlowConfig, fakePorts, records, until } from '../../../helpers/fake-ports.js'

const corrupt: CorruptBatch = { baseOffset: 10n, endOffset: 20n, storedCrc: 0x1234abcd, computedCrc: 0x0badf00d, control: false, sizeBytes: 900 }

async function started (corruptBatches: 'fail' | 'skip') {
  const logs: string[] = []
  const ports = fakePorts({ orders: 1 }, 1)
  const flows: MirrorFlow[] = []
  const metrics = new MirrorMetrics(() => flows.map(f => f.snapshot()), { defaultMetrics: false })
  const flow = new MirrorFlow(fakeFlowConfig({ numProducers: 1, corruptBatches }), ports, {
    logger: createLogger({
      level: 'debug',
      write: line => {
        logs.push(line)
      },
    }),
    observer: metrics,
    drainTimeoutMs: 2_000,
  })
  flows.push(flow)
  await flow.start()
  return { flow, ports, source: ports.current(), logs, metrics }
}

const nextToMirror = (flow: MirrorFlow): bigint | undefined => flow.snapshot().partitions.find(p => p.topic === 'orders')?.nextOffsetToMirror

async function corruptCount (metrics: MirrorMetrics): Promise<string | undefined> {
  const body = (await metrics.exposition()).body
  return body.split('\n').find(line => line.startsWith('kafka_mirror_corrupt_batches_total{'))
}

test(
  'corrupt.batches=fail: the flow stops with one line naming topic, partition, offsets and both CRCs; nothing after the batch is admitted or committed past',
  { timeout: 15_000 },
  async () => {
    const { flow, ports, source, metrics } = await started('fail')
    await source.deliver('orders', 0, records(0, 10))
    await until(() => nextToMirror(flow) === 10n, 'the records before the batch acknowledged')
    const listener = source.listener!
    assert.equal(listener.onCorrupt('orders', 0, corrupt, undefined), false, 'the source hands over nothing more')
    await assert.rejects(flow.done, (error: unknown) => {
      assert.ok(error instanceof MirrorError)
      assert.equal(error.code, ErrorCodes.CORRUPT_BATCH)
      assert.match(
        error.message,
        /^topic "orders" partition 0: the record batch at offsets 10\.\.19 \(900 bytes\) is corrupt on the source cluster \(CRC-32C of its bytes 0x0badf00d, expected 0x1234abcd as its header says\): the mirror stopped; .*--corrupt\.batches skip/
      )
      assert.equal(error.message.includes('\n'), false, 'one line')
      return true
    })
    // A fetch after the corrupt batch (kafkajs moved past it) must not move the commit over it.
    await source.deliver('orders', 0, records(20, 5)).catch(() => {
      /* the stopped flow may refuse it; what matters is the commit below */
    })
    listener.onSkipped('orders', 0, 30n, 20n)
    assert.equal(nextToMirror(flow), 10n)
    assert.deepEqual(ports.target.values('orders', 0).length, 10)
    assert.match((await corruptCount(metrics)) ?? '', /topic="orders",partition="0"} 1$/)
  }
)

test(
  'corrupt.batches=skip: the batch is left out with a warning naming its range, counted, and the commit moves past it; the rest is copied',
  { timeout: 15_000 },
  async t => {
    const { flow, ports, source, logs, metrics } = await started('skip')
    t.after(() =>
      flow.stop().catch(() => {
        /* clean-up: a flow the test made fail rejects its stop */
      })
    )
    await source.deliver('orders', 0, records(0, 10))
    const listener = source.listener!
    assert.equal(listener.onCorrupt('orders', 0, corrupt, undefined), true)
    listener.onSkipped('orders', 0, 20n, 10n)
    await source.deliver('orders', 0, records(20, 10))
    await until(() => nextToMirror(flow) === 30n, 'acknowledged past the skipped batch')
    assert.deepEqual(
      ports.target.values('orders', 0),
      [...records(0, 10), ...records(20, 10)].map(r => r.value?.toString())
    )
    assert.ok(
      logs.some(line => line.includes('"level":"warn"') && line.includes('offsets 10..19') && line.includes('skipped (corrupt.batches=skip)')),
      logs.join('\n')
    )
    assert.match((await corruptCount(metrics)) ?? '', /topic="orders",partition="0"} 1$/)
  }
)

test('corrupt.batches=skip still stops on a batch whose range cannot be trusted, or on a transaction marker', { timeout: 15_000 }, async () => {
  for (const [batch, problem, expected] of [
    [corrupt, 'its header says it ends at offset 99, past 19 where the next batch begins', /its offset range cannot be trusted \(its header says/],
    [{ ...corrupt, control: true }, undefined, /a transaction marker, and leaving it out would change which records count as aborted/],
  ] as const) {
    const { flow, source } = await started('skip')
    assert.equal(source.listener!.onCorrupt('orders', 0, batch, problem), false)
    await assert.rejects(flow.done, (error: unknown) => error instanceof MirrorError && error.code === ErrorCodes.CORRUPT_BATCH && expected.test(error.message))
  }
})
