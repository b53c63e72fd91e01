import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck, type CliResult } from '../helpers/mirror-check.js'
import { createKafkaClient } from '../../src/kafka/client.js'

/** Exit 2 with one line of explanation on stderr (plus the usage hint for flag errors), no stack trace, nothing on stdout. */
function assertCleanFailure (result: CliResult, message: RegExp): void {
  assert.equal(result.code, 2, `exit 2, got ${result.code}: ${result.stderr}`)
  assert.equal(result.stdout, '')
  const lines = result.stderr.trim().split('\n')
  assert.match(lines[0]!, message)
  assert.ok(lines.length <= 2, `at most the message and a usage hint: ${result.stderr}`)
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace')
}

test('bad input exits 2 with a clear one-line message and no stack trace', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source)

  const cases: Array<[string, string[], RegExp]> = [
    [
      'unknown group',
      ['--bootstrap-server', source.bootstrap, '--group', uniqueName('nobody')],
      /^mirror-check: Consumer group 'nobody-[0-9a-f]+' does not exist\.$/,
    ],
    ['unknown topic', ['--bootstrap-server', source.bootstrap, '--group', 'g', '--topic', 'no-such-topic'], /--topic "no-such-topic": no such topic/],
    ['no group', ['--bootstrap-server', source.bootstrap], /--group is required/],
    [
      'bad --max-lag',
      ['--bootstrap-server', source.bootstrap, '--group', 'g', '--max-lag', 'lots'],
      /^mirror-check: --max-lag "lots": expected a non-negative integer$/,
    ],
    [
      'negative --max-lag-seconds',
      ['--bootstrap-server', source.bootstrap, '--group', 'g', '--max-lag-seconds', '-3'],
      /--max-lag-seconds "-3": expected a non-negative number of seconds/,
    ],
    ['bad --format', ['--bootstrap-server', source.bootstrap, '--group', 'g', '--format', 'xml'], /Invalid values:|--format/],
    ['unknown flag', ['--bootstrap-server', source.bootstrap, '--group', 'g', '--colour'], /Unknown argument: colour/],
    ['bad bootstrap', ['--bootstrap-server', 'localhost', '--group', 'g'], /^mirror-check: --bootstrap-server "localhost": expected host:port/],
    [
      'missing command config',
      ['--bootstrap-server', source.bootstrap, '--group', 'g', '--command-config', '/nonexistent/client.properties'],
      /--command-config "\/nonexistent\/client.properties": file not found/,
    ],
    [
      'bad --partition',
      ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--partition', 'one'],
      /--partition "one": expected a non-negative integer/,
    ],
    [
      'bad --from-time',
      ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--from-time', 'yesterday'],
      /--from-time "yesterday": expected an ISO 8601 date-time/,
    ],
    [
      'unknown source topic',
      ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', 'no-such-topic'],
      /--topic "no-such-topic": no such topic on the source cluster/,
    ],
    [
      'missing target topic',
      ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic],
      /--target-topic "[^"]+": no such topic on the target cluster/,
    ],
    [
      'lag without the mirror group',
      ['lag', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', 'absent-mirror'],
      /--group "absent-mirror": no such consumer group on the source cluster/,
    ],
  ]
  for (const [name, args, message] of cases) {
    await t.test(name, async () => assertCleanFailure(await runMirrorCheck(args), message))
  }
})

test('an unreachable broker fails fast with exit 2', { timeout: 60_000 }, async t => {
  // A port in this helper's range where nothing listens.
  const refused = await runMirrorCheck(['--bootstrap-server', '127.0.0.1:39187', '--group', 'g'])
  assertCleanFailure(refused, /^mirror-check: cannot reach the source cluster \(127\.0\.0\.1:39187\): .*ECONNREFUSED.*check the bootstrap servers/)
  assert.ok(refused.ms < 10_000, `failed after ${refused.ms} ms`)

  const { source } = await sharedClusters()
  const lag = await runMirrorCheck(['lag', '--source', source.bootstrap, '--target', '127.0.0.1:39188', '--topic', 'x', '--timeout-ms', '500'])
  assertCleanFailure(lag, /cannot reach the target cluster \(127\.0\.0\.1:39188\)/)
  assert.ok(lag.ms < 10_000, `failed after ${lag.ms} ms`)
  t.diagnostic(`refused: ${refused.ms} ms, target refused: ${lag.ms} ms`)
})

test('--verbose adds the stack trace of a runtime error', { timeout: 30_000 }, async () => {
  const result = await runMirrorCheck(['--bootstrap-server', '127.0.0.1:39187', '--group', 'g', '--verbose'])
  assert.equal(result.code, 2)
  assert.match(result.stderr, /^\s+at /m)
})

test('lag reports both log ends and the mirror position under the default replication policy', { timeout: 60_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 2 })
  const targetTopic = await createTopic(t, target, { name: `east_${topic}`, partitions: 2 })
  const old = Date.now() - 300_000
  await produce(source, topic, [0, 1].flatMap(partition => Array.from({ length: 20 }, (_, i) => ({ partition, value: `v${i}`, timestamp: String(old + i) }))))
  await produce(target, targetTopic, [0, 1].flatMap(partition => Array.from({ length: partition === 0 ? 20 : 12 }, (_, i) => ({ partition, value: `v${i}` }))))
  const group = uniqueName('mirror')
  const admin = createKafkaClient(source.connection('lag-test')).admin()
  await admin.connect()
  t.after(() => admin.disconnect())
  await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '20' }, { partition: 1, offset: '12' }] })

  const args = [
    'lag',
    '--source',
    source.bootstrap,
    '--target',
    target.bootstrap,
    '--group',
    group,
    '--replication-policy',
    'default',
    '--source-alias',
    'east',
    '--separator',
    '_',
    '--format',
    'csv',
    '--totals',
  ]
  const result = await runMirrorCheck(args)
  assert.equal(result.code, 0, result.stderr)
  const rows = result.stdout.trim().split('\n').map(l => l.split(','))
  assert.deepEqual(rows[0], ['TOPIC', 'TARGET-TOPIC', 'PARTITION', 'SOURCE-LOG-END-OFFSET', 'TARGET-LOG-END-OFFSET', 'MIRROR-OFFSET', 'LAG', 'LAG-SECONDS'])
  assert.deepEqual(rows.slice(1).map(r => r.slice(0, 7)), [
    [topic, targetTopic, '0', '20', '20', '20', '0'],
    [topic, targetTopic, '1', '20', '12', '12', '8'],
    [topic, targetTopic, 'TOTAL', '40', '32', '-', '8'],
  ])
  assert.equal(rows[1]![7], '0')
  const seconds = Number(rows[2]![7])
  assert.ok(seconds >= 299 && seconds < 400, `LAG-SECONDS ${seconds}: age of source record 12 of partition 1`)
  assert.equal((await runMirrorCheck([...args, '--max-lag', '7'])).code, 1)
  assert.equal((await runMirrorCheck([...args, '--max-lag', '8'])).code, 0)
})
