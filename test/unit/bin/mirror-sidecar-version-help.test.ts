import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { usageLine } from '../../../src/check/cli/run-command.js'
import { MM1_FLAGS } from '../../../src/config/mm1-args.js'

const SIDECAR_BIN = fileURLToPath(new URL('../../../src/bin/mirror-sidecar.js', import.meta.url))
const CHECK_BIN = fileURLToPath(new URL('../../../src/check/mirror-check.js', import.meta.url))
const PACKAGE_VERSION = (JSON.parse(readFileSync(fileURLToPath(new URL('../../../../package.json', import.meta.url)), 'utf8')) as { version: string }).version

/** The environment without `MIRROR_*` variables: they set flags (the test runner's MIRROR_METRICS_PORT would be the port). */
const WITHOUT_MIRROR_VARIABLES = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_')))

function run (bin: string, args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null, stdout: string, stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 20_000, env: { ...WITHOUT_MIRROR_VARIABLES, ...env } })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

test('--version prints the package version and exits 0 in both commands', () => {
  for (const bin of [SIDECAR_BIN, CHECK_BIN]) {
    const result = run(bin, ['--version'])
    assert.equal(result.status, 0, result.stderr)
    assert.equal(result.stdout, `${PACKAGE_VERSION}\n`)
  }
})

/** Each flag whose help names a default, and where the resolved configuration (`--print-config`) holds it. */
const DEFAULT_IN_CONFIG: Record<string, (config: PrintedConfig, exactlyOnce: PrintedConfig) => unknown> = {
  'exactly.once': c => c.flows[0]?.exactlyOnce !== undefined,
  // Only an exactly-once flow has the interval: read from the config printed with --exactly.once true.
  'exactly.once.commit.interval.ms': (_, e) => e.flows[0]?.exactlyOnce?.commitIntervalMs,
  'num.streams': c => c.flows[0]?.numStreams,
  'num.producers': c => c.flows[0]?.numProducers,
  'queue.size': c => c.flows[0]?.queueMaxRecords,
  'queue.bytes': c => c.flows[0]?.queueMaxBytes,
  'offset.commit.interval.ms': c => c.flows[0]?.offsetCommitIntervalMs,
  'abort.on.send.failure': c => c.flows[0]?.abortOnSendFailure,
  'pass.through': c => c.flows[0]?.passThrough,
  'corrupt.batches': c => c.flows[0]?.corruptBatches,
  'sync.topic.configs.interval.seconds': c => (c.flows[0]?.syncTopicConfigsIntervalMs ?? 0) / 1000,
  'sync.topic.acls.enabled': c => c.flows[0]?.syncTopicAcls,
  'sync.topic.acls.interval.seconds': c => (c.flows[0]?.syncTopicAclsIntervalMs ?? 0) / 1000,
  'refresh.topics.interval.ms': c => c.flows[0]?.refreshTopicsIntervalMs,
  'metrics.port': c => c.metricsPort,
  'metrics.host': c => c.metricsHost,
  'metrics.partition.labels': c => c.metricsPartitionLabels,
  'idle.gc': c => c.idleGc,
  'log.level': c => c.logLevel,
  'drain.timeout.ms': c => c.drainTimeoutMs,
  'sync.group.offsets.enabled': c => c.flows[0]?.groupSync.enabled,
  groups: c => c.flows[0]?.groupSync.groups.include,
  'groups.exclude': c => `"${c.flows[0]?.groupSync.groups.exclude}"`,
  'sync.group.offsets.interval.seconds': c => (c.flows[0]?.groupSync.intervalMs ?? 0) / 1000,
  'digests.enabled': c => c.flows[0]?.digests.enabled,
  'digests.range.records': c => c.flows[0]?.digests.rangeRecords,
  'digests.audit.interval.ms': c => c.flows[0]?.digests.auditIntervalMs,
  'digests.audit.max.records': c => c.flows[0]?.digests.auditMaxRecords,
  // No limit is printed as no key at all; the help states it as 0.
  'throughput.limit.bytes': c => c.flows[0]?.throughputLimitBytes ?? 0,
}

interface PrintedConfig {
  metricsPort: number
  metricsHost: string
  metricsPartitionLabels: boolean
  idleGc: boolean
  logLevel: string
  drainTimeoutMs: number
  flows: Array<{
    numStreams: number
    numProducers: number
    queueMaxRecords: number
    queueMaxBytes: number
    offsetCommitIntervalMs: number
    abortOnSendFailure: boolean
    passThrough: string
    corruptBatches: string
    throughputLimitBytes?: number
    exactlyOnce?: { commitIntervalMs: number }
    syncTopicConfigsIntervalMs: number
    syncTopicAcls: boolean
    syncTopicAclsIntervalMs: number
    refreshTopicsIntervalMs: number
    groupSync: { enabled: boolean, intervalMs: number, groups: { include: string, exclude: string } }
    digests: { enabled: boolean, rangeRecords: number, auditIntervalMs: number, auditMaxRecords: number }
  }>
}

