import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const SIDECAR_BIN = fileURLToPath(new URL('../../../src/bin/mirror-sidecar.js', import.meta.url))

const mm1 = () => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders',
})

test('--throughput.limit.bytes (and MIRROR_THROUGHPUT_LIMIT_BYTES): no limit by default or with 0, bytes per second otherwise', () => {
  assert.equal(configFromMm1(mm1()).flows[0]?.throughputLimitBytes, undefined)
  assert.equal(configFromMm1({ ...mm1(), 'throughput.limit.bytes': '0' }).flows[0]?.throughputLimitBytes, undefined)
  assert.equal(configFromMm1({ ...mm1(), 'throughput.limit.bytes': '10485760' }).flows[0]?.throughputLimitBytes, 10_485_760)
  assert.equal(configFromMm1(mergeEnv(mm1(), { MIRROR_THROUGHPUT_LIMIT_BYTES: ' 1024 ' })).flows[0]?.throughputLimitBytes, 1024)
})

test('--throughput.limit.bytes: a bad value is one line naming flag, value and what to give', () => {
  for (const bad of ['10MB', '-1', '1.5', '100', '']) {
    assert.throws(
      () => configFromMm1({ ...mm1(), 'throughput.limit.bytes': bad }),
      new RegExp(
        `--throughput\\.limit\\.bytes "${bad.replace('.', '\\.')}": expected bytes per second as an integer of at least 1024 \\(e\\.g\\. 10485760 for 10 MiB/s\\), or 0 for no limit$`,
        'm'
      ),
      bad
    )
  }
})

test('mm2.properties throughput.limit.bytes, top level for every flow and A->B.throughput.limit.bytes per flow', () => {
  const file = (extra: Record<string, string>): string =>
    writeProperties(
      {
        clusters: 'A, B, C',
        'A.bootstrap.servers': '127.0.0.1:1',
        'B.bootstrap.servers': '127.0.0.1:2',
        'C.bootstrap.servers': '127.0.0.1:3',
        'A->B.enabled': 'true',
        'A->C.enabled': 'true',
        ...extra,
      },
      'mm2.properties'
    )
  const settings = sidecarSettingsFromFlags({}, new ProblemList())
  const limits = (extra: Record<string, string>): Record<string, number | undefined> =>
    Object.fromEntries(configFromMm2(file(extra), { settings }).flows.map(flow => [flow.name, flow.throughputLimitBytes]))
  assert.deepEqual(limits({}), { 'A->B': undefined, 'A->C': undefined })
  assert.deepEqual(limits({ 'throughput.limit.bytes': '2048' }), { 'A->B': 2048, 'A->C': 2048 })
  const perFlow = configFromMm2(file({ 'throughput.limit.bytes': '2048', 'A->C.throughput.limit.bytes': '0' }), { settings })
  assert.deepEqual(perFlow.flows.map(flow => flow.throughputLimitBytes), [2048, undefined])
  assert.deepEqual(perFlow.ignoredKeys, [])
  assert.throws(() => configFromMm2(file({ 'A->B.throughput.limit.bytes': '5k' }), { settings }),
    /A->B\.throughput\.limit\.bytes "5k": expected bytes per second as an integer of at least 1024/)
})

test('the built bin: a bad limit exits 2 with one line before connecting (one-file form), no stack trace', t => {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-limit-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'mirror.properties')
  // Port 1: nothing listens; the run must end on the value before any connection is tried.
  writeFileSync(path, 'bootstrap.servers=127.0.0.1:1\ntarget.bootstrap.servers=127.0.0.1:1\nwhitelist=.*\nthroughput.limit.bytes=fast\n')
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_')))
  const run = spawnSync(process.execPath, [SIDECAR_BIN, path], { encoding: 'utf8', timeout: 20_000, env })
  assert.equal(run.status, 2, run.stderr)
  assert.equal(
    run.stderr,
    `mirror-sidecar: ${path}: throughput.limit.bytes "fast": expected bytes per second as an integer of at least 1024 (e.g. 10485760 for 10 MiB/s), or 0 for no limit\n`
  )
  writeFileSync(path, 'bootstrap.servers=127.0.0.1:1\ntarget.bootstrap.servers=127.0.0.1:1\nwhitelist=.*\nthroughput.limit.bytes=4096\n')
  const ok = spawnSync(process.execPath, [SIDECAR_BIN, path, '--print-config'], { encoding: 'utf8', timeout: 20_000, env })
  assert.equal(ok.status, 0, ok.stderr)
  assert.equal((JSON.parse(ok.stdout) as { flows: Array<{ throughputLimitBytes?: number }> }).flows[0]?.throughputLimitBytes, 4096)
})
