import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { alertRuleFile, MIRROR_JOB } from '../../../grafana/src/alerts.js'
import { KUBERNETES_DIR, kubeconform, kubernetesVersions, kustomizeBuild, REPOSITORY } from '../../helpers/deploy-tools.js'

/** A parsed Kubernetes object, read field by field: a missing field fails an assertion or throws. */
type Manifest = Record<string, any>

const VARIANTS = {
  replicas: {
    workload: 'kafka-mirror',
    kinds: ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'PrometheusRule', 'Service', 'ServiceAccount', 'ServiceMonitor'],
  },
  sidecar: { workload: 'orders-app', kinds: ['ConfigMap', 'Deployment', 'PrometheusRule', 'Service', 'ServiceMonitor'] },
} as const
type Variant = keyof typeof VARIANTS
const SECRETS_MOUNT = '/etc/kafka-mirror-secrets'

const rendered = new Map<Variant, string>()
async function render (variant: Variant): Promise<string> {
  if (!rendered.has(variant)) rendered.set(variant, await kustomizeBuild(join(KUBERNETES_DIR, variant)))
  return rendered.get(variant) as string
}
async function manifests (variant: Variant): Promise<Manifest[]> {
  return parseAllDocuments(await render(variant)).map(document => document.toJSON() as Manifest)
}
function one (all: Manifest[], kind: string, name?: string): Manifest {
  const found = all.filter(manifest => manifest.kind === kind && (name === undefined || manifest.metadata.name === name))
  assert.equal(found.length, 1, `one ${kind}${name === undefined ? '' : ` ${name}`} expected, found ${found.length}`)
  return found[0] as Manifest
}
function secretExample (variant: Variant): Manifest {
  return parseAllDocuments(readFileSync(join(KUBERNETES_DIR, variant, 'secret.example.yaml'), 'utf8'))[0]?.toJSON() as Manifest
}
function mirrorContainer (deployment: Manifest): Manifest {
  const spec = deployment.spec.template.spec
  const found = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].filter((container: Manifest) => container.name === 'mirror')
  assert.equal(found.length, 1, 'one container named mirror')
  return found[0] as Manifest
}
function env (container: Manifest): Record<string, string> {
  return Object.fromEntries((container.env ?? []).map((entry: Manifest) => [entry.name, entry.value]))
}
function matches (selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value)
}

for (const variant of Object.keys(VARIANTS) as Variant[]) {
  for (const version of kubernetesVersions()) {
    test(`kubeconform -strict: every object of kustomize build deploy/kubernetes/${variant} is valid against Kubernetes ${version}`, async () => {
      const { result, resources } = await kubeconform(version, { stdin: await render(variant) })
      assert.equal(result.code, 0, result.stdout + result.stderr)
      assert.deepEqual(resources.filter(resource => resource.status !== 'statusValid'), [])
      assert.deepEqual(resources.map(resource => resource.kind).sort(), [...VARIANTS[variant].kinds])
    })
  }
}

test('kubeconform -strict: the Secret examples are valid', async () => {
  for (const version of kubernetesVersions()) {
    const files = (Object.keys(VARIANTS) as Variant[]).map(variant => join(KUBERNETES_DIR, variant, 'secret.example.yaml'))
    const { result, resources } = await kubeconform(version, { files })
    assert.equal(result.code, 0, result.stdout + result.stderr)
    assert.deepEqual(resources.map(resource => [resource.kind, resource.status]), [['Secret', 'statusValid'], ['Secret', 'statusValid']])
  }
})

