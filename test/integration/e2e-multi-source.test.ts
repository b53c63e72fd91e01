import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  createTopic,
  deleteTopicIfExists,
  produce,
  readAll,
  sharedClusters,
  startExtraCluster,
  recordView,
  totalRecords,
  uniqueName,
  withAdmin,
} from '../helpers/kafka.js'
import { spawnSidecarArgs, waitMirroring, writeProperties } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

test('several --consumer.config (MirrorMaker 1 style): two source clusters into one target, each topic arrives', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const second = await startExtraCluster(t, 'second-source')
  const prefix = uniqueName('multi').replace(/-/g, '')
  const fromFirst = await createTopic(t, source, { name: `${prefix}-first`, partitions: 2 })
  // Topics on the extra cluster go with it (its folder is removed when the test ends; after-hooks run in order).
  const fromSecond = `${prefix}-second`
  await withAdmin(second, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic: fromSecond, numPartitions: 3, replicationFactor: 1 }] }))
  for (const topic of [fromFirst, fromSecond]) t.after(() => deleteTopicIfExists(target, topic))
  await produce(source, fromFirst, Array.from({ length: 40 }, (_, i) => ({ partition: i % 2, key: `a${i}`, value: `first-${i}` })))
  await produce(second, fromSecond, Array.from({ length: 30 }, (_, i) => ({ partition: i % 3, key: `b${i}`, value: `second-${i}` })))

  const consumerConfig = (bootstrap: string, name: string): string =>
    writeProperties({ 'bootstrap.servers': bootstrap, 'group.id': uniqueName('e2e-multi'), 'auto.offset.reset': 'earliest' }, name)
  const sidecar = spawnSidecarArgs(t, [
    '--consumer.config', consumerConfig(source.bootstrap, 'first.properties'),
    '--consumer.config', consumerConfig(second.bootstrap, 'second.properties'),
    '--producer.config', writeProperties({ 'bootstrap.servers': target.bootstrap, acks: 'all' }, 'target.properties'),
    '--whitelist', `${prefix}-.*`,
    '--offset.commit.interval.ms', '500', '--refresh.topics.interval.ms', '1000', '--metrics.port', '0', '--metrics.host', '127.0.0.1',
  ])
  const port = await sidecarHttpPort(sidecar)
  await waitMirroring(sidecar)
  await waitUntil(
    () => sidecar.stderr().includes('"msg":"mirroring","flow":"source1->target"') && sidecar.stderr().includes('"msg":"mirroring","flow":"source2->target"'),
    { timeoutMs: 30_000, message: 'both flows to start' }
  )
  // Compared with what the sources hold: a producer retry on the fresh cluster may have written a record twice there.
  const expected = [await totalRecords(source, fromFirst), await totalRecords(second, fromSecond)]
  assert.ok(expected[0] as bigint >= 40n && expected[1] as bigint >= 30n)
  let copied: bigint[] = []
  await waitUntil(async () => {
    copied = [await totalRecords(target, fromFirst).catch(() => -1n), await totalRecords(target, fromSecond).catch(() => -1n)]
    return copied[0] === expected[0] && copied[1] === expected[1]
  }, { timeoutMs: 30_000, message: `both sources' topics copied (${expected.join(' and ')} records)` }).catch(error => {
    throw new Error(`${(error as Error).message}: the target has ${copied.join(' and ')}`)
  })
  for (const [cluster, topic] of [[source, fromFirst], [second, fromSecond]] as const) {
    const [from, to] = await Promise.all([readAll(cluster, topic), readAll(target, topic)])
    assert.deepEqual(to.map(recordView), from.map(recordView), `${topic}: same records in the same partitions and order`)
  }
  assert.deepEqual(new Set((await readAll(target, fromFirst)).map(r => String(r.value).replace(/-\d+$/, ''))), new Set(['first']))
  assert.deepEqual(new Set((await readAll(target, fromSecond)).map(r => String(r.value).replace(/-\d+$/, ''))), new Set(['second']))
  const exposition = await scrape(port)
  assert.equal(sampleSum(exposition, 'kafka_mirror_assigned_partitions'), 5, 'two partitions from the first source, three from the second')
  assert.match(exposition, /kafka_mirror_assigned_partitions\{[^}]*flow="source1->target"[^}]*\} 2\b/)
  assert.match(exposition, /kafka_mirror_assigned_partitions\{[^}]*flow="source2->target"[^}]*\} 3\b/)

  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
})
