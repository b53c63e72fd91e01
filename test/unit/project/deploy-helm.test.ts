import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { parseAllDocuments, parse as parseYaml } from 'yaml'
import { alertRuleFile } from '../../../grafana/src/alerts.js'
import { deployTool, kubeconform, kubernetesVersions, REPOSITORY } from '../../helpers/deploy-tools.js'
import { run, type CommandResult } from '../../helpers/prometheus.js'

/** A parsed Kubernetes object, read field by field: a missing field fails an assertion or throws. */
type Manifest = Record<string, any>

const CHART = join(REPOSITORY, 'deploy', 'helm', 'kafka-mirror-sidecar')
const RELEASE = 'orders'
const SECRET_VALUES = { 'source-username': 'mirror', 'source-password': 'chart-pw-5e1', 'target-username': 'mirror', 'target-password': 'chart-pw-5e1' }

const STRIMZI_RESOURCE = `apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata:
  name: mm2
spec:
  target:
    alias: b
    bootstrapServers: b-kafka-bootstrap:9092
    groupId: mm2-group
    authentication:
      type: scram-sha-512
      username: mirror
      passwordSecret:
        secretName: mirror-user
        password: password
  mirrors:
    - source:
        alias: a
        bootstrapServers: a-kafka-bootstrap:9092
      topicsPattern: "orders.*"
`

/** Values of each configuration mode, with every optional object on. */
const MODES = {
  mm2: { mode: 'mm2', secrets: { stringData: SECRET_VALUES } },
  mm1: { mode: 'mm1', secrets: { existingSecret: 'orders-mirror-credentials' } },
  strimzi: { mode: 'strimzi', strimzi: { resource: STRIMZI_RESOURCE, secretNames: ['mirror-user'] } },
} as const
type Mode = keyof typeof MODES
const EVERYTHING = {
  serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
  prometheusRule: { enabled: true },
  grafanaDashboard: { enabled: true },
}

function valuesFile (t: TestContext, values: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-helm-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'values.yaml')
  writeFileSync(file, JSON.stringify(values))
  return file
}

async function helm (args: string[]): Promise<CommandResult> {
  return await run(deployTool('helm'), args)
}

async function template (t: TestContext, values: object): Promise<string> {
  const result = await helm(['template', RELEASE, CHART, '--values', valuesFile(t, values)])
  assert.equal(result.code, 0, result.stderr)
  return result.stdout
}

function objects (rendered: string): Manifest[] {
  return parseAllDocuments(rendered).map(document => document.toJSON() as Manifest).filter(object => object !== null)
}

function one (all: Manifest[], kind: string): Manifest {
  const found = all.filter(object => object.kind === kind)
  assert.equal(found.length, 1, `one ${kind} expected, found ${found.length}`)
  return found[0] as Manifest
}

function matches (selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value)
}

test('helm lint --strict: the chart, with its defaults and with each mode and every optional object', async t => {
  const defaults = await helm(['lint', '--strict', CHART])
  assert.equal(defaults.code, 0, defaults.stdout + defaults.stderr)
  for (const mode of Object.keys(MODES) as Mode[]) {
    const result = await helm(['lint', '--strict', CHART, '--values', valuesFile(t, { ...MODES[mode], ...EVERYTHING })])
    assert.equal(result.code, 0, `${mode}: ${result.stdout}${result.stderr}`)
  }
})

for (const mode of Object.keys(MODES) as Mode[]) {
  test(`helm template | kubeconform -strict: ${mode} mode, every object valid against each Kubernetes version`, async t => {
    const rendered = await template(t, { ...MODES[mode], ...EVERYTHING })
    for (const version of kubernetesVersions()) {
      const { result, resources } = await kubeconform(version, { stdin: rendered })
      assert.equal(result.code, 0, result.stdout + result.stderr)
      assert.deepEqual(resources.filter(resource => resource.status !== 'statusValid'), [])
      const kinds = ['ConfigMap', 'ConfigMap', 'Deployment', 'PodDisruptionBudget', 'PrometheusRule', 'Service', 'ServiceAccount', 'ServiceMonitor']
      assert.deepEqual(resources.map(resource => resource.kind).sort(), mode === 'mm2' ? [...kinds, 'Secret'].sort() : kinds)
    }
  })
}

