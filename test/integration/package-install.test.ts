import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import { after, before, test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createTopic, deleteTopicIfExists, produce, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring, writeProperties } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string, version: string }
/** `node` of this test first on PATH: the installed bins start with `#!/usr/bin/env node`. */
const ENV = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_') && !name.startsWith('npm_'))),
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
}

/** What a user's install holds: the compiled sidecar and CLI, the kafkajs patch and the step that applies it at install, README, LICENSE and docs. */
const SHIPPED =
  /^package\/(package\.json|README\.md|cli\/README\.md|LICENSE|patches\/kafkajs\+2\.2\.4\.patch|scripts\/patch-kafkajs\.mjs|docs\/[a-z0-9-]+\.(md|png)|grafana\/(kafka-mirror-sidecar\.json|alerts\.yml|README\.md)|dist\/(src|cli)\/[a-z0-9/-]+\.(js|d\.ts))$/

let dir: string
let tarball: string

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mirror-package-'))
  // --ignore-scripts: `prepare` would rebuild dist/ under the running tests; `npm test` built it.
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', env: ENV })
  ) as Array<{ filename: string }>
  tarball = join(dir, packed[0]?.filename ?? '')
})
after(() => rmSync(dir, { recursive: true, force: true }))

test('npm pack ships what runs and its docs: no test, bench result or development file', () => {
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(line => line !== '')
  assert.deepEqual(files.filter(file => !SHIPPED.test(file)), [], 'files outside what a user runs and reads')
  for (const needed of [
    'package/dist/src/bin/mirror-sidecar.js',
    'package/dist/src/check/mirror-check.js',
    'package/dist/src/index.js',
    'package/dist/src/index.d.ts',
    'package/patches/kafkajs+2.2.4.patch',
    'package/scripts/patch-kafkajs.mjs',
    'package/README.md',
    'package/LICENSE',
  ]) {
    assert.ok(files.includes(needed), `${needed} is in the tarball`)
  }
  assert.ok(files.some(file => file.startsWith('package/docs/')), 'docs are in the tarball')
})

