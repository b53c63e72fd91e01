import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { alertRuleFile, alertRules, RUNBOOK_URL } from '../../../grafana/src/alerts.js'
import { generatedFiles, grafanaDir, repositoryDir } from '../../../grafana/src/build.js'
import { buildDashboard, DASHBOARD_UID } from '../../../grafana/src/dashboard.js'
import { DigestMetrics } from '../../../src/sidecar/metrics/digest-metrics.js'
import { LossMetrics } from '../../../src/sidecar/metrics/loss-metrics.js'
import { MirrorMetrics } from '../../../src/sidecar/metrics/mirror-metrics.js'
import { OffsetsMetrics } from '../../../src/sidecar/metrics/offsets-metrics.js'
import { registerRetentionMetrics } from '../../../src/sidecar/metrics/retention-metrics.js'
import type { FlowConfig } from '../../../src/config/mirror-config.js'
import type { FlowLabels } from '../../../src/ports/pipeline-observer.js'
import { promtool } from '../../helpers/prometheus.js'

interface Target { expr: string, datasource?: { type: string, uid: string } }
interface Panel { type: string, title: string, datasource?: { type: string, uid: string }, targets?: Target[] }
interface Dashboard {
  uid: string
  panels: Panel[]
  templating: { list: Array<{ name: string, type: string, query: unknown, datasource?: { uid: string } }> }
  __inputs?: unknown
}

const dashboard = buildDashboard() as Dashboard
const expressions = (): string[] => [
  ...dashboard.panels.flatMap(panel => (panel.targets ?? []).map(target => target.expr)),
  ...dashboard.templating.list.filter(variable => variable.type === 'query').map(variable => (variable.query as { query: string }).query),
  ...alertRules.map(rule => rule.expr),
]

/** Metric names in a PromQL expression: identifiers followed by a selector, range or closing paren, minus functions, keywords and labels. */
function metricNames (expression: string): string[] {
  const withoutStrings = expression.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  const withoutGroupings = withoutStrings.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
  // Ranges and subquery steps (`[5m]`, `[1h:1m]`) hold no names.
  const withoutRanges = withoutGroupings.replace(/\[[^\]]*\]/g, '')
  const names = new Set<string>()
  for (const match of withoutRanges.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    const name = match[1] as string
    if (['and', 'or', 'unless', 'bool', 'offset', 'le', 'job', 'instance', 'flow', 'topic', 'status', 'm', 's', 'h'].includes(name)) continue
    if (/^\d/.test(name) || name.startsWith('$') || name.startsWith('__')) continue
    names.add(name)
  }
  return [...names]
}

test('the committed dashboard, alert and PrometheusRule files are what the generator produces (run npm run grafana:build)', async () => {
  assert.deepEqual(Object.keys(generatedFiles()).sort(), [
    'deploy/kubernetes/monitoring/prometheusrule.yaml',
    'docs/metrics.md',
    'docs/runbook.md',
    'grafana/alerts.test.yml',
    'grafana/alerts.yml',
    'grafana/consoles/kafka-mirror-main-view.html',
    'grafana/kafka-mirror-sidecar.json',
  ])
  for (const [name, content] of Object.entries(generatedFiles())) {
    assert.equal(await readFile(join(repositoryDir(), name), 'utf8'), content, `${name} is stale`)
  }
})

