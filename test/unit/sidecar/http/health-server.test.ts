import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { HealthServer, type HealthServerOptions } from '../../../../src/sidecar/http/health-server.js'
import { evaluateReadiness } from '../../../../src/sidecar/http/readiness.js'
import { MirrorMetrics } from '../../../../src/sidecar/metrics/mirror-metrics.js'
import type { FlowLabels, FlowSnapshot, PartitionSnapshot } from '../../../../src/ports/pipeline-observer.js'

const NOW_MS = 1_800_000_000_000
const flow: FlowLabels = { flow: 'eu->us', source: 'eu', target: 'us' }

function partition (overrides: Partial<PartitionSnapshot> = {}): PartitionSnapshot {
  return {
    topic: 'orders',
    partition: 0,
    highWatermark: 100n,
    nextOffsetToMirror: 100n,
    committedOffset: 100n,
    oldestUnackedTimestampMs: undefined,
    lastProgressMs: NOW_MS,
    ...overrides,
  }
}

function snapshot (overrides: Partial<FlowSnapshot> = {}): FlowSnapshot {
  return {
    labels: flow,
    state: 'running',
    queueRecords: 0,
    queueBytes: 0,
    queueCapacityRecords: 1000,
    queueCapacityBytes: 1_048_576,
    sourceConnected: true,
    targetConnected: true,
    assignedPartitions: 1,
    topicsMirrored: 1,
    partitions: [partition()],
    ...overrides,
  }
}

async function startServer (t: TestContext, options: Omit<HealthServerOptions, 'host' | 'port'>): Promise<{ server: HealthServer, url: string }> {
  const server = new HealthServer({ host: '127.0.0.1', port: 0, ...options })
  t.after(async () => { await server.stop() })
  await server.start()
  return { server, url: `http://127.0.0.1:${server.port}` }
}

