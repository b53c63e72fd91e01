import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { commitAsAdmin } from '../helpers/offsets.js'
import { writeProperties } from '../helpers/sidecar.js'

/** The client ids kafkajs sent requests with, per cluster alias, from `--verbose` JSON log lines on stderr. */
function requestClientIds (stderr: string): Record<string, string[]> {
  const ids: Record<string, Set<string>> = {}
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue
    const entry = JSON.parse(line) as { msg?: string, cluster?: string, clientId?: string }
    if (entry.msg?.startsWith('Request ') !== true || entry.cluster === undefined || entry.clientId === undefined) continue
    ;(ids[entry.cluster] ??= new Set()).add(entry.clientId)
  }
  return Object.fromEntries(Object.entries(ids).map(([cluster, set]) => [cluster, [...set]]))
}

test(
  '--source-command-config/--target-command-config: bootstrap.servers and client.id from the files are used; the flags override the file',
  { timeout: 30_000 },
  async t => {
    const { source, target } = await sharedClusters()
    // The records carry fixed 2025 timestamps: without retention.ms=-1 the broker's retention check (every 5 min, 7 days) may delete them mid-test.
    const topic = await createTopic(t, source, { configs: { 'retention.ms': '-1' } })
    await createTopic(t, target, { name: topic, configs: { 'retention.ms': '-1' } })
    const messages = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: String(1_760_000_000_000 + i) }))
    await produce(source, topic, messages)
    await produce(target, topic, messages)
    const group = uniqueName('mirror')
    await commitAsAdmin(source, group, topic, new Map([[0, 20n]]))
    const sourceConfig = writeProperties({ 'bootstrap.servers': source.bootstrap, 'client.id': 'audit-src' }, 'source.properties')
    const targetConfig = writeProperties({ 'bootstrap.servers': target.bootstrap, 'client.id': 'audit-dst' }, 'target.properties')
    const files = ['--source-command-config', sourceConfig, '--target-command-config', targetConfig]

    const lag = await runMirrorCheck(['lag', ...files, '--group', group, '--format', 'csv', '--verbose'])
    assert.equal(lag.code, 0, lag.stderr.slice(-2000))
    assert.deepEqual(
      lag.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map(l => l.split(',').slice(0, 7)),
      [[topic, topic, '0', '20', '20', '20', '0']],
      'CSV holds the data rows only'
    )
    assert.deepEqual(requestClientIds(lag.stderr), { source: ['audit-src'], target: ['audit-dst'] })
    const withTotals = await runMirrorCheck(['lag', ...files, '--group', group, '--format', 'csv', '--totals'])
    assert.equal(withTotals.code, 0, withTotals.stderr.slice(-2000))
    assert.deepEqual(
      withTotals.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map(l => l.split(',').slice(0, 7)),
      [
        [topic, topic, '0', '20', '20', '20', '0'],
        [topic, topic, 'TOTAL', '20', '20', '-', '0'],
      ],
      '--totals adds the TOTAL rows'
    )

    const verify = await runMirrorCheck(['verify', ...files, '--topic', topic, '--group', group, '--format', 'json', '--verbose'])
    assert.equal(verify.code, 0, verify.stderr.slice(-2000))
    const verified = JSON.parse(verify.stdout) as { passed: boolean, total: { checked: number } }
    assert.deepEqual([verified.passed, verified.total.checked], [true, 20])
    assert.deepEqual(requestClientIds(verify.stderr), { source: ['audit-src'], target: ['audit-dst'] })

    const translate = await runMirrorCheck(['translate', ...files, '--group', group, '--format', 'json'])
    // No offset syncs on the target for this topic: exit 1, but the group's offset was read from the source of the file.
    assert.equal(translate.code, 1, translate.stderr)
    assert.deepEqual(
      (JSON.parse(translate.stdout) as Array<{ topic: string, sourceOffset: number }>).map(r => [r.topic, r.sourceOffset]),
      [[topic, 20]]
    )

    // --source wins over bootstrap.servers in the file (as Kafka's tools treat --bootstrap-server); nothing listens on the file's port.
    const elsewhere = writeProperties({ 'bootstrap.servers': '127.0.0.1:39199', 'client.id': 'audit-src' }, 'source.properties')
    const overridden = await runMirrorCheck([
      'lag',
      '--source-command-config',
      elsewhere,
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--format',
      'csv',
    ])
    assert.equal(overridden.code, 0, overridden.stderr)
    const unreachable = await runMirrorCheck([
      'lag',
      '--source-command-config',
      elsewhere,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--timeout-ms',
      '500',
    ])
    assert.equal(unreachable.code, 2)
    assert.match(unreachable.stderr, /^mirror-check: cannot reach the source cluster \(127\.0\.0\.1:39199\)/)
  }
)

test('a missing --source-command-config/--target-command-config file exits 2 with one line naming the flag and the path', { timeout: 30_000 }, async () => {
  const { source, target } = await sharedClusters()
  const missing = `/nonexistent/${uniqueName('client')}.properties`
  for (const command of ['lag', 'verify', 'translate']) {
    const extra = command === 'verify' ? ['--topic', 'orders'] : ['--group', 'mirror-sidecar']
    for (const flag of ['--source-command-config', '--target-command-config']) {
      const result = await runMirrorCheck([command, '--source', source.bootstrap, '--target', target.bootstrap, ...extra, flag, missing])
      assert.equal(result.code, 2, `${command} ${flag}: ${result.stderr}`)
      assert.equal(result.stdout, '')
      assert.equal(
        result.stderr,
        `mirror-check: ${flag} "${missing}": file not found; give the path of a readable Java .properties file\n`,
        `${command} ${flag}`
      )
    }
  }
  const noBootstrap = await runMirrorCheck(['lag', '--source-command-config', writeProperties({ 'client.id': 'audit-src' }), '--target', target.bootstrap])
  assert.equal(noBootstrap.code, 2)
  assert.equal(noBootstrap.stderr.trim().split('\n').length, 1, noBootstrap.stderr)
  assert.match(noBootstrap.stderr, /bootstrap\.servers.*missing.*--source/)
})
