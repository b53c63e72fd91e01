import assert from 'node:assert/strict'
import { test } from 'node:test'
import { GroupAdmin } from '../../src/kafka/group-admin.js'
import { silentLogger } from '../../src/shared/logger.js'
import { createTopic, produce, sharedClusters, withAdmin } from '../helpers/kafka.js'

const plain = (offsets: Map<string, Map<number, { logStartOffset: bigint, highWatermark: bigint }>>): Record<string, Array<[number, string, string]>> =>
  Object.fromEntries(
    [...offsets].map(([topic, partitions]) => [
      topic,
      [...partitions].sort((a, b) => a[0] - b[0]).map(([p, o]) => [p, String(o.logStartOffset), String(o.highWatermark)]),
    ])
  )

test(
  'log offsets of many topics in one read: log start and high watermark per partition, a topic created later and records written later are seen, also when the same topics are asked for again',
  { timeout: 60_000 },
  async t => {
    const { source } = await sharedClusters()
    const first = await createTopic(t, source, { partitions: 3 })
    const second = await createTopic(t, source, { partitions: 2 })
    await produce(
      source,
      first,
      [0, 0, 0, 1, 2, 2].map((partition, i) => ({ partition, key: `k${i}`, value: 'v' }))
    )
    await produce(source, second, [{ partition: 1, key: 'a', value: 'v' }])
    // The log start moves past the first two records of partition 0.
    await withAdmin(source, async admin => {
      await admin.fetchTopicMetadata({ topics: [first] }) // kafkajs' deleteTopicRecords needs the topic's metadata loaded
      await admin.deleteTopicRecords({ topic: first, partitions: [{ partition: 0, offset: '2' }] })
    })

    const admin = new GroupAdmin(source.connection('test-log-offsets'), silentLogger)
    await admin.start()
    t.after(() => admin.stop())

    assert.deepEqual(plain(await admin.logOffsetsOf([first, second])), {
      [first]: [
        [0, '2', '3'],
        [1, '0', '1'],
        [2, '0', '2'],
      ],
      [second]: [
        [0, '0', '0'],
        [1, '0', '1'],
      ],
    })
    // One topic at a time gives the same; a topic made after the leaders were cached is asked for anew.
    assert.deepEqual(plain(new Map([[first, await admin.logOffsets(first)]])), {
      [first]: [
        [0, '2', '3'],
        [1, '0', '1'],
        [2, '0', '2'],
      ],
    })
    const third = await createTopic(t, source, { partitions: 1 })
    await produce(source, third, [
      { partition: 0, key: 'x', value: 'v' },
      { partition: 0, key: 'y', value: 'v' },
    ])
    await produce(source, second, [{ partition: 0, key: 'b', value: 'v' }])
    assert.deepEqual(plain(await admin.logOffsetsOf([second, third])), {
      [second]: [
        [0, '0', '1'],
        [1, '0', '1'],
      ],
      [third]: [[0, '0', '2']],
    })
    assert.ok((await admin.topicNames()).has(third))
    // The same topics read again go out as the same requests (built and encoded once): the answers still move with the logs.
    const expectedSecond = [
      [0, '0', '1'],
      [1, '0', '1'],
    ]
    assert.deepEqual(plain(await admin.logOffsetsOf([second, third])), { [second]: expectedSecond, [third]: [[0, '0', '2']] })
    await produce(source, third, [{ partition: 0, key: 'z', value: 'v' }])
    await withAdmin(source, async other => {
      await other.fetchTopicMetadata({ topics: [third] })
      await other.deleteTopicRecords({ topic: third, partitions: [{ partition: 0, offset: '1' }] })
    })
    assert.deepEqual(plain(await admin.logOffsetsOf([second, third])), { [second]: expectedSecond, [third]: [[0, '1', '3']] })
  }
)

test(
  'the high watermark counts the records of a transaction still open, and partitions added to a topic are listed once the leaders are read again',
  { timeout: 60_000 },
  async t => {
    const { source } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 1 })
    const admin = new GroupAdmin(source.connection('test-log-offsets-open'), silentLogger)
    await admin.start()
    t.after(() => admin.stop())
    assert.deepEqual(plain(await admin.logOffsetsOf([topic])), { [topic]: [[0, '0', '0']] })

    const { createKafkaClient } = await import('../../src/kafka/client.js')
    const producer = createKafkaClient(source.connection('test-open-transaction')).producer({
      transactionalId: `${topic}-tx`,
      idempotent: true,
      maxInFlightRequests: 1,
    })
    await producer.connect()
    t.after(() => producer.disconnect())
    const transaction = await producer.transaction()
    await transaction.send({
      topic,
      acks: -1,
      messages: [
        { partition: 0, key: 'a', value: 'v' },
        { partition: 0, key: 'b', value: 'v' },
      ],
    })
    // The last stable offset stays at 0 while the transaction is open; the high watermark is past its records.
    assert.deepEqual(plain(await admin.logOffsetsOf([topic])), { [topic]: [[0, '0', '2']] })
    await transaction.abort()

    await withAdmin(source, async other => {
      await other.createPartitions({ topicPartitions: [{ topic, count: 2 }] })
    })
    assert.deepEqual(
      plain(await admin.logOffsetsOf([topic])),
      { [topic]: [[0, '0', '3']] },
      'the leaders kept do not list the new partition (the abort marker is offset 2)'
    )
    admin.forgetLeaders()
    assert.deepEqual(plain(await admin.logOffsetsOf([topic])), {
      [topic]: [
        [0, '0', '3'],
        [1, '0', '0'],
      ],
    })
  }
)
