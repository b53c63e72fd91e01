import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { Consumer } from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, type FetchSessionCounts, type FetchSessions } from '../../src/kafka/fetch-session.js'
import { createInternalCluster, fetchSessionsOption } from '../../src/kafka/kafkajs-internals.js'
import { createTopic, produce, sharedClusters, startExtraCluster, uniqueName } from '../helpers/kafka.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 4

/**
 * A kafkajs consumer of `topic` with fetch sessions (fetches held 50 ms, so idle fetches come
 * quickly); every key it receives, and the counts of all its sessions.
 */
async function sessionConsumer (
  t: TestContext,
  cluster: LocalCluster,
  topic: string
): Promise<{ consumer: Consumer, keys: string[], counts: () => FetchSessionCounts }> {
  const sessions: FetchSessions[] = []
  const consumer = createKafkaClient(cluster.connection('test-fetch-sessions')).consumer({
    groupId: uniqueName('fetch-sessions'),
    maxWaitTimeInMs: 50,
    retry: { retries: 20, initialRetryTime: 200, maxRetryTime: 2_000 },
    ...fetchSessionsOption(created => sessions.push(created)),
  })
  t.after(() => consumer.disconnect())
  const keys: string[] = []
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ message }) => {
      keys.push(message.key?.toString() ?? '')
    },
  })
  const counts = (): FetchSessionCounts => {
    const sum: FetchSessionCounts = { full: 0, incremental: 0, resets: 0, sessionless: 0 }
    for (const { counts } of sessions) for (const name of Object.keys(sum) as Array<keyof FetchSessionCounts>) sum[name] += counts[name]
    return sum
  }
  return { consumer, keys, counts }
}

const messages = (prefix: string, count: number): Array<{ partition: number, key: string, value: string }> =>
  Array.from({ length: count }, (_, i) => ({ partition: i % PARTITIONS, key: `${prefix}${i}`, value: 'v' }))

test(
  'fetch sessions against a real broker: idle fetches are incremental, records still arrive on every partition, a paused partition is forgotten and picked up again',
  { timeout: 120_000 },
  async t => {
    const { source } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    await produce(source, topic, messages('a', 8))
    const { consumer, keys, counts } = await sessionConsumer(t, source, topic)
    await waitUntil(() => keys.length >= 8, { timeoutMs: 60_000, message: 'the first 8 records' })
    // Idle: the broker holds the partitions; each request names none of them.
    const before = counts().incremental
    await waitUntil(() => counts().incremental >= before + 40, { timeoutMs: 30_000, message: '40 idle incremental fetches' })
    await produce(source, topic, messages('b', 8))
    await waitUntil(() => keys.length >= 16, { timeoutMs: 30_000, message: 'records produced after 40 idle fetches' })

    // Pausing drops the partition from the session (forgotten); resuming adds it back at its fetch offset.
    consumer.pause([{ topic, partitions: [0] }])
    const paused = counts().incremental
    await waitUntil(() => counts().incremental >= paused + 5, { timeoutMs: 30_000, message: 'fetches while paused' })
    await produce(source, topic, messages('c', 8))
    await waitUntil(() => keys.filter(k => k.startsWith('c')).length >= 6, { timeoutMs: 30_000, message: 'records of the unpaused partitions' })
    assert.equal(keys.filter(k => k.startsWith('c')).length, 6, 'nothing of the paused partition 0 yet')
    consumer.resume([{ topic, partitions: [0] }])
    await waitUntil(() => keys.length >= 24, { timeoutMs: 30_000, message: "the paused partition's records after resume" })

    assert.deepEqual([...keys].sort(), [...messages('a', 8), ...messages('b', 8), ...messages('c', 8)].map(m => m.key).sort(), 'every record once')
    const final = counts()
    t.diagnostic(`fetches: ${JSON.stringify(final)}`)
    assert.equal(final.resets, 0, 'no session error on a healthy broker')
    assert.ok(final.incremental > 10 * final.full, `mostly incremental fetches: ${JSON.stringify(final)}`)
  }
)