test('kubeconform rejects a misspelt field, an unknown ServiceMonitor or PrometheusRule field and a kind it has no schema for', async () => {
  const replicas = await render('replicas')
  const broken = [
    ['Deployment', replicas.replace('livenessProbe:', 'livenesProbe:'), /livenesProbe/],
    ['ServiceMonitor', replicas.replace('jobLabel:', 'joblabel:'), /joblabel/],
    ['PrometheusRule', replicas.replace('expr: ', 'expression: '), /expression/],
    ['PodDisruptionBudget', replicas.replace('maxUnavailable: 1\n  selector', 'maxUnavailable: [1]\n  selector'), /maxUnavailable/],
  ] as const
  for (const [kind, yaml, message] of broken) {
    assert.notEqual(yaml, replicas, `the ${kind} edit applies`)
    const { result, resources } = await kubeconform(kubernetesVersions()[0] as string, { stdin: yaml })
    assert.equal(result.code, 1, kind)
    const invalid = resources.filter(resource => resource.status === 'statusInvalid')
    assert.deepEqual(invalid.map(resource => resource.kind), [kind])
    assert.match(invalid[0]?.msg ?? '', message)
  }
  const unknown = await kubeconform(kubernetesVersions()[0] as string, { stdin: 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n' })
  assert.equal(unknown.result.code, 1)
  assert.deepEqual(unknown.resources.map(resource => [resource.kind, resource.status]), [['Widget', 'statusError']])
})

test('both variants carry the alert rules of grafana/alerts.yml as one PrometheusRule', async () => {
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    const rule = one(await manifests(variant), 'PrometheusRule')
    assert.deepEqual(rule.spec, JSON.parse(JSON.stringify(alertRuleFile())), variant)
  }
})

for (const variant of Object.keys(VARIANTS) as Variant[]) {
  test(`${variant}: probes, ports, grace period, selectors, job label and volumes fit together`, async () => {
    const all = await manifests(variant)
    const deployment = one(all, 'Deployment', VARIANTS[variant].workload)
    const pod = deployment.spec.template
    const mirror = mirrorContainer(deployment)
    const vars = env(mirror)

    assert.ok(matches(deployment.spec.selector.matchLabels, pod.metadata.labels), 'Deployment selector matches its pods')
    const packageVersion = (JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { version: string }).version
    assert.equal(mirror.image, `registry.example.com/kafka-mirror-sidecar:${packageVersion}`, 'image tag is the package version')
    if (variant === 'sidecar') assert.equal(mirror.restartPolicy, 'Always', 'a native sidecar container')

    // Non-root as the image's USER, which the Dockerfile sets by number.
    const user = /^USER (\d+):(\d+)$/m.exec(readFileSync(join(REPOSITORY, 'Dockerfile'), 'utf8'))
    assert.ok(user !== null && user[1] !== '0', 'Dockerfile USER is a numeric non-root user')
    assert.deepEqual(
      [pod.spec.securityContext.runAsNonRoot, String(pod.spec.securityContext.runAsUser), String(pod.spec.securityContext.runAsGroup)],
      [true, user[1], user[2]]
    )
    assert.equal(mirror.securityContext.readOnlyRootFilesystem, true)

    // Probes on the port the sidecar serves /healthz and /readyz on.
    const port = (mirror.ports as Manifest[]).find(entry => entry.name === mirror.livenessProbe.httpGet.port)
    assert.equal(port?.containerPort, Number(vars.MIRROR_METRICS_PORT), 'the liveness port is MIRROR_METRICS_PORT')
    assert.equal(mirror.livenessProbe.httpGet.path, '/healthz')
    if (variant === 'sidecar') {
      // The application's pod is ready only when all its containers are: /readyz (503 while a cluster is
      // unreachable) would take the application out of its Services for an outage of the mirror's target.
      assert.equal(mirror.readinessProbe, undefined, 'no readiness probe on the mirror beside an application')
    } else {
      assert.deepEqual([mirror.readinessProbe.httpGet.path, mirror.readinessProbe.httpGet.port], ['/readyz', port?.name])
    }
    assert.ok(mirror.resources.requests.memory !== undefined && mirror.resources.limits.memory !== undefined, 'memory request and limit')

    // The kubelet's SIGKILL must not come before the sidecar's own stop bound: drain timeout + the backstop in src/bin.
    const backstop = /config\.drainTimeoutMs \+ ([\d_]+)/.exec(readFileSync(join(REPOSITORY, 'src', 'bin', 'mirror-sidecar.ts'), 'utf8'))
    assert.ok(backstop !== null, 'the stop backstop in src/bin/mirror-sidecar.ts')
    const stopBoundSeconds = (Number(vars.MIRROR_DRAIN_TIMEOUT_MS) + Number((backstop[1] as string).replaceAll('_', ''))) / 1000
    assert.ok(
      pod.spec.terminationGracePeriodSeconds >= stopBoundSeconds,
      `terminationGracePeriodSeconds ${pod.spec.terminationGracePeriodSeconds} >= ${stopBoundSeconds}`
    )

    // Service -> pods, ServiceMonitor -> Service, and the job label the down/absent alerts expect.
    const service = one(all, 'Service')
    assert.ok(matches(service.spec.selector, pod.metadata.labels), 'Service selects the pods')
    assert.deepEqual(service.spec.ports.map((entry: Manifest) => entry.targetPort), [port?.name])
    const monitor = one(all, 'ServiceMonitor')
    assert.ok(matches(monitor.spec.selector.matchLabels, service.metadata.labels), 'ServiceMonitor selects the Service')
    assert.deepEqual(monitor.spec.endpoints.map((entry: Manifest) => [entry.port, entry.path]), [[service.spec.ports[0].name, '/metrics']])
    assert.equal(service.metadata.labels[monitor.spec.jobLabel] ?? service.metadata.name, MIRROR_JOB, 'scraped as job kafka-mirror')
    // Applied side by side, neither ServiceMonitor selects the other variant's Service.
    const other = one(await manifests(variant === 'replicas' ? 'sidecar' : 'replicas'), 'Service')
    assert.ok(!matches(monitor.spec.selector.matchLabels, other.metadata.labels), `the ${variant} ServiceMonitor leaves ${other.metadata.name} alone`)

    if (variant === 'replicas') {
      const budget = one(all, 'PodDisruptionBudget')
      assert.ok(matches(budget.spec.selector.matchLabels, pod.metadata.labels), 'PodDisruptionBudget selects the pods')
      assert.equal(budget.spec.maxUnavailable, 1)
      // /readyz is 503 while a cluster is unreachable: unready pods must stay evictable or an outage blocks node drains.
      assert.equal(budget.spec.unhealthyPodEvictionPolicy, 'AlwaysAllow')
      assert.equal(pod.spec.serviceAccountName, one(all, 'ServiceAccount').metadata.name)
    }

    // The ConfigMap and the Secret the mirror mounts, and the Secret keys the properties files read.
    const volumes = new Map<string, Manifest>((pod.spec.volumes as Manifest[]).map(volume => [volume.name, volume]))
    const mounts = mirror.volumeMounts as Manifest[]
    const configMount = mounts.find(mount => volumes.get(mount.name)?.configMap !== undefined)
    const secretMount = mounts.find(mount => volumes.get(mount.name)?.secret !== undefined)
    const configMap = one(all, 'ConfigMap', volumes.get(configMount?.name)?.configMap.name)
    assert.equal(volumes.get(secretMount?.name)?.secret.secretName, secretExample(variant).metadata.name)
    assert.equal(secretMount?.mountPath, SECRETS_MOUNT)
    const lines = Object.values(configMap.data as Record<string, string>).flatMap(text => text.split('\n')).filter(line => !/^\s*[#!]/.test(line))
    const keys = lines.flatMap(line => [...line.matchAll(/\$\{dir:([^:}]+):([^}]+)\}/g)])
    assert.ok(keys.length >= 4, 'the properties files read the SASL credentials from the Secret')
    for (const [, dir, key] of keys) {
      assert.equal(dir, SECRETS_MOUNT)
      assert.ok(Object.hasOwn(secretExample(variant).stringData, key as string), `secret key ${key}`)
    }
    for (const path of (mirror.args as string[]).filter(arg => arg.startsWith('/'))) {
      assert.ok(
        path.startsWith(`${configMount?.mountPath}/`) && Object.hasOwn(configMap.data, path.slice(configMount?.mountPath.length + 1)),
        `${path} is in the ConfigMap`
      )
    }
  })

  test(`${variant}: the mirror's configuration loads as the pod would load it (--print-config, secrets redacted)`, async t => {
    const all = await manifests(variant)
    const mirror = mirrorContainer(one(all, 'Deployment', VARIANTS[variant].workload))
    const dir = mkdtempSync(join(tmpdir(), 'mirror-deploy-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const place = (text: string): string => text.replaceAll(SECRETS_MOUNT, join(dir, 'secrets')).replaceAll('/etc/kafka-mirror/', join(dir, 'config') + '/')
    mkdirSync(join(dir, 'config'))
    mkdirSync(join(dir, 'secrets'))
    for (const [file, text] of Object.entries(one(all, 'ConfigMap').data as Record<string, string>)) writeFileSync(join(dir, 'config', file), place(text))
    const secrets = secretExample(variant).stringData as Record<string, string>
    for (const [file, value] of Object.entries(secrets)) writeFileSync(join(dir, 'secrets', file), value)

    const bin = join(REPOSITORY, 'dist', 'src', 'bin', 'mirror-sidecar.js')
    const result = spawnSync(process.execPath, [bin, ...(mirror.args as string[]).map(place), '--print-config'], {
      encoding: 'utf8',
      env: { ...process.env, ...env(mirror) },
      timeout: 30_000,
    })
    assert.equal(result.status, 0, result.stderr)
    const config = JSON.parse(result.stdout) as { flows: Array<{ name: string }>, drainTimeoutMs: number, metricsPort: number }
    assert.deepEqual(
      [config.flows.length, config.drainTimeoutMs, config.metricsPort],
      [1, Number(env(mirror).MIRROR_DRAIN_TIMEOUT_MS), Number(env(mirror).MIRROR_METRICS_PORT)]
    )
    assert.doesNotMatch(result.stdout, /change-me/)
    assert.match(result.stdout, /"password": "\[redacted\]"/)
  })
}
