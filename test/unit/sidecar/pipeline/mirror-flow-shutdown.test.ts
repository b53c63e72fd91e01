import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MirrorFlow } from '../../../../src/sidecar/pipeline/mirror-flow.js'
import { createLogger } from '../../../../src/shared/logger.js'
import { fakeFlowConfig, fakePorts, records, until } from '../../../helpers/fake-ports.js'

/** Makes `part.stop` (and `part.commit`, when it has one) note its call in `calls` under `name`; `fails`: the stop then throws. */
function noted (
  calls: string[],
  name: string,
  part: { stop: () => Promise<void>, commit?: (offsets: never) => Promise<void> },
  fails = false
): void {
  const stop = part.stop.bind(part)
  part.stop = async () => {
    calls.push(`stop ${name}`)
    await stop()
    if (fails) throw new Error(`${name} broke`)
  }
  const commit = part.commit?.bind(part)
  if (commit !== undefined) {
    part.commit = async offsets => {
      calls.push(`commit ${name}`)
      await commit(offsets)
    }
  }
}

test(
  'stop drains, commits what the target acknowledged, then stops each client in reverse start order; a stop that fails is logged and the next still runs',
  { timeout: 15_000 },
  async () => {
    const lines: Array<Record<string, unknown>> = []
    const logger = createLogger({ level: 'debug', write: line => { lines.push(JSON.parse(line) as Record<string, unknown>) } })
    const ports = fakePorts({ orders: 1 }, 1)
    const flow = new MirrorFlow(fakeFlowConfig({ numProducers: 1 }), ports, { logger, drainTimeoutMs: 1_000 })
    const calls: string[] = []
    noted(calls, 'source admin', ports.sourceTopics)
    noted(calls, 'target admin', ports.targetTopics, true)
    const [sink] = ports.sinkFakes
    assert.ok(sink !== undefined)
    noted(calls, 'target producer', sink)
    await flow.start()
    const source = ports.current()
    noted(calls, 'source consumer', source)
    await source.deliver('orders', 0, records(0, 4))
    await until(() => ports.target.values('orders', 0).length === 4, 'records written')

    await flow.stop()
    assert.equal(flow.state, 'stopped')
    assert.equal(source.committed('orders', 0), 4n, 'the final commit covers what the target acknowledged')
    assert.deepEqual(calls, ['commit source consumer', 'stop source consumer', 'stop target producer', 'stop target admin', 'stop source admin'])
    const warned = lines.filter(line => line.level === 'warn')
    assert.equal(warned.length, 1, JSON.stringify(warned))
    assert.equal(warned[0]?.component, 'target admin')
    assert.match(JSON.stringify(warned[0]), /target admin broke/, 'the failure itself is in the log line')
  }
)

test('stopBoundMs: the drain deadline, the final commit\'s bound, and the bounds of the client stops', () => {
  const flow = new MirrorFlow(fakeFlowConfig(), fakePorts({ orders: 1 }), { logger: createLogger({ level: 'error', write: () => {} }), drainTimeoutMs: 30_000 })
  // Source consumer, producer workers, target producers, the two admins: 5 s each; the delivery 10 s.
  assert.equal(flow.stopBoundMs, 30_000 + 30_000 + 35_000)
})
