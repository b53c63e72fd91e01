import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { committedOffsets, createTopic, endOffsets, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { mm2File } from '../helpers/mm2-file.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)

/** Values of `topic` as a read_committed consumer (kcat) sees them. */
async function committedValues (cluster: LocalCluster, topic: string): Promise<string[]> {
  const { stdout } = await execFileAsync(
    'kcat',
    ['-C', '-b', cluster.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%s\n'],
    { maxBuffer: 64 * 1024 * 1024 }
  )
  return stdout.split('\n').filter(line => line !== '')
}

async function caughtUp (cluster: LocalCluster, group: string, topic: string): Promise<boolean> {
  const [ends, committed] = await Promise.all([endOffsets(cluster, topic), committedOffsets(cluster, group, topic)])
  return [...ends].every(([partition, end]) => committed.get(partition) === end)
}

test(
  'exactly-once active-active over the same topic name (Identity policy both ways): both flows write in transactions, every record reaches the other cluster once (read_committed) and nothing loops',
  { timeout: 240_000 },
  async t => {
    const { source: a, target: b } = await sharedClusters()
    const p = uniqueName('eosaa').replace(/-/g, '')
    const topic = `${p}-orders`
    await createTopic(t, a, { name: topic, partitions: 3 })
    await createTopic(t, b, { name: topic, partitions: 3 })
    await produce(
      a,
      topic,
      Array.from({ length: 90 }, (_, i) => ({ partition: i % 3, key: `a${i}`, value: `from-a-${i}` }))
    )
    await produce(
      b,
      topic,
      Array.from({ length: 60 }, (_, i) => ({ partition: i % 3, key: `b${i}`, value: `from-b-${i}` }))
    )
    const groups = { A: uniqueName('eosaa-from-a'), B: uniqueName('eosaa-from-b') }
    const path = mm2File({
      clusters: 'A, B',
      'A.bootstrap.servers': a.bootstrap,
      'B.bootstrap.servers': b.bootstrap,
      'A->B.enabled': 'true',
      'B->A.enabled': 'true',
      topics: topic,
      'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
      'A->B.consumer.group.id': groups.A,
      'B->A.consumer.group.id': groups.B,
      // MirrorMaker 2's own key, per target cluster: both flows exactly once.
      'A.exactly.once.source.support': 'enabled',
      'B.exactly.once.source.support': 'enabled',
      'refresh.topics.interval.seconds': '1',
      'offset.flush.interval.ms': '300',
      'replication.factor': '1',
    })
    const sidecar = spawnSidecarArgs(t, [path, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
    await waitMirroring(sidecar)
    // More records on both sides while both flows run, some of them compressed and from a transactional producer.
    const late = createKafkaClient(b.connection('eosaa-late')).producer({ idempotent: true, maxInFlightRequests: 1, transactionalId: uniqueName('eosaa-late') })
    await late.connect()
    const tx = await late.transaction()
    await tx.send({
      topic,
      acks: -1,
      compression: kafkajs.CompressionTypes.GZIP,
      messages: Array.from({ length: 30 }, (_, i) => ({ partition: i % 3, key: `late${i}`, value: `late-from-b-${i}` })),
    })
    await tx.commit()
    await late.disconnect()
    await produce(a, topic, [{ partition: 0, key: 'a-late', value: 'late-from-a' }])

    const expected = [
      ...Array.from({ length: 90 }, (_, i) => `from-a-${i}`),
      ...Array.from({ length: 60 }, (_, i) => `from-b-${i}`),
      ...Array.from({ length: 30 }, (_, i) => `late-from-b-${i}`),
      'late-from-a',
    ].sort()
    // Settled: both flows committed their source's end (a loop would keep moving it) and both clusters hold every record.
    await waitUntil(
      async () => {
        if (!(await caughtUp(a, groups.A, topic)) || !(await caughtUp(b, groups.B, topic))) return false
        const [onA, onB] = await Promise.all([committedValues(a, topic), committedValues(b, topic)])
        return onA.length >= expected.length && onB.length >= expected.length
      },
      { timeoutMs: 120_000, intervalMs: 500, message: 'both clusters to hold every record and both flows to be caught up' }
    )
    for (const [name, cluster] of [
      ['A', a],
      ['B', b],
    ] as const) {
      assert.deepEqual((await committedValues(cluster, topic)).sort(), expected, `${name}: every record once, read_committed, and no copy of a copy`)
    }
    const metrics = await scrape(await sidecarHttpPort(sidecar))
    // Each flow skipped what the other one wrote into its source: the 91 records from A on B, the 90 from B on A.
    assert.equal(sampleSum(metrics, 'kafka_mirror_opposite_mirror_skipped_records_total'), 91 + 90)
    assert.match(metrics, /kafka_mirror_transactions_total\{flow="A->B"[^}]*result="committed"[^}]*\} [1-9]/)
    assert.match(metrics, /kafka_mirror_transactions_total\{flow="B->A"[^}]*result="committed"[^}]*\} [1-9]/)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
