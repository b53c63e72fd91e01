import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopicIfExists, produce, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import { mm2File } from '../helpers/mm2-file.js'

const FAST = { 'refresh.topics.interval.seconds': '1', 'offset.flush.interval.ms': '500', 'replication.factor': '1' }
const SIDECAR_FLAGS = ['--metrics.port', '0', '--metrics.host', '127.0.0.1']

test('mm2.properties with A->B and B->A (Default policy) copies each topic once under its prefixed name, without loops', { timeout: 180_000 }, async t => {
  const { source: a, target: b } = await sharedClusters()
  const p = uniqueName('mm2').replace(/-/g, '')
  const onA = await createTopic(t, a, { name: `${p}-a`, partitions: 2 })
  const onB = await createTopic(t, b, { name: `${p}-b` })
  for (const [cluster, topic] of [
    [b, `A.${onA}`],
    [a, `B.${onB}`],
    [a, `B.A.${onA}`],
    [b, `A.B.${onB}`],
  ] as const) { t.after(() => deleteTopicIfExists(cluster, topic)) }
  await produce(a, onA, Array.from({ length: 30 }, (_, i) => ({ partition: i % 2, value: `a${i}` })))
  await produce(b, onB, Array.from({ length: 10 }, (_, i) => ({ value: `b${i}` })))
  const config = mm2File({
    clusters: 'A, B',
    'A.bootstrap.servers': a.bootstrap,
    'B.bootstrap.servers': b.bootstrap,
    'A->B.enabled': 'true',
    'B->A.enabled': 'true',
    topics: `.*${p}.*`,
    'A.consumer.group.id': uniqueName('mm2-from-a'),
    'B.consumer.group.id': uniqueName('mm2-from-b'),
    ...FAST,
  })
  const sidecar = spawnSidecarArgs(t, [config, ...SIDECAR_FLAGS])
  await waitMirroring(sidecar)
  await waitUntil(async () => await totalRecords(b, `A.${onA}`).catch(() => 0n) === 30n && await totalRecords(a, `B.${onB}`).catch(() => 0n) === 10n,
    { timeoutMs: 60_000, message: 'both flows to copy their topic' })
  // Another round trip after several 1 s topic refreshes: the copies are still not copied back.
  await produce(a, onA, [{ partition: 0, value: 'late' }])
  await waitUntil(async () => await totalRecords(b, `A.${onA}`) === 31n, { timeoutMs: 30_000, message: 'a late record copied' })
  const [topicsA, topicsB] = await Promise.all([withAdmin(a, admin => admin.listTopics()), withAdmin(b, admin => admin.listTopics())])
  assert.deepEqual(topicsA.filter(name => name.includes(p)).sort(), [`B.${onB}`, onA].sort())
  assert.deepEqual(topicsB.filter(name => name.includes(p)).sort(), [`A.${onA}`, onB].sort())
  assert.match(sidecar.stderr(), /"msg":"mirroring","flow":"A->B"/)
  assert.match(sidecar.stderr(), /"msg":"mirroring","flow":"B->A"/)
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
})

test('the Identity policy keeps names; --clusters B runs only the flows into B', { timeout: 180_000 }, async t => {
  const { source: a, target: b } = await sharedClusters()
  const p = uniqueName('ident').replace(/-/g, '')
  const onA = await createTopic(t, a, { name: `${p}-a` })
  const onB = await createTopic(t, b, { name: `${p}-b` })
  t.after(() => deleteTopicIfExists(b, onA))
  t.after(() => deleteTopicIfExists(a, onB))
  await produce(a, onA, [{ value: 'x' }, { value: 'y' }])
  await produce(b, onB, [{ value: 'z' }])
  const config = mm2File({
    clusters: 'A, B',
    'A.bootstrap.servers': a.bootstrap,
    'B.bootstrap.servers': b.bootstrap,
    'A->B.enabled': 'true',
    'B->A.enabled': 'true',
    'A->B.topics': `${p}-a`,
    'B->A.topics': `${p}-b`,
    'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
    'A->B.consumer.group.id': uniqueName('ident'),
    ...FAST,
  })
  const sidecar = spawnSidecarArgs(t, [config, '--clusters', 'B', ...SIDECAR_FLAGS])
  await waitMirroring(sidecar)
  await waitUntil(async () => await totalRecords(b, onA).catch(() => 0n) === 2n, { timeoutMs: 60_000, message: `${onA} copied under its own name` })
  assert.doesNotMatch(sidecar.stderr(), /"flow":"B->A"/, 'the flow into A must not run')
  assert.equal((await withAdmin(a, admin => admin.listTopics())).includes(onB), false, 'nothing copied into A')
  assert.equal((await withAdmin(b, admin => admin.listTopics())).includes(`A.${onA}`), false)
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
})