test('helm template: the optional objects are off by default; a mode without its configuration fails with what to set', async t => {
  const kinds = objects(await template(t, {})).map(object => object.kind).sort()
  assert.deepEqual(kinds, ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service', 'ServiceAccount'])
  const strimzi = await helm(['template', RELEASE, CHART, '--set', 'mode=strimzi'])
  assert.notEqual(strimzi.code, 0)
  assert.match(strimzi.stderr, /mode strimzi needs strimzi\.resource/)
  const unknown = await helm(['template', RELEASE, CHART, '--set', 'mode=mm3'])
  assert.notEqual(unknown.code, 0)
  assert.match(unknown.stderr, /mode "mm3": expected mm2, mm1 or strimzi/)
})

test('helm template: selectors, job label, probes, grace period, alert rules and dashboard fit together', async t => {
  const all = objects(await template(t, { ...MODES.mm2, ...EVERYTHING }))
  const deployment = one(all, 'Deployment')
  const pod = deployment.spec.template
  const labels = pod.metadata.labels as Record<string, string>
  assert.ok(matches(deployment.spec.selector.matchLabels, labels), 'Deployment selector matches its pods')
  assert.ok(matches(one(all, 'PodDisruptionBudget').spec.selector.matchLabels, labels), 'PodDisruptionBudget selects the pods')
  assert.equal(one(all, 'PodDisruptionBudget').spec.unhealthyPodEvictionPolicy, 'AlwaysAllow')
  const service = one(all, 'Service')
  assert.ok(matches(service.spec.selector, labels), 'Service selects the pods')
  const monitor = one(all, 'ServiceMonitor')
  assert.ok(matches(monitor.spec.selector.matchLabels, service.metadata.labels), 'ServiceMonitor selects the Service')
  assert.equal(monitor.metadata.labels.release, 'prometheus')
  // The job the alert rules expect (MIRROR_JOB): the Service's label that jobLabel names.
  assert.equal(service.metadata.labels[monitor.spec.jobLabel], 'kafka-mirror')

  const mirror = pod.spec.containers[0] as Manifest
  const packageVersion = (JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { version: string }).version
  assert.equal(mirror.image, `registry.example.com/kafka-mirror-sidecar:${packageVersion}`, 'image tag is the package version')
  const chart = parseYaml(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { version: string, appVersion: string }
  assert.deepEqual([chart.version, chart.appVersion], [packageVersion, packageVersion])
  const port = (mirror.ports as Manifest[]).find(entry => entry.name === mirror.livenessProbe.httpGet.port)
  const env = Object.fromEntries((mirror.env as Manifest[]).map(entry => [entry.name, entry.value])) as Record<string, string>
  assert.equal(port?.containerPort, Number(env.MIRROR_METRICS_PORT))
  assert.deepEqual([mirror.livenessProbe.httpGet.path, mirror.readinessProbe.httpGet.path], ['/healthz', '/readyz'])
  assert.equal(pod.spec.terminationGracePeriodSeconds, Number(env.MIRROR_DRAIN_TIMEOUT_MS) / 1000 + 60, 'the drain timeout + the 60 s stop backstop')
  assert.equal(pod.spec.securityContext.runAsNonRoot, true)
  assert.equal(mirror.securityContext.readOnlyRootFilesystem, true)

  assert.deepEqual(one(all, 'PrometheusRule').spec, JSON.parse(JSON.stringify(alertRuleFile())), 'the rules of grafana/alerts.yml')
  const dashboard = all.find(object => object.kind === 'ConfigMap' && object.metadata.name.endsWith('-dashboard')) as Manifest
  assert.equal(dashboard.metadata.labels.grafana_dashboard, '1')
  assert.deepEqual(
    JSON.parse(dashboard.data['kafka-mirror-sidecar.json'] as string),
    JSON.parse(readFileSync(join(REPOSITORY, 'grafana', 'kafka-mirror-sidecar.json'), 'utf8'))
  )
})

for (const mode of Object.keys(MODES) as Mode[]) {
  test(`helm template, ${mode} mode: the configuration loads as the pod would load it (--print-config, secrets redacted)`, async t => {
    const all = objects(await template(t, MODES[mode]))
    const mirror = one(all, 'Deployment').spec.template.spec.containers[0] as Manifest
    const dir = mkdtempSync(join(tmpdir(), 'mirror-helm-config-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const place = (text: string): string =>
      text.replaceAll('/etc/kafka-mirror-secrets', join(dir, 'secrets')).replaceAll('/etc/kafka-mirror-strimzi', join(dir, 'strimzi'))
        .replaceAll('/etc/kafka-mirror/', join(dir, 'config') + '/')
    for (const folder of ['config', 'secrets', 'strimzi/mirror-user']) mkdirSync(join(dir, folder), { recursive: true })
    const config = all.find(object => object.kind === 'ConfigMap' && object.metadata.name.endsWith('-config')) as Manifest
    for (const [file, text] of Object.entries(config.data as Record<string, string>)) writeFileSync(join(dir, 'config', file), place(text))
    for (const [file, value] of Object.entries(SECRET_VALUES)) writeFileSync(join(dir, 'secrets', file), value)
    writeFileSync(join(dir, 'strimzi', 'mirror-user', 'password'), 'chart-pw-5e1')

    const env = Object.fromEntries((mirror.env as Manifest[]).map(entry => [entry.name, entry.value])) as Record<string, string>
    const bin = join(REPOSITORY, 'dist', 'src', 'bin', 'mirror-sidecar.js')
    const result = spawnSync(process.execPath, [bin, ...(mirror.args as string[]).map(place), '--print-config'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 30_000,
    })
    assert.equal(result.status, 0, result.stderr)
    const printed = JSON.parse(result.stdout) as { flows: unknown[], drainTimeoutMs: number, metricsPort: number }
    assert.deepEqual(
      [printed.flows.length, printed.drainTimeoutMs, printed.metricsPort],
      [1, Number(env.MIRROR_DRAIN_TIMEOUT_MS), Number(env.MIRROR_METRICS_PORT)]
    )
    assert.doesNotMatch(result.stdout, /chart-pw-5e1/)
  })
}
