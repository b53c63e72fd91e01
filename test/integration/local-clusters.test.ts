import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, produce, readAll, sharedClusters, withAdmin } from '../helpers/kafka.js'

test('both local clusters round-trip keys, headers, null values and timestamps', { timeout: 120_000 }, async t => {
  const clusters = await sharedClusters()
  for (const cluster of [clusters.source, clusters.target]) {
    const topic = await createTopic(t, cluster, { partitions: 2 })
    const metadata = await withAdmin(cluster, admin => admin.fetchTopicMetadata({ topics: [topic] }))
    assert.equal(metadata.topics[0]?.partitions.length, 2)

    await produce(cluster, topic, [
      { partition: 0, key: 'k0', value: 'v0', timestamp: '1700000000000', headers: { h: 'one', bin: Buffer.from([0, 255]) } },
      { partition: 1, key: null, value: null, timestamp: '1700000000001' },
      { partition: 1, key: Buffer.from([1, 2, 3]), value: '', timestamp: '1700000000002', headers: { h: ['a', 'b'] } },
    ])
    const records = await readAll(cluster, topic)
    assert.deepEqual(
      records.map(r => ({
        partition: r.partition,
        offset: r.offset,
        key: r.key?.toString('hex') ?? null,
        value: r.value?.toString() ?? null,
        timestamp: r.timestamp,
        headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : v?.toString('hex')])),
      })),
      [
        {
          partition: 0,
          offset: '0',
          key: Buffer.from('k0').toString('hex'),
          value: 'v0',
          timestamp: '1700000000000',
          headers: { h: Buffer.from('one').toString('hex'), bin: '00ff' },
        },
        { partition: 1, offset: '0', key: null, value: null, timestamp: '1700000000001', headers: {} },
        { partition: 1, offset: '1', key: '010203', value: '', timestamp: '1700000000002', headers: { h: ['a', 'b'] } },
      ],
      `records read back from ${cluster.options.name}`
    )
  }
})