test('the tarball installs globally; its bins run on a patched kafkajs and copy a topic between the local clusters', { timeout: 300_000 }, async t => {
  const prefix = join(dir, 'prefix')
  const install = spawnSync('npm', ['install', '-g', tarball, '--prefix', prefix, '--no-audit', '--no-fund'], { encoding: 'utf8', env: ENV, timeout: 240_000 })
  assert.equal(install.status, 0, install.stderr)
  const bin = (name: string): string => join(prefix, 'bin', name)

  const version = spawnSync(bin('mirror-sidecar'), ['--version'], { encoding: 'utf8', env: ENV })
  assert.equal(version.status, 0, version.stderr)
  assert.equal(version.stdout, `${PACKAGE.version}\n`)
  const help = spawnSync(bin('mirror-check'), ['--help'], { encoding: 'utf8', env: ENV })
  assert.equal(help.status, 0, help.stderr)
  assert.match(help.stdout, /^mirror-check \[command\] \[options\]/)
  assert.match(help.stdout, /mirror-check verify/)

  // The package's postinstall (scripts/patch-kafkajs.mjs) patched its own kafkajs: the check every bin runs first passes.
  const installed = join(prefix, 'lib', 'node_modules', PACKAGE.name, 'dist', 'src', 'index.js')
  const patched = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `(await import(${JSON.stringify(installed)})).assertKafkajsPatched()`],
    { encoding: 'utf8', env: ENV }
  )
  assert.equal(patched.status, 0, patched.stderr)

  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('installed'), partitions: 2 })
  t.after(() => deleteTopicIfExists(target, topic))
  await produce(source, topic, Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` })))
  const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('installed'), include: topic }, bin('mirror-sidecar'))
  await waitMirroring(sidecar)
  await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 20n, {
    timeoutMs: 60_000,
    message: `${topic} copied by the installed sidecar`,
  })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
})

/** sha256 of every file under `root`, by path relative to it. */
function fileHashes (root: string): Record<string, string> {
  const hashes: Record<string, string> = {}
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    hashes[path.slice(root.length + 1)] = createHash('sha256').update(readFileSync(path)).digest('hex')
  }
  return hashes
}

/** kafkajs `version` as published: the registry's tarball unpacked (npm's cache; one pack per version). */
function publishedKafkajs (version: string): string {
  const into = join(dir, `kafkajs-${version}-published`)
  mkdirSync(into, { recursive: true })
  const packed = JSON.parse(
    execFileSync('npm', ['pack', `kafkajs@${version}`, '--json', '--prefer-offline', '--pack-destination', into], { cwd: into, encoding: 'utf8', env: ENV })
  ) as Array<{ filename: string }>
  execFileSync('tar', ['-xzf', join(into, packed[0]?.filename ?? ''), '-C', into])
  return join(into, 'package')
}

/**
 * The program an application embedding the mirror runs: it writes records with ITS OWN kafkajs,
 * runs the mirror (`MirrorSidecar`, pass-through on) until the target has them all, and prints
 * what it saw: its kafkajs version, the records on the target (counted with its kafkajs), and the
 * batches the mirror forwarded undecoded, which only the mirror's patched kafkajs can do.
 */
const EMBEDDING_APP = `
import { createRequire } from 'node:module'
import kafkajs from 'kafkajs'
import { configFromMm1, MirrorSidecar, silentLogger } from 'kafka-mirror-sidecar'

const [sourceServers, targetServers, sourceProperties, targetProperties, topic] = process.argv.slice(2)
const appKafkajs = createRequire(import.meta.url)('kafkajs/package.json').version
const client = servers => new kafkajs.Kafka({ clientId: 'embedding-app', brokers: servers.split(','), logLevel: kafkajs.logLevel.NOTHING })
const producer = client(sourceServers).producer()
await producer.connect()
await producer.send({
  topic,
  messages: Array.from({ length: 200 }, (_, i) => ({ partition: i % 2, key: 'k' + i, value: 'v' + i, headers: { app: 'embedding' } })),
})
await producer.disconnect()

const config = configFromMm1({ 'consumer.config': [sourceProperties], 'producer.config': targetProperties, whitelist: topic,
  'pass.through': 'on', 'metrics.port': '0', 'metrics.host': '127.0.0.1', 'offset.commit.interval.ms': '500', 'refresh.topics.interval.ms': '1000' })
const sidecar = new MirrorSidecar(config, { logger: silentLogger })
await sidecar.start()
const admin = client(targetServers).admin()
await admin.connect()
const copied = async () => {
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0)
  } catch {
    return 0 // the mirror has not created the target topic yet: nothing copied so far
  }
}
const deadline = Date.now() + 90_000
let records = await copied()
while (records < 200 && Date.now() < deadline) {
  await new Promise(resolve => setTimeout(resolve, 200)) // polls the target: no event tells a separate client that records arrived
  records = await copied()
}
await admin.disconnect()
const metrics = await sidecar.observability.metrics.registry.getSingleMetricAsString('kafka_mirror_batches_total')
const forwardedBatches = metrics.split('\\n').filter(line => line.includes('path="pass_through"')).reduce((sum, line) => sum + Number(line.split(' ').pop()), 0)
await sidecar.stop()
await sidecar.done
process.stdout.write(JSON.stringify({ appKafkajs, records, forwardedBatches }) + '\\n')
`

/**
 * Installs the tarball into a new application that depends on kafkajs `appKafkajs` (one npm
 * install), checks that the application's kafkajs is byte for byte the published one afterwards,
 * and runs EMBEDDING_APP against the local clusters.
 */
async function embedInAppWithKafkajs (t: TestContext, appKafkajs: string): Promise<void> {
  const app = join(dir, `app-kafkajs-${appKafkajs}`)
  mkdirSync(app)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'embedding-app',
      version: '1.0.0',
      private: true,
      type: 'module',
      dependencies: { kafkajs: appKafkajs, [PACKAGE.name]: `file:${tarball}` },
    })
  )
  writeFileSync(join(app, 'app.mjs'), EMBEDDING_APP)
  const install = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8', env: ENV, timeout: 240_000 })
  assert.equal(install.status, 0, install.stderr)

  // The application's kafkajs is the published one, untouched; the mirror's is its own, patched.
  assert.deepEqual(
    fileHashes(join(app, 'node_modules', 'kafkajs')),
    fileHashes(publishedKafkajs(appKafkajs)),
    `the application's kafkajs ${appKafkajs} is left as published`
  )
  const mirrorsKafkajs = createRequire(join(app, 'node_modules', PACKAGE.name, 'package.json')).resolve('@kafka-mirror-sidecar/kafkajs/package.json')
  assert.ok(!mirrorsKafkajs.startsWith(join(app, 'node_modules', 'kafkajs') + '/'), mirrorsKafkajs)
  const installed = join(app, 'node_modules', PACKAGE.name, 'dist', 'src', 'index.js')
  const patched = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `(await import(${JSON.stringify(installed)})).assertKafkajsPatched()`],
    { encoding: 'utf8', env: ENV }
  )
  assert.equal(patched.status, 0, patched.stderr)

  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName(`embedded-${appKafkajs.replace(/\./g, '-')}`), partitions: 2 })
  t.after(() => deleteTopicIfExists(target, topic))
  const groupId = uniqueName('embedded')
  const sourceProperties = writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': groupId, 'auto.offset.reset': 'earliest' }, 'source.properties')
  const targetProperties = writeProperties({ 'bootstrap.servers': target.bootstrap, acks: 'all' }, 'target.properties')
  const run = spawnSync(process.execPath, ['app.mjs', source.bootstrap, target.bootstrap, sourceProperties, targetProperties, topic], {
    cwd: app,
    encoding: 'utf8',
    env: ENV,
    timeout: 150_000,
  })
  assert.equal(run.status, 0, run.stderr)
  const seen = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { appKafkajs: string, records: number, forwardedBatches: number }
  assert.equal(seen.appKafkajs, appKafkajs, 'the application ran its own kafkajs')
  assert.equal(seen.records, 200, 'every record copied by the embedded mirror')
  assert.ok(seen.forwardedBatches > 0, `the embedded mirror forwarded batches undecoded, through its patched kafkajs (${seen.forwardedBatches})`)
  assert.equal(await totalRecords(target, topic), 200n)
}

