import { test } from 'node:test'
import assert from 'node:assert/strict'
import { combineObservers, Observability } from '../../../../src/sidecar/http/observability.js'
import type { FlowLabels, PipelineObserver } from '../../../../src/ports/pipeline-observer.js'

const flow: FlowLabels = { flow: 'eu->us', source: 'eu', target: 'us' }

test('combineObservers calls each observer that has the callback, in order, and leaves the others undefined', () => {
  const calls: string[] = []
  const first: PipelineObserver = { rebalanced: f => calls.push(`first ${f.flow}`), fatal: () => calls.push('first fatal') }
  const second: PipelineObserver = { rebalanced: f => calls.push(`second ${f.flow}`) }
  const combined = combineObservers(first, second)
  combined.rebalanced?.(flow)
  combined.fatal?.(flow, new Error('x'))
  assert.deepEqual(calls, ['first eu->us', 'second eu->us', 'first fatal'])
  assert.equal(combined.consumed, undefined, 'no callback: the pipeline skips building its argument')
})

test('Observability serves metrics and health on one port; a fatal flow turns /healthz 500; stop is once-only', async t => {
  const observability = new Observability({ snapshots: () => [], host: '127.0.0.1', port: 0, env: {} })
  t.after(() => observability.stop())
  await observability.start()
  const url = `http://127.0.0.1:${observability.port}`
  observability.observer.rebalanced?.(flow)
  assert.match(await (await fetch(`${url}/metrics`)).text(), /^kafka_mirror_rebalances_total\{flow="eu->us",source="eu",target="us"\} 1$/m)
  assert.equal((await fetch(`${url}/healthz`)).status, 200)
  observability.observer.fatal?.(flow, new Error('boom'))
  assert.equal((await fetch(`${url}/healthz`)).status, 500)
  assert.equal(observability.tracer.enabled, false, 'no OTEL_* configuration: tracing off')
  await observability.stop()
  await observability.stop()
  await assert.rejects(fetch(`${url}/healthz`))
})