test('grafana/README.md lists every alert; each runbook_url names a section of docs/runbook.md', async () => {
  const readme = await readFile(join(grafanaDir(), 'README.md'), 'utf8')
  const listed = [...readme.matchAll(/^\| (KafkaMirror\w+) \|/gm)].map(([, name]) => name)
  assert.deepEqual(listed, alertRules.map(rule => rule.alert))
  const runbook = await readFile(join(repositoryDir(), 'docs', 'runbook.md'), 'utf8')
  const anchors = new Set([...runbook.matchAll(/^## (\S+)$/gm)].map(([, heading = '']) => heading.toLowerCase()))
  for (const rule of alertRuleFile().groups[0]?.rules ?? []) {
    const [page, anchor = ''] = (rule.annotations.runbook_url ?? '').split('#')
    assert.equal(page, RUNBOOK_URL, rule.alert)
    assert.ok(anchors.has(anchor), `${rule.alert}: #${anchor} is a heading of docs/runbook.md`)
  }
})

for (const partitionLabels of [true, false]) {
  test(`every metric the dashboard or an alert references is in a real metrics exposition (partitionLabels ${partitionLabels})`, async () => {
    const flow: FlowLabels = { flow: 'a->b', source: 'a', target: 'b' }
    // A flow with a throughput limit: its limit gauge and throttled counter exist only then.
    const configured = {
      name: 'a->b',
      source: { alias: 'a' },
      target: { alias: 'b' },
      offsetCommitIntervalMs: 60_000,
      throughputLimitBytes: 1_048_576,
    } as unknown as FlowConfig
    const metrics = new MirrorMetrics(
      () => [
        {
          labels: flow,
          state: 'running',
          queueRecords: 0,
          queueBytes: 0,
          queueCapacityRecords: 10,
          queueCapacityBytes: 10,
          sourceConnected: true,
          targetConnected: true,
          assignedPartitions: 1,
          topicsMirrored: 1,
          // A flow that transcodes: its transcoder gauges exist only then.
          transcoder: { busySlots: 1, waitingBatches: 0 },
          producerLanes: { total: 8, writing: 4 },
          partitions: [
            {
              topic: 't',
              partition: 0,
              highWatermark: 1n,
              nextOffsetToMirror: 1n,
              committedOffset: 1n,
              oldestUnackedTimestampMs: undefined,
              lastProgressMs: 0,
            },
          ],
        },
      ],
      { flows: [configured], partitionLabels }
    )
    metrics.committed(flow, [], Date.now())
    metrics.retry(flow, 'produce', 'REQUEST_TIMED_OUT')
    metrics.batchRouted(flow, 'pass_through', undefined, 100)
    // Appears with the first corrupt source batch.
    metrics.corruptBatch(flow, 't', 0)
    // An exactly-once flow's transactions (the series appear with the first one).
    metrics.transactionEnded(flow, 'committed', 0.01)
    // Offset syncs and checkpoints of a flow with group offset sync on (the counters appear with their first event).
    const offsets = new OffsetsMetrics(metrics.registry, () => [{ flow, groups: [{ group: 'app', lastCheckpointMs: Date.now() }] }])
    offsets.oppositeMirrorSkipped(flow, 1)
    offsets.syncsWritten(flow, 1, 1)
    offsets.syncsPruned(flow, 1)
    offsets.syncWriteFailed(flow)
    // Registered by the sidecar next to MirrorMetrics; its series appear with the first loss.
    const loss = new LossMetrics(metrics.registry)
    loss.lost(flow, {
      reason: 'source_retention',
      topic: 't',
      partition: 0,
      targetTopic: 't',
      fromOffset: 0n,
      toOffset: 1n,
      records: 1n,
    })
    loss.foreign(flow, { topic: 't', partition: 0, targetTopic: 't', fromOffset: 1n, toOffset: 2n, records: 1n })
    const digests = new DigestMetrics(metrics.registry)
    digests.written(flow, 1)
    digests.audited(flow, 't', 1)
    digests.mismatch(flow, { sourceTopic: 't', targetTopic: 't', partition: 0, sourceFirst: 0n, sourceLast: 0n, targetStart: 0n, count: 1, hash: 1 })
    registerRetentionMetrics(metrics.registry, () => [{ flow, topics: [{ topic: 't', retentionSeconds: 604_800 }] }])
    const exported = new Set(
      (await metrics.exposition()).body
        .split('\n')
        .filter(line => line !== '' && !line.startsWith('#'))
        .map(line => line.replace(/[{ ].*$/, ''))
    )
    const referenced = new Set(expressions().flatMap(metricNames))
    assert.ok(
      referenced.has('kafka_mirror_lag_seconds') && referenced.has('up') && referenced.has('nodejs_eventloop_lag_p99_seconds'),
      `parser found: ${[...referenced].join(', ')}`
    )
    const missing = [...referenced].filter(name => name !== 'up' && !exported.has(name) && !exported.has(`${name}_bucket`))
    assert.deepEqual(missing, [], 'referenced but not exported')
  })
}

test('the dashboard selects its data source through a ${datasource} variable of type prometheus', () => {
  assert.equal(dashboard.uid, DASHBOARD_UID)
  assert.equal(dashboard.__inputs, undefined)
  const datasource = dashboard.templating.list.find(variable => variable.name === 'datasource')
  assert.deepEqual([datasource?.type, datasource?.query], ['datasource', 'prometheus'])
  assert.deepEqual(dashboard.templating.list.map(variable => variable.name), ['datasource', 'job', 'instance', 'flow', 'topic'])
  for (const variable of dashboard.templating.list.filter(variable => variable.type === 'query')) {
    assert.equal(variable.datasource?.uid, '${datasource}', variable.name)
  }
  const panels = dashboard.panels.filter(panel => panel.type !== 'row')
  for (const panel of panels) {
    assert.equal(panel.datasource?.uid, '${datasource}', panel.title)
    assert.ok((panel.targets ?? []).length > 0, `${panel.title} has no query`)
    for (const target of panel.targets ?? []) assert.equal(target.datasource?.uid, '${datasource}', panel.title)
  }
  const titles = panels.map(panel => panel.title)
  for (const title of [
    'Instances up',
    'Partition status',
    'Records per second by topic',
    'Bytes per second by topic',
    'Lag in records',
    'Lag in seconds',
    'Queue depth vs capacity (records)',
    'Replication latency',
    'Produce request duration',
    'Retries and send failures',
    'Commits and rebalances',
  ]) {
    assert.ok(titles.includes(title), `panel ${title} missing`)
  }
})

test('promtool check rules accepts grafana/alerts.yml', async () => {
  const result = await promtool(['check', 'rules', join(grafanaDir(), 'alerts.yml')])
  assert.equal(result.code, 0, result.stdout + result.stderr)
  assert.match(result.stdout, new RegExp(`SUCCESS: ${alertRules.length} rules found`))
})

test('promtool test rules: each alert fires and stays quiet as grafana/alerts.test.yml says', async () => {
  const result = await promtool(['test', 'rules', join(grafanaDir(), 'alerts.test.yml')])
  assert.equal(result.code, 0, result.stdout + result.stderr)
  const tested = new Set(generatedFiles()['grafana/alerts.test.yml']?.match(/alertname: "([A-Za-z]+)"/g)?.map(line => line.slice('alertname: "'.length, -1)))
  assert.deepEqual([...tested].sort(), alertRules.map(rule => rule.alert).sort(), 'every alert has a test case')
})