test('/metrics answers Prometheus text by default and OpenMetrics when the Accept header asks', async t => {
  const metrics = new MirrorMetrics(() => [snapshot()], { defaultMetrics: false })
  metrics.rebalanced(flow)
  const { url } = await startServer(t, { snapshots: () => [snapshot()], metrics })

  const text = await fetch(`${url}/metrics`)
  assert.equal(text.status, 200)
  assert.equal(text.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  assert.match(await text.text(), /^kafka_mirror_rebalances_total\{flow="eu->us",source="eu",target="us"\} 1$/m)

  // What Prometheus 2.x sends.
  const accept = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
  const open = await fetch(`${url}/metrics`, { headers: { accept } })
  assert.equal(open.status, 200)
  assert.equal(open.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8')
  const body = await open.text()
  assert.ok(body.endsWith('# EOF\n'))
  assert.match(body, /^kafka_mirror_rebalances_total\{flow="eu->us",source="eu",target="us"\} 1$/m)

  const refused = await fetch(`${url}/metrics`, { headers: { accept: 'application/openmetrics-text;q=0,text/plain' } })
  assert.equal(refused.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')

  // Written out as formatted: chunked, the same text as the exposition in one piece.
  const streamed = await fetch(`${url}/metrics`)
  assert.equal(streamed.headers.get('transfer-encoding'), 'chunked')
  assert.equal(streamed.headers.get('content-length'), null)
  assert.equal(withoutProcessLines(await streamed.text()), withoutProcessLines((await metrics.exposition()).body))
  const head = await fetch(`${url}/metrics`, { method: 'HEAD' })
  assert.equal(head.status, 200)
  assert.equal(await head.text(), '')
})

function withoutProcessLines (body: string): string {
  return body.split('\n').filter(line => !/(process_|nodejs_|kafka_mirror_commit_age_seconds)/.test(line)).join('\n')
}

test('/healthz is 200 while alive and 500 after a fatal error', async t => {
  const { server, url } = await startServer(t, { snapshots: () => [snapshot()] })
  const alive = await fetch(`${url}/healthz`)
  assert.equal(alive.status, 200)
  assert.deepEqual(await alive.json(), { status: 'alive' })
  server.fatal(flow, new Error('send failed: MESSAGE_TOO_LARGE'))
  const failed = await fetch(`${url}/healthz`)
  assert.equal(failed.status, 500)
  assert.deepEqual(await failed.json(), { status: 'failed', reason: 'flow eu->us: send failed: MESSAGE_TOO_LARGE' })
})

test('/healthz is 500 when a flow snapshot says failed', async t => {
  const { url } = await startServer(t, { snapshots: () => [snapshot({ state: 'failed' })] })
  const response = await fetch(`${url}/healthz`)
  assert.equal(response.status, 500)
  assert.deepEqual(await response.json(), { status: 'failed', reason: 'flow eu->us failed' })
})

test('/readyz is 200 when running, connected, assigned and progressing, 503 with reasons otherwise', async t => {
  let flows: FlowSnapshot[] = [snapshot()]
  let nowMs = NOW_MS
  const { server, url } = await startServer(t, { snapshots: () => flows, nowMs: () => nowMs, progressStalenessMs: 60_000 })
  const readyz = async (): Promise<{ status: number, body: unknown }> => {
    const response = await fetch(`${url}/readyz`)
    return { status: response.status, body: await response.json() }
  }
  assert.deepEqual(await readyz(), { status: 200, body: { status: 'ready' } })

  flows = [snapshot({ assignedPartitions: 0, partitions: [] })]
  assert.deepEqual(await readyz(), { status: 200, body: { status: 'ready' } }, 'a standby member without partitions is ready')

  flows = [snapshot({ sourceConnected: false, targetConnected: false })]
  assert.deepEqual(await readyz(), {
    status: 503,
    body: { status: 'not ready', reasons: ['flow eu->us: source cluster eu not connected', 'flow eu->us: target cluster us not connected'] },
  })

  flows = [snapshot({ state: 'starting' })]
  assert.deepEqual(await readyz(), { status: 503, body: { status: 'not ready', reasons: ['flow eu->us is starting'] } })

  flows = [snapshot({ partitions: [partition({ highWatermark: 500n, nextOffsetToMirror: 200n, lastProgressMs: NOW_MS })] })]
  nowMs = NOW_MS + 60_000
  assert.equal((await readyz()).status, 200, 'lagging but progressing within the window')
  nowMs = NOW_MS + 75_000
  assert.deepEqual(await readyz(), {
    status: 503,
    body: { status: 'not ready', reasons: ['flow eu->us: orders-0 lags 300 records with no progress for 75 s'] },
  })

  flows = [snapshot()]
  assert.equal((await readyz()).status, 200, 'caught up: no progress needed')
  server.beginShutdown()
  assert.deepEqual(await readyz(), { status: 503, body: { status: 'not ready', reasons: ['shutting down'] } })
})

test('/readyz is 503 without any flow', async t => {
  const { url } = await startServer(t, { snapshots: () => [] })
  const response = await fetch(`${url}/readyz`)
  assert.equal(response.status, 503)
  assert.deepEqual(await response.json(), { status: 'not ready', reasons: ['no flows'] })
})

test('unknown paths are 404, other methods 405, /metrics without a metrics source 404', async t => {
  const { url } = await startServer(t, { snapshots: () => [snapshot()] })
  assert.equal((await fetch(`${url}/nope`)).status, 404)
  assert.equal((await fetch(`${url}/metrics`)).status, 404)
  const post = await fetch(`${url}/healthz`, { method: 'POST' })
  assert.equal(post.status, 405)
  assert.equal(post.headers.get('allow'), 'GET, HEAD')
})

test('a fresh start with a backlog gets the staleness window before it is not ready', () => {
  const lagging = [snapshot({ partitions: [partition({ highWatermark: 50n, nextOffsetToMirror: 0n, lastProgressMs: 0 })] })]
  assert.equal(evaluateReadiness({ flows: lagging, nowMs: NOW_MS + 30_000, progressStalenessMs: 60_000, sinceMs: NOW_MS }).ready, true)
  assert.equal(evaluateReadiness({ flows: lagging, nowMs: NOW_MS + 61_000, progressStalenessMs: 60_000, sinceMs: NOW_MS }).ready, false)
})

test('stop closes the listener and is safe to call twice', async () => {
  const server = new HealthServer({ host: '127.0.0.1', port: 0, snapshots: () => [snapshot()] })
  await server.start()
  const url = `http://127.0.0.1:${server.port}/healthz`
  assert.equal((await fetch(url)).status, 200)
  await server.stop()
  await server.stop()
  await assert.rejects(fetch(url))
})

test('a port in use fails start with one clear line naming the port', async t => {
  const { server: first } = await startServer(t, { snapshots: () => [] })
  const second = new HealthServer({ host: '127.0.0.1', port: first.port, snapshots: () => [] })
  await assert.rejects(second.start(), (error: Error) => {
    assert.equal(error.message, `HTTP port ${first.port} on 127.0.0.1: already in use; choose another port and host for /metrics (0 picks a free port)`)
    return true
  })
  await second.stop()
})
