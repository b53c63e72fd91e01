import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HealthServer } from '../../../src/sidecar/http/health-server.js'
import { deployTool, REPOSITORY } from '../../helpers/deploy-tools.js'
import { run } from '../../helpers/prometheus.js'

const DOCKERFILE = join(REPOSITORY, 'Dockerfile')

/** Dockerfile instructions with their continuation lines joined, comments dropped. */
function instructions (): Array<{ keyword: string, rest: string, stage: string }> {
  const joined = readFileSync(DOCKERFILE, 'utf8').split('\n').filter(line => !line.trimStart().startsWith('#')).join('\n').replace(/\\\n/g, ' ')
  let stage = ''
  return joined.split('\n').filter(line => line.trim() !== '').map(line => {
    const [, keyword = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line.trim()) ?? []
    if (keyword === 'FROM') stage = /\bAS\s+(\S+)/i.exec(rest)?.[1] ?? ''
    return { keyword, rest, stage }
  })
}
function only (keyword: string): string {
  const found = instructions().filter(instruction => instruction.keyword === keyword)
  assert.equal(found.length, 1, `one ${keyword}`)
  return (found[0] as { rest: string }).rest
}

test('hadolint finds nothing in the Dockerfile, and does find a bad one', async t => {
  const hadolint = deployTool('hadolint')
  const clean = await run(hadolint, ['--no-color', DOCKERFILE])
  assert.deepEqual([clean.code, clean.stdout + clean.stderr], [0, ''])
  const dir = mkdtempSync(join(tmpdir(), 'mirror-dockerfile-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'Dockerfile'), 'FROM node:latest\nRUN cd /app && npm ci\n')
  const bad = await run(hadolint, ['--no-color', join(dir, 'Dockerfile')])
  assert.equal(bad.code, 1)
  assert.match(bad.stdout, /DL3007/)
  assert.match(bad.stdout, /DL3003/)
})

test('two stages: npm ci in the build stage, a runtime stage as a numeric non-root user with the bin as entrypoint', () => {
  const all = instructions()
  assert.deepEqual(all.filter(instruction => instruction.keyword === 'FROM').map(instruction => instruction.stage), ['build', 'runtime'])
  assert.ok(
    all.some(instruction => instruction.stage === 'build' && instruction.keyword === 'RUN' && /^npm ci\b/.test(instruction.rest)),
    'npm ci in the build stage'
  )
  assert.ok(
    all.some(instruction => instruction.stage === 'build' && instruction.keyword === 'RUN' && /patch-kafkajs\.mjs/.test(instruction.rest)),
    'the kafkajs patch is applied'
  )
  assert.ok(!all.some(instruction => instruction.stage === 'runtime' && instruction.keyword === 'RUN'), 'nothing runs in the runtime stage')
  assert.match(only('USER'), /^[1-9]\d*:[1-9]\d*$/)

  // The entrypoint is the package's mirror-sidecar bin, under WORKDIR /app, and the build produces it.
  const bins = (JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin
  const workdir = all.filter(instruction => instruction.stage === 'runtime' && instruction.keyword === 'WORKDIR').map(instruction => instruction.rest)
  assert.deepEqual(workdir, ['/app'])
  assert.deepEqual(JSON.parse(only('ENTRYPOINT')), ['node', `/app/${bins['mirror-sidecar']}`])
  assert.ok(existsSync(join(REPOSITORY, bins['mirror-sidecar'] as string)))
})

test('a current Debian base (trixie) and OCI labels whose version is package.json\'s', () => {
  const all = instructions()
  const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(DOCKERFILE, 'utf8'))?.[1] ?? ''
  assert.match(base, /^node:\d+-trixie-slim$/)
  const version = (JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { version: string }).version
  assert.ok(
    all.some(instruction => instruction.stage === 'runtime' && instruction.keyword === 'ARG' && instruction.rest === `VERSION=${version}`),
    `ARG VERSION=${version} in the runtime stage`
  )
  const labels = all.filter(instruction => instruction.stage === 'runtime' && instruction.keyword === 'LABEL').map(instruction => instruction.rest).join(' ')
  for (const key of ['title', 'description', 'version', 'licenses', 'documentation']) {
    assert.match(labels, new RegExp(`org\\.opencontainers\\.image\\.${key}="[^"]+"`), key)
  }
  assert.match(labels, /org\.opencontainers\.image\.version="\$\{VERSION\}"/)
})

test('every file the Dockerfile copies is in the build context (.dockerignore) or made by the build stage', () => {
  const allowed = readFileSync(join(REPOSITORY, '.dockerignore'), 'utf8')
    .split('\n')
    .filter(line => line.startsWith('!'))
    .map(line => line.slice(1).replace(/\/$/, ''))
  assert.ok(readFileSync(join(REPOSITORY, '.dockerignore'), 'utf8').split('\n').includes('*'), '.dockerignore starts from nothing')
  for (const instruction of instructions().filter(entry => entry.keyword === 'COPY')) {
    const parts = instruction.rest.split(/\s+/).filter(part => !part.startsWith('--'))
    const sources = parts.slice(0, -1)
    if (instruction.rest.includes('--from=build')) {
      // What the runtime stage takes from the build stage: /src/<path>, present after npm ci and npm run build here.
      for (const source of sources) {
        assert.ok(source.startsWith('/src/'), source)
        assert.ok(existsSync(join(REPOSITORY, source.slice('/src/'.length))), `${source} exists after the build`)
      }
    } else {
      for (const source of sources) {
        assert.ok(allowed.includes(source), `${source} is let through by .dockerignore`)
        assert.ok(existsSync(join(REPOSITORY, source)), `${source} exists`)
      }
    }
  }
})

/** Runs the Dockerfile's HEALTHCHECK command (exec form, `node -e ...`) with the image's port variable set; its exit code. */
async function healthcheck (port: number): Promise<number | null> {
  const command = JSON.parse(/^CMD\s+(\[.*\])$/.exec(only('HEALTHCHECK').replace(/^(--\S+\s+)+/, ''))?.[1] ?? 'null') as string[]
  assert.equal(command[0], 'node')
  // Asynchronous: the health server answering it runs in this process.
  const child = spawn(process.execPath, command.slice(1), { env: { ...process.env, MIRROR_METRICS_PORT: String(port) }, stdio: 'ignore', timeout: 10_000 })
  const [code] = await once(child, 'exit') as [number | null]
  return code
}

async function startServer (t: TestContext): Promise<HealthServer> {
  const server = new HealthServer({ host: '127.0.0.1', port: 0, snapshots: () => [] })
  t.after(async () => { await server.stop() })
  await server.start()
  return server
}

test('the HEALTHCHECK command exits 0 while /healthz is 200, 1 after a fatal error and 1 when nothing listens', async t => {
  const server = await startServer(t)
  assert.equal(await healthcheck(server.port), 0)
  server.markFatal('flow a->b failed')
  assert.equal(await healthcheck(server.port), 1)
  const port = server.port
  await server.stop()
  assert.equal(await healthcheck(port), 1)
})
