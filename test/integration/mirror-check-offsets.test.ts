import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createKafkaClient } from '../../src/kafka/client.js'
import { ensureKafkaDistribution } from '../../scripts/local-kafka/clusters.js'
import { createTopic, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)

interface DescribeRow {
  topic: string
  partition: string
  currentOffset: string
  logEndOffset: string
  lag: string
  consumerId: string
  host: string
  clientId: string
}

/** Runs Kafka's own `kafka-consumer-groups --describe` from the same jars and parses its rows. */
async function kafkaDescribe (bootstrap: string, group: string): Promise<DescribeRow[]> {
  const { classpath } = await ensureKafkaDistribution()
  const { stdout } = await execFileAsync('java', [
    '-Xmx256m',
    '-cp',
    classpath,
    'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
    '--bootstrap-server',
    bootstrap,
    '--describe',
    '--group',
    group,
  ])
  return stdout.split('\n').map(l => l.trim().split(/\s+/)).filter(cols => cols[0] === group).map(cols => {
    const [, topic, partition, currentOffset, logEndOffset, lag, consumerId, host, clientId] = cols as string[]
    return {
      topic: topic!,
      partition: partition!,
      currentOffset: currentOffset!,
      logEndOffset: logEndOffset!,
      lag: lag!,
      consumerId: consumerId!,
      host: host!,
      clientId: clientId!,
    }
  })
}

