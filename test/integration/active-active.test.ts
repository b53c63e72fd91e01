import assert from 'node:assert/strict'
import { test } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { committedOffsets, createTopic, endOffsets, produce, readAll, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'
import { mm2File } from '../helpers/mm2-file.js'

test(
  'active-active over the same topic name (Identity policy both ways): every record reaches the other cluster once and nothing loops, forwarded and decoded alike',
  { timeout: 240_000 },
  async t => {
    const { source: a, target: b } = await sharedClusters()
    const p = uniqueName('aa').replace(/-/g, '')
    const topic = `${p}-orders`
    await createTopic(t, a, { name: topic, partitions: 2 })
    await createTopic(t, b, { name: topic, partitions: 2 })
    // Producers on both sides, before and after the mirror starts; some batches compressed.
    await produce(
      a,
      topic,
      Array.from({ length: 60 }, (_, i) => ({ partition: i % 2, key: `a${i}`, value: `from-a-${i}` }))
    )
    await produce(
      b,
      topic,
      Array.from({ length: 40 }, (_, i) => ({ partition: i % 2, key: `b${i}`, value: `from-b-${i}` }))
    )
    const groups = { A: uniqueName('aa-from-a'), B: uniqueName('aa-from-b') }
    const config = mm2File({
      clusters: 'A, B',
      'A.bootstrap.servers': a.bootstrap,
      'B.bootstrap.servers': b.bootstrap,
      'A->B.enabled': 'true',
      'B->A.enabled': 'true',
      topics: topic,
      'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
      'A->B.consumer.group.id': groups.A,
      'B->A.consumer.group.id': groups.B,
      'refresh.topics.interval.seconds': '1',
      'offset.flush.interval.ms': '300',
      'replication.factor': '1',
    })
    const sidecar = spawnSidecarArgs(t, [config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
    await waitMirroring(sidecar)
    const { CompressionTypes } = kafkajs
    const producer = (await import('../../src/kafka/client.js'))
      .createKafkaClient(b.connection('aa-late'))
      .producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    await producer.send({
      topic,
      acks: -1,
      compression: CompressionTypes.GZIP,
      messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `late${i}`, value: `late-from-b-${i}` })),
    })
    await producer.disconnect()
    await produce(a, topic, [{ partition: 0, key: 'a-late', value: 'late-from-a' }])
    const expected = 60 + 40 + 20 + 1
    // Settled: both clusters hold every record and both flows committed their source's end: a loop would keep the end moving.
    await waitUntil(
      async () => {
        const [onA, onB] = await Promise.all([totalRecords(a, topic), totalRecords(b, topic)])
        if (onA !== BigInt(expected) || onB !== BigInt(expected)) return false
        const [endA, endB, doneA, doneB] = await Promise.all([
          endOffsets(a, topic),
          endOffsets(b, topic),
          committedOffsets(a, groups.A, topic),
          committedOffsets(b, groups.B, topic),
        ])
        return [...endA].every(([partition, end]) => doneA.get(partition) === end) && [...endB].every(([partition, end]) => doneB.get(partition) === end)
      },
      { timeoutMs: 90_000, intervalMs: 500, message: 'both clusters to hold every record once and both flows to be caught up' }
    )
    for (const cluster of [a, b]) {
      const values = (await readAll(cluster, topic)).map(r => r.value?.toString()).sort()
      assert.equal(values.length, expected)
      assert.equal(new Set(values).size, expected, 'each record once on each cluster')
    }
    assert.equal(await totalRecords(a, topic), BigInt(expected), 'still no copy of a copy')
    // Each flow skipped what the other one wrote into its source: the 61 records from A on B, the 60 from B on A.
    const port = await sidecarHttpPort(sidecar)
    assert.equal(sampleSum(await scrape(port), 'kafka_mirror_opposite_mirror_skipped_records_total'), 61 + 60)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
