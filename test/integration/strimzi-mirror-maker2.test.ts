import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test('mirror-sidecar --strimzi mirrors a topic between the local clusters as a KafkaMirrorMaker2 resource describes it', { timeout: 180_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('strimzi'), partitions: 2 })
  const skipped = await createTopic(t, source, { name: `${topic}-tmp` })
  t.after(() => deleteTopicIfExists(target, topic))
  t.after(() => deleteTopicIfExists(target, skipped))
  const groupId = uniqueName('strimzi')
  await produce(source, topic, Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}`, headers: { h: `${i}` } })))
  await produce(source, skipped, [{ value: 'not copied' }])
  const path = join(mkdtempSync(join(tmpdir(), 'kmm2-')), 'kmm2.yaml')
  writeFileSync(path, `apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata:
  name: local
spec:
  version: 4.1.0
  replicas: 1
  target:
    alias: tgt
    bootstrapServers: ${target.bootstrap}
    groupId: local-mm2
    configStorageTopic: local-mm2-configs
    offsetStorageTopic: local-mm2-offsets
    statusStorageTopic: local-mm2-status
  mirrors:
    - source:
        alias: src
        bootstrapServers: ${source.bootstrap}
      topicsPattern: "${topic}.*"
      topicsExcludePattern: ".*-tmp"
      sourceConnector:
        tasksMax: 1
        config:
          replication.policy.class: org.apache.kafka.connect.mirror.IdentityReplicationPolicy
          replication.factor: 1
          refresh.topics.interval.seconds: 1
          offset.flush.interval.ms: 500
          consumer.group.id: ${groupId}
`)
  const sidecar = spawnSidecarArgs(t, ['--strimzi', path, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
  await waitMirroring(sidecar)
  await waitUntil(async () => (await readAll(target, topic).catch(() => [])).length === 20, { timeoutMs: 60_000, message: 'the 20 records on the target' })
  const view = (records: Awaited<ReturnType<typeof readAll>>): string[] =>
    records.map(r => `${r.partition}/${r.offset} ${String(r.key)}=${String(r.value)} h=${String(r.headers.h)} t=${r.timestamp}`)
  assert.deepEqual(view(await readAll(target, topic)), view(await readAll(source, topic)))
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  assert.deepEqual(
    await committedOffsets(source, groupId, topic),
    new Map([
      [0, 10n],
      [1, 10n],
    ]),
    'the source group committed everything the target acknowledged'
  )
  assert.match(sidecar.stderr(), /"msg":"mirroring","flow":"src->tgt"/)
  assert.match(sidecar.stderr(), /configuration keys ignored.*spec\.replicas/)
  assert.equal((await readAll(target, skipped).catch(() => [])).length, 0, 'topicsExcludePattern is honoured')
})
