import assert from 'node:assert/strict'
import { test } from 'node:test'
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { grafanaDir } from '../../grafana/src/build.js'
import { CONSOLE_FILE } from '../../grafana/src/consoles.js'
import { MAIN_VIEW_ROWS } from '../../grafana/src/dashboard.js'
import { Metrics } from '../../src/sidecar/metrics/metric-names.js'
import { concreteExpression, dashboardQueries, variableQueries } from '../helpers/dashboard-queries.js'
import { createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { commitAsAdmin } from '../helpers/offsets.js'
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus.js'
import { screenshot } from '../helpers/screenshot.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const RECORDS = 100

/** The port the sidecar's health and metrics server listens on, from its log line. */
function metricsPort (sidecar: SidecarProcess): number {
  const line = sidecar.stderr().split('\n').find(entry => entry.includes('"msg":"health server listening"'))
  assert.ok(line !== undefined, `no "health server listening" line:\n${sidecar.stderr().slice(-2000)}`)
  return (JSON.parse(line) as { port: number }).port
}

async function has (prometheus: PrometheusServer, expression: string): Promise<boolean> {
  return (await prometheus.query(expression)).length > 0
}

test(
  'every dashboard query parses in a real Prometheus scraping a running sidecar, every query of the main view returns series, and its console page shows data in every panel',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 2 })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(
      source,
      topic,
      Array.from({ length: RECORDS }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` }))
    )
    // An application group with committed offsets: the sidecar checkpoints it, so checkpoint age has a series.
    const appGroup = uniqueName('app')
    await commitAsAdmin(
      source,
      appGroup,
      topic,
      new Map([
        [0, 10n],
        [1, 10n],
      ])
    )

    const sidecar = spawnSidecar(t, {
      source,
      target,
      groupId: uniqueName('mirror'),
      include: topic,
      args: [
        '--sync.group.offsets.enabled',
        'true',
        '--groups',
        appGroup,
        '--sync.group.offsets.interval.seconds',
        '1',
        '--digests.enabled',
        'true',
        '--digests.audit.interval.ms',
        '1000',
      ],
    })
    await waitMirroring(sidecar)
    const prometheus = await startPrometheus(t, {
      targets: [`127.0.0.1:${metricsPort(sidecar)}`],
      scrapeIntervalSeconds: 1,
      consoleTemplatesDir: join(grafanaDir(), 'consoles'),
    })

    // Records copied while Prometheus scrapes (after it saw the first ones): the rates of the main view are above 0.
    await waitUntil(async () => Number((await prometheus.query(`sum(${Metrics.producedRecords.name}{topic="${topic}"})`))[0]?.value[1]) === RECORDS, {
      timeoutMs: 30_000,
      message: `Prometheus to see the first ${RECORDS} records copied`,
    })
    await produce(
      source,
      topic,
      Array.from({ length: RECORDS }, (_, i) => ({ partition: i % 2, key: `k${RECORDS + i}`, value: `v${RECORDS + i}` }))
    )
    const seen = { copied: false, checkpointAge: false, digestAudit: false, rate: false }
    await waitUntil(
      async () => {
        const produced = await prometheus.query(`sum(${Metrics.producedRecords.name}{topic="${topic}"})`)
        seen.copied = Number(produced[0]?.value[1]) === 2 * RECORDS
        seen.checkpointAge = await has(prometheus, `${Metrics.checkpointAge.name}{group="${appGroup}"}`)
        seen.digestAudit = await has(prometheus, `${Metrics.digestAuditRecords.name}{topic="${topic}"}`)
        // Two scrapes in the window: rates have a series.
        seen.rate = await has(prometheus, `rate(${Metrics.producedRecords.name}{topic="${topic}"}[30s])`)
        return Object.values(seen).every(Boolean)
      },
      { timeoutMs: 90_000, message: 'Prometheus to see the records mirrored, a checkpoint and the digest audit' }
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}: ${JSON.stringify(seen)}\nsidecar log:\n${sidecar
          .stderr()
          .split('\n')
          .filter(line => !line.includes('"level":"debug"'))
          .slice(-15)
          .join('\n')}`
      )
    })

    const queries = dashboardQueries()
    assert.deepEqual(
      [...new Set(queries.map(query => query.row))].slice(0, MAIN_VIEW_ROWS.length),
      [...MAIN_VIEW_ROWS],
      'the main view is the top of the dashboard'
    )
    const empty: string[] = []
    for (const query of queries) {
      const concrete = concreteExpression(query.expr)
      // A query that does not parse is answered with an error, and `query` throws with Prometheus' message.
      const result = await prometheus.query(concrete).catch((error: Error) => assert.fail(`${query.row} / ${query.panel}: ${error.message}`))
      if ((MAIN_VIEW_ROWS as readonly string[]).includes(query.row) && result.length === 0) empty.push(`${query.row} / ${query.panel}: ${concrete}`)
    }
    assert.deepEqual(empty, [], 'every query of the main view returns series')
    for (const variable of variableQueries()) {
      assert.ok((await prometheus.query(concreteExpression(variable.expr))).length > 0, `variable $${variable.name} has values: ${variable.expr}`)
    }
    t.diagnostic(
      `${queries.length} panel queries and ${variableQueries().length} variable queries run, ${queries.filter(query => (MAIN_VIEW_ROWS as readonly string[]).includes(query.row)).length} of them in the main view`
    )

    // The main view as Prometheus renders it from grafana/consoles/: every panel has data, and a browser shows it.
    const page = await (await fetch(`${prometheus.url}/consoles/${CONSOLE_FILE}`)).text()
    const panels = [...page.matchAll(/<div class="panel" data-panel="([^"]+)">([\s\S]*?)<\/table>/g)]
    assert.equal(
      panels.length,
      new Set(queries.filter(query => (MAIN_VIEW_ROWS as readonly string[]).includes(query.row)).map(query => query.panel)).size,
      `one console panel per main-view panel:\n${page.slice(0, 3000)}`
    )
    assert.deepEqual(
      panels.filter(([, , html]) => (html ?? '').includes('class="no-data"')).map(([, title]) => title),
      [],
      'console panels without data'
    )
    const dir = await mkdtemp(join(tmpdir(), 'mirror-screenshot-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const png = join(dir, 'main-view.png')
    screenshot(`${prometheus.url}/consoles/${CONSOLE_FILE}`, png, { width: 1300, height: 860 })
    const image = await readFile(png)
    assert.deepEqual([...image.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG')
    if (process.env.MIRROR_SCREENSHOT_OUT !== undefined) await copyFile(png, process.env.MIRROR_SCREENSHOT_OUT)

    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