test(
  "a seek back on a caught-up consumer in a fetch session is honoured: the partition's records come again from the offset sought",
  { timeout: 120_000 },
  async t => {
    const { source } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    await produce(source, topic, messages('a', 16))
    const { consumer, keys, counts } = await sessionConsumer(t, source, topic)
    await waitUntil(() => keys.length >= 16, { timeoutMs: 60_000, message: 'the first 16 records' })
    const before = counts().incremental
    await waitUntil(() => counts().incremental >= before + 10, { timeoutMs: 30_000, message: '10 idle incremental fetches' })
    // Partition 1 holds a1, a5, a9, a13 at offsets 0..3: back to offset 1.
    consumer.seek({ topic, partition: 1, offset: '1' })
    await waitUntil(() => keys.length >= 19, { timeoutMs: 30_000, message: 'the records of partition 1 from offset 1 again' })
    await produce(source, topic, messages('b', 8))
    await waitUntil(() => keys.length >= 27, { timeoutMs: 30_000, message: 'records produced after the seek' })
    assert.deepEqual(keys.slice(16, 19), ['a5', 'a9', 'a13'], 'partition 1 from offset 1, in order')
    assert.deepEqual(
      [...keys.slice(19)].sort(),
      messages('b', 8)
        .map(m => m.key)
        .sort(),
      'then every new record once'
    )
    assert.equal(counts().resets, 0)
  }
)

test(
  'the broker answers an unknown session with FETCH_SESSION_ID_NOT_FOUND and a wrong epoch with INVALID_FETCH_SESSION_EPOCH, as the session bookkeeping expects',
  { timeout: 60_000 },
  async t => {
    const { source } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 1 })
    const cluster = createInternalCluster(createKafkaClient(source.connection('test-fetch-session-errors')))
    await cluster.connect()
    t.after(() => cluster.disconnect())
    await cluster.addMultipleTargetTopics([topic])
    const [nodeId] = Object.keys(cluster.findLeaderForPartitions(topic, [0]))
    const broker = await cluster.findBroker({ nodeId: nodeId! })
    type Answer = { errorCode: number, sessionId: number }
    const fetch = async (sessionId: number, sessionEpoch: number): Promise<Answer> =>
      (await broker.fetch({
        maxWaitTime: 10,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 1,
        sessionId,
        sessionEpoch,
        forgottenTopics: [],
        topics: [{ topic, partitions: [{ partition: 0, fetchOffset: '0', maxBytes: 1 << 20 }] }],
      })) as unknown as Answer
    const opened = await fetch(0, 0)
    assert.equal(opened.errorCode, 0)
    assert.ok(opened.sessionId > 0, 'a full request with epoch 0 opens a session')
    assert.equal((await fetch(opened.sessionId, 1)).errorCode, 0)
    assert.equal((await fetch(opened.sessionId, 5)).errorCode, INVALID_FETCH_SESSION_EPOCH)
    assert.equal((await fetch(opened.sessionId === 1 ? 2 : 1, 1)).errorCode, FETCH_SESSION_ID_NOT_FOUND)
  }
)

test('a broker restart loses the sessions: the consumer goes back to a full fetch and gets the records produced after it', { timeout: 240_000 }, async t => {
  const cluster = await startExtraCluster(t, 'fetch-sessions')
  const topic = uniqueName('sessions-restart')
  const admin = createKafkaClient(cluster.connection('test-admin')).admin()
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }] })
  await admin.disconnect()
  await produce(cluster, topic, messages('a', 8))
  const { consumer, keys, counts } = await sessionConsumer(t, cluster, topic)
  await waitUntil(() => keys.length >= 8 && counts().incremental >= 20, { timeoutMs: 60_000, message: 'the first records and 20 incremental fetches' })
  const beforeRestart = counts()
  await cluster.pause()
  await cluster.resume()
  await produce(cluster, topic, messages('b', 8))
  await waitUntil(() => keys.length >= 16, { timeoutMs: 120_000, message: 'records produced after the restart' })
  const after = counts()
  await waitUntil(() => counts().incremental >= after.incremental + 20, { timeoutMs: 30_000, message: 'incremental fetches in the new session' })
  const final = counts()
  t.diagnostic(`before the restart ${JSON.stringify(beforeRestart)}, at the end ${JSON.stringify(final)}`)
  assert.ok(final.full > beforeRestart.full, 'a full fetch after the restart (a new session)')
  // The group coordinator restarted too, so kafkajs may hand over again what it had not committed yet: every record at least once.
  assert.deepEqual([...new Set(keys)].sort(), [...messages('a', 8), ...messages('b', 8)].map(m => m.key).sort(), 'every record')
  // Here, not in an after hook: those run in registration order, so the extra cluster (registered
  // first) would be gone, and leaving the group would hang the file.
  await consumer.disconnect()
})