test(
  "installed into an application with its own kafkajs 2.2.4: the application's copy stays as published, the embedded mirror runs its own patched one",
  { timeout: 400_000 },
  async t => {
    await embedInAppWithKafkajs(t, '2.2.4')
  }
)

test('installed into an application with kafkajs 1.16.0: both run side by side', { timeout: 400_000 }, async t => {
  await embedInAppWithKafkajs(t, '1.16.0')
})

test('installed with --ignore-scripts: the bins refuse in one line that names the install step; once it ran, they start', { timeout: 300_000 }, () => {
  const app = join(dir, 'app-ignore-scripts')
  mkdirSync(app)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'ignore-scripts-app', version: '1.0.0', private: true, dependencies: { [PACKAGE.name]: `file:${tarball}` } })
  )
  const install = spawnSync('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: app,
    encoding: 'utf8',
    env: ENV,
    timeout: 240_000,
  })
  assert.equal(install.status, 0, install.stderr)
  const bin = join(app, 'node_modules', '.bin', 'mirror-sidecar')
  const refused = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8', env: ENV })
  assert.equal(refused.status, 2, refused.stderr)
  const step = join(app, 'node_modules', PACKAGE.name, 'scripts', 'patch-kafkajs.mjs')
  assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr)
  assert.ok(refused.stderr.includes('kafkajs is not patched') && refused.stderr.includes(`run node ${step} `), refused.stderr)
  assert.equal(refused.stdout, '')

  const patch = spawnSync(process.execPath, [step], { cwd: app, encoding: 'utf8', env: ENV })
  assert.equal(patch.status, 0, patch.stderr)
  assert.match(patch.stdout, /^kafka-mirror-sidecar: kafkajs 2\.2\.4 at node_modules\/@kafka-mirror-sidecar\/kafkajs: \d+ files patched, 0 already patched\n$/)
  const again = spawnSync(process.execPath, [step], { cwd: app, encoding: 'utf8', env: ENV })
  assert.match(again.stdout, /: 0 files patched, \d+ already patched\n$/, 'a second run changes nothing')
  const started = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8', env: ENV })
  assert.equal(started.status, 0, started.stderr)
  assert.equal(started.stdout, `${PACKAGE.version}\n`)
})