test('mirror-sidecar --help states the defaults the code uses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-help-'))
  try {
    writeFileSync(join(dir, 's.properties'), 'bootstrap.servers=127.0.0.1:1\n')
    writeFileSync(join(dir, 't.properties'), 'bootstrap.servers=127.0.0.1:2\n')
    const printed = run(SIDECAR_BIN, [
      '--consumer.config',
      join(dir, 's.properties'),
      '--producer.config',
      join(dir, 't.properties'),
      '--whitelist',
      'x',
      '--print-config',
    ])
    assert.equal(printed.status, 0, printed.stderr)
    const config = JSON.parse(printed.stdout) as PrintedConfig
    const printedExactlyOnce = run(SIDECAR_BIN, [
      '--consumer.config',
      join(dir, 's.properties'),
      '--producer.config',
      join(dir, 't.properties'),
      '--whitelist',
      'x',
      '--exactly.once',
      'true',
      '--print-config',
    ])
    assert.equal(printedExactlyOnce.status, 0, printedExactlyOnce.stderr)
    const exactlyOnce = JSON.parse(printedExactlyOnce.stdout) as PrintedConfig

    const help = run(SIDECAR_BIN, ['--help'])
    assert.equal(help.status, 0, help.stderr)
    const text = help.stdout.replace(/\s+/g, ' ')
    const withDefault = Object.entries(MM1_FLAGS).filter(([, option]) => option.describe.includes('(default '))
    assert.deepEqual(withDefault.map(([flag]) => flag).sort(), Object.keys(DEFAULT_IN_CONFIG).sort(), 'every flag with a default in its help is checked')
    for (const [flag, option] of withDefault) {
      const stated = /\(default ([^;:)]+?)(?:[;:)]|$)/.exec(option.describe)?.[1]
      assert.equal(stated, String(DEFAULT_IN_CONFIG[flag]?.(config, exactlyOnce)), `--${flag}: help says "${option.describe}"`)
      assert.ok(text.includes(`--${flag} ${option.describe.replace(/\s+/g, ' ')}`), `--${flag}: help output shows "${option.describe}"`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('mirror-check --format xml names the bad value and the choices, also under another LANG', () => {
  for (const LANG of ['C.UTF-8', 'de_DE.UTF-8']) {
    const result = run(CHECK_BIN, ['--bootstrap-server', '127.0.0.1:1', '--group', 'g', '--format', 'xml'], { LANG, LC_ALL: LANG })
    assert.equal(result.status, 2)
    assert.equal(result.stderr, 'mirror-check: --format "xml": expected one of table, json, csv\nRun mirror-check --help for usage.\n')
  }
})

test('usageLine: yargs\' "Invalid values:" message becomes --flag "value": expected one of ...; others keep their first line', () => {
  assert.equal(
    usageLine('Invalid values:\n  Argument: format, Given: "xml", Choices: "table", "json", "csv"'),
    '--format "xml": expected one of table, json, csv'
  )
  assert.equal(
    usageLine('Invalid values:\n  Argument: format, Given: "xml", Choices: "table", "json"\n  Argument: replication-policy, Given: "x", Choices: "identity", "default"'),
    '--format "xml": expected one of table, json; --replication-policy "x": expected one of identity, default'
  )
  assert.equal(usageLine('Unknown argument: bogus\nmore'), 'Unknown argument: bogus')
})

test('--dry-run is in --help, says it connects, and a bad value in the mm2.properties file is one line and exit 2 before anything connects', () => {
  const help = run(SIDECAR_BIN, ['--help'])
  assert.equal(help.status, 0, help.stderr)
  assert.match(
    help.stdout.replace(/\s+/g, ' '),
    /--dry-run Print where each partition of every flow would start and why .* connects to both clusters to read them, writes nothing/
  )
  const dir = mkdtempSync(join(tmpdir(), 'dry-run-'))
  try {
    const file = join(dir, 'mm2.properties')
    // Nothing listens on port 1: a connection attempt would show as a connection error, not this line.
    writeFileSync(
      file,
      'clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\nB.offset.storage.topic = two words\n'
    )
    const bad = run(SIDECAR_BIN, [file, '--dry-run'])
    assert.equal(bad.status, 2)
    assert.equal(bad.stdout, '')
    assert.match(
      bad.stderr,
      /^mirror-sidecar: B\.offset\.storage\.topic "two words": expected a topic name .*Connect's offsets topic, where MirrorMaker 2 keeps its source positions\n$/
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