test('the offset report equals kafka-consumer-groups --describe on a lagging group with an active member', { timeout: 120_000 }, async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 3 })
  const group = uniqueName('app')
  await produce(source, topic, [0, 1, 2].flatMap(partition => Array.from({ length: 30 }, (_, i) => ({ partition, key: `k${i}`, value: `v${i}` }))))

  const consumer = createKafkaClient(source.connection('offsets-test-app')).consumer({ groupId: group, allowAutoTopicCreation: false })
  await consumer.connect()
  t.after(() => consumer.disconnect())
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  let consumed = 0
  await consumer.run({ eachMessage: async () => { consumed++ } })
  const admin = createKafkaClient(source.connection('offsets-test-admin')).admin()
  await admin.connect()
  t.after(() => admin.disconnect())
  const committedTotal = async (): Promise<number> =>
    (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0)
  await waitUntil(async () => consumed === 90 && await committedTotal() === 90, { message: 'the member consumed and committed 90 records' })
  // The member stays in the group (heartbeats go on) but stops fetching: lag builds up on every partition.
  consumer.pause([{ topic }])
  const oldTimestamp = Date.now() - 120_000
  await produce(
    source,
    topic,
    [0, 1, 2].flatMap(partition =>
      Array.from({ length: 5 * (partition + 1) }, (_, i) => ({ partition, value: `late${i}`, timestamp: String(oldTimestamp + i) }))
    )
  )

  const [ours, theirs] = await Promise.all([
    runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--format', 'csv']),
    kafkaDescribe(source.bootstrap, group),
  ])
  assert.equal(ours.code, 0, `${ours.stderr} after ${ours.ms} ms`)
  const lines = ours.stdout.trim().split('\n')
  assert.equal(lines[0], 'GROUP,TOPIC,PARTITION,CURRENT-OFFSET,LOG-END-OFFSET,LAG,CONSUMER-ID,HOST,CLIENT-ID,LAG-SECONDS')
  const partitionRows = lines.slice(1).map(l => l.split(','))
  assert.deepEqual(partitionRows.filter(r => r[2] === 'TOTAL'), [], 'CSV holds the data rows only (TOTAL with --totals)')
  assert.equal(theirs.length, 3, 'Kafka lists three partitions')
  assert.deepEqual(
    partitionRows.map(r => ({
      topic: r[1],
      partition: r[2],
      currentOffset: r[3],
      logEndOffset: r[4],
      lag: r[5],
      consumerId: r[6],
      host: r[7],
      clientId: r[8],
    })),
    // Kafka 4.1 lists a member's partitions in hash-set order; newer releases sort them by topic and partition, as we do.
    [...theirs].sort((a, b) => a.topic.localeCompare(b.topic) || Number(a.partition) - Number(b.partition)),
    'same rows and values as kafka-consumer-groups'
  )
  assert.deepEqual(partitionRows.map(r => r[5]), ['5', '10', '15'])
  for (const r of partitionRows) {
    const seconds = Number(r[9])
    assert.ok(seconds >= 119 && seconds < 200, `LAG-SECONDS ${r[9]} is the age of the record at the committed offset (about 120 s)`)
  }
  const withTotals = await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--format', 'csv', '--totals'])
  assert.equal(withTotals.code, 0, withTotals.stderr)
  const rows = withTotals.stdout.trim().split('\n').slice(1).map(l => l.split(','))
  assert.deepEqual(rows.map(r => r[2]), ['0', '1', '2', 'TOTAL'])
  assert.deepEqual(rows.find(r => r[2] === 'TOTAL')?.slice(0, 6), [group, topic, 'TOTAL', '-', '-', '30'])

  const check = await runMirrorCheck(['offsets', '--bootstrap-server', source.bootstrap, '--group', group, '--max-lag', '12'])
  assert.equal(check.code, 1)
  assert.match(check.stderr, new RegExp(`lag check failed: ${topic}-2: lag 15 records > 12`))
  assert.equal((await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--max-lag', '15', '--max-lag-seconds', '600'])).code, 0)
  assert.equal((await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--max-lag-seconds', '60'])).code, 1)

  const members = await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--members', '--format', 'json'])
  assert.equal(members.code, 0, members.stderr)
  assert.deepEqual(JSON.parse(members.stdout).map((m: { clientId: string, partitions: number }) => [m.clientId, m.partitions]), [['offsets-test-app', 3]])
  const state = await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--state', '--format', 'json'])
  assert.equal(state.code, 0, state.stderr)
  assert.deepEqual(JSON.parse(state.stdout).map((g: { state: string, members: number }) => [g.state, g.members]), [['Stable', 1]])
})

test('an empty group, a topic without committed offsets and --all-groups are said plainly', { timeout: 60_000 }, async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 2 })
  const other = await createTopic(t, source)
  const group = uniqueName('idle')
  await produce(source, topic, [{ partition: 0, value: 'a' }, { partition: 1, value: 'b' }, { partition: 1, value: 'c' }])
  const admin = createKafkaClient(source.connection('offsets-test-admin')).admin()
  await admin.connect()
  t.after(() => admin.disconnect())
  await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '1' }, { partition: 1, offset: '1' }] })

  const idle = await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--format', 'json'])
  assert.equal(idle.code, 0, idle.stderr)
  assert.match(idle.stderr, new RegExp(`Consumer group '${group}' has no active members.`))
  const [described] = JSON.parse(idle.stdout) as Array<{
    state: string
    partitions: Array<{ lag: number, consumerId: null, lagSeconds: number }>
    totals: Array<{ lag: number }>
  }>
  assert.equal(described!.state, 'Empty')
  assert.deepEqual(described!.partitions.map(p => [p.lag, p.consumerId]), [[0, null], [1, null]])
  assert.equal(described!.partitions[0]!.lagSeconds, 0)
  assert.deepEqual(described!.totals.map(tl => tl.lag), [1])

  const noOffsets = await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--group', group, '--topic', other])
  assert.equal(noOffsets.code, 0)
  assert.match(noOffsets.stderr, new RegExp(`Consumer group '${group}' has no committed offsets or assignment for topic '${other}'.`))

  const all = await runMirrorCheck(['--bootstrap-server', source.bootstrap, '--all-groups', '--format', 'csv'])
  assert.equal(all.code, 0, all.stderr)
  assert.ok(all.stdout.split('\n').some(l => l.startsWith(`${group},${topic},1,1,2,1,`)), all.stdout)
})
