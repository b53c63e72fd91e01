import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createTopic, deleteTopicIfExists, produce, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string, version: string }
/** `node` of this test first on PATH: the installed bins start with `#!/usr/bin/env node`. */
const ENV = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_') && !name.startsWith('npm_'))), PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` }

/** What a user's install holds: the compiled sidecar and CLI, the kafkajs patch applied at install, README, LICENSE and docs. */
const SHIPPED = /^package\/(package\.json|README\.md|cli\/README\.md|LICENSE|patches\/kafkajs\+2\.2\.4\.patch|docs\/[a-z0-9-]+\.(md|png)|dist\/(src|cli)\/[a-z0-9/-]+\.(js|d\.ts))$/

let dir: string
let tarball: string

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'mirror-package-'))
  // --ignore-scripts: `prepare` would rebuild dist/ under the running tests; `npm test` built it.
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', env: ENV })) as Array<{ filename: string }>
  tarball = join(dir, packed[0]?.filename ?? '')
})
after(() => rmSync(dir, { recursive: true, force: true }))

test('npm pack ships what runs and its docs: no test, bench result or development file', () => {
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(line => line !== '')
  assert.deepEqual(files.filter(file => !SHIPPED.test(file)), [], 'files outside what a user runs and reads')
  for (const needed of ['package/dist/src/bin/mirror-sidecar.js', 'package/dist/cli/mirror-check.js', 'package/dist/src/index.js', 'package/dist/src/index.d.ts', 'package/patches/kafkajs+2.2.4.patch', 'package/README.md', 'package/LICENSE']) {
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

  // The package's postinstall (patch-package) patched its own kafkajs: the check every bin runs first passes.
  const installed = join(prefix, 'lib', 'node_modules', PACKAGE.name, 'dist', 'src', 'index.js')
  const patched = spawnSync(process.execPath, ['--input-type=module', '-e', `(await import(${JSON.stringify(installed)})).assertKafkajsPatched()`], { encoding: 'utf8', env: ENV })
  assert.equal(patched.status, 0, patched.stderr)

  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('installed'), partitions: 2 })
  t.after(() => deleteTopicIfExists(target, topic))
  await produce(source, topic, Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` })))
  const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('installed'), include: topic }, bin('mirror-sidecar'))
  await waitMirroring(sidecar)
  await waitUntil(async () => await totalRecords(target, topic).catch(() => 0n) === 20n, { timeoutMs: 60_000, message: `${topic} copied by the installed sidecar` })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
})
