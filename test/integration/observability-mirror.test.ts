import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { join } from 'node:path'
import { alertRules } from '../../grafana/src/alerts.js'
import { grafanaDir } from '../../grafana/src/build.js'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import { Observability } from '../../src/sidecar/http/observability.js'
import { kafkaFlowPorts } from '../../src/kafka/flow-ports.js'
import { MirrorFlow } from '../../src/sidecar/pipeline/mirror-flow.js'
import { createLogger } from '../../src/shared/logger.js'
import { createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { concreteExpression, dashboardQueries } from '../helpers/dashboard-queries.js'
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus.js'
import { writeProperties } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

function traceparent (i: number): string {
  return `00-${i.toString(16).padStart(32, 'a')}-${i.toString(16).padStart(16, 'b')}-01`
}

function messages (from: number, count: number): Message[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k
    return { partition: i % 2, key: `k${i}`, value: `v${i}`, headers: { traceparent: traceparent(i) } }
  })
}

/** The single value of an instant query, or undefined when it returns nothing. */
async function scalar (prometheus: PrometheusServer, expression: string): Promise<number | undefined> {
  const result = await prometheus.query(expression)
  return result.length === 0 ? undefined : Number(result[0]?.value[1])
}

async function readyz (port: number): Promise<{ status: number, body: { status: string, reasons?: string[] } }> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`)
  return { status: response.status, body: await response.json() as { status: string, reasons?: string[] } }
}

test(
  'a real Prometheus scrapes a running mirror: lag rises during a target outage while /readyz says why, then both recover',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 2 })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(source, topic, messages(0, 200))

    const config = configFromMm1({
      'consumer.config': [
        writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': uniqueName('mirror'), 'auto.offset.reset': 'earliest' }, 'source.properties'),
      ],
      'producer.config': writeProperties({ 'bootstrap.servers': target.bootstrap, acks: 'all' }, 'target.properties'),
      whitelist: topic,
      'offset.commit.interval.ms': '500',
      'refresh.topics.interval.ms': '60000',
    })
    const flowConfig = config.flows[0]
    assert.ok(flowConfig !== undefined)
    // kafkajs logs every refused connection during the outage; the assertions say what matters.
    const logger = createLogger({ level: 'silent' })
    const flows: MirrorFlow[] = []
    const observability = new Observability({
      snapshots: () => flows.map(flow => flow.snapshot()),
      host: '127.0.0.1',
      port: 0,
      progressStalenessMs: 3_000,
      env: {},
      logger,
    })
    const flow = new MirrorFlow(flowConfig, kafkaFlowPorts(flowConfig, logger), { observer: observability.observer, logger })
    flows.push(flow)
    let targetPaused = false
    t.after(async () => {
      if (targetPaused) await target.resume()
      await flow.stop().catch(() => {
        /* a flow the test made fail rejects its stop; the test asserted what matters */
      })
      await observability.stop()
    })
    await observability.start()
    const port = observability.port
    const prometheus = await startPrometheus(t, { targets: [`127.0.0.1:${port}`], scrapeIntervalSeconds: 1, ruleFiles: [join(grafanaDir(), 'alerts.yml')] })
    await flow.start()

    const selector = `{topic="${topic}"}`
    const produced = `sum(kafka_mirror_produced_records_total${selector})`
    const lag = `sum(kafka_mirror_lag_records${selector})`
    await waitUntil(async () => (await scalar(prometheus, produced)) === 200 && (await scalar(prometheus, lag)) === 0, {
      timeoutMs: 60_000,
      message: 'Prometheus to see 200 records mirrored and no lag',
    })
    const [scrape] = await prometheus.targets()
    assert.deepEqual([scrape?.health, scrape?.lastError], ['up', ''], 'Prometheus scrapes /metrics (it asks for OpenMetrics) without errors')
    assert.equal(await scalar(prometheus, 'sum(kafka_mirror_build_info)'), 1)
    assert.equal(await scalar(prometheus, 'sum(kafka_mirror_assigned_partitions)'), 2)
    assert.ok(((await scalar(prometheus, 'sum(kafka_mirror_replication_latency_seconds_count)')) ?? 0) >= 200)
    await waitUntil(async () => (await readyz(port)).status === 200, { timeoutMs: 20_000, message: '/readyz 200 while mirroring' })

    await target.pause()
    targetPaused = true
    await produce(source, topic, messages(200, 300))
    await waitUntil(async () => (await scalar(prometheus, lag)) === 300, { timeoutMs: 60_000, message: 'Prometheus to see the lag rise to 300 records' })
    await waitUntil(async () => ((await scalar(prometheus, `max(kafka_mirror_lag_seconds${selector})`)) ?? 0) > 1, {
      timeoutMs: 30_000,
      message: 'lag in seconds above 1',
    })
    let outage = await readyz(port)
    await waitUntil(
      async () => {
        outage = await readyz(port)
        return outage.status === 503
      },
      { timeoutMs: 30_000, message: '/readyz 503 during the target outage' }
    )
    assert.equal(outage.body.status, 'not ready')
    assert.ok(
      outage.body.reasons?.some(reason => reason.includes('no progress') || reason.includes('target cluster')),
      `reasons: ${JSON.stringify(outage.body.reasons)}`
    )
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'an outage is not a fatal error')

    await target.resume()
    targetPaused = false
    await waitUntil(async () => (await scalar(prometheus, produced)) === 500 && (await scalar(prometheus, lag)) === 0, {
      timeoutMs: 90_000,
      message: 'Prometheus to see the lag fall back to 0 after the outage',
    })
    await waitUntil(async () => (await readyz(port)).status === 200, { timeoutMs: 30_000, message: '/readyz 200 again' })
    assert.equal(await scalar(prometheus, `max(kafka_mirror_lag_seconds${selector})`), 0)
    assert.equal(await scalar(prometheus, `max_over_time(${lag}[5m:1s])`), 300, 'Prometheus recorded the peak')

    const rules = await prometheus.rules()
    assert.deepEqual(rules.map(rule => rule.name).sort(), alertRules.map(rule => rule.alert).sort())
    for (const rule of rules) assert.deepEqual([rule.name, rule.health, rule.lastError ?? ''], [rule.name, 'ok', ''], 'every alert rule evaluates on real data')
    for (const query of dashboardQueries()) {
      const concrete = concreteExpression(query.expr)
      const result = await prometheus.query(concrete)
      if (
        ['Records per second by topic', 'Lag in records', 'Lag in seconds', 'Instances up', 'Replication latency', 'Partition status'].includes(query.panel)
      ) {
        assert.ok(result.length > 0, `dashboard panel "${query.panel}" shows data: ${concrete}`)
      }
    }

    const copied = await readAll(target, topic)
    assert.equal(copied.length >= 500, true)
    const headers = new Map(copied.map(record => [String(record.key), String(record.headers.traceparent)]))
    for (let i = 0; i < 500; i++) assert.equal(headers.get(`k${i}`), traceparent(i), `record k${i} keeps its traceparent header unchanged`)
  }
)
