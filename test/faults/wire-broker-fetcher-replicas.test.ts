import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NodeCluster } from '../../scripts/local-kafka/clusters.js'
import { FetchRecorder, startFetcher } from '../helpers/fetch-recorder.js'
import { endOffsets, produce, uniqueName } from '../helpers/kafka.js'
import { faultRacksBasePort } from './fault-clusters.js'

/** Three nodes, one rack each, replicas chosen for a consumer's rack (KIP-392). */
const cluster = new NodeCluster({
  name: 'wire-fetch-racks',
  basePort: faultRacksBasePort(),
  nodes: 3,
  nodeProperties: { 1: { 'broker.rack': 'rack-1' }, 2: { 'broker.rack': 'rack-2' }, 3: { 'broker.rack': 'rack-3' } },
  brokerProperties: { 'replica.selector.class': 'org.apache.kafka.common.replica.RackAwareReplicaSelector' },
})

async function topicLedByNode1 (): Promise<string> {
  const topic = uniqueName('wire-fetch-replicas')
  const topics = [{ topic, replicaAssignment: [{ partition: 0, replicas: [1, 2, 3] }] }]
  await cluster.withAdmin(admin => admin.createTopics({ waitForLeaders: true, topics }))
  await cluster.waitUntilIsrFull([topic])
  return topic
}

async function produceRounds (topic: string, rounds: number, from: number): Promise<void> {
  for (let round = from; round < from + rounds; round++) {
    await produce(cluster, topic, Array.from({ length: 5 }, (_, i) => ({ partition: 0, value: `round ${round} record ${i}` })))
  }
}

test('on 3 nodes with racks', { timeout: 300_000 }, async t => {
  await cluster.start()
  t.after(() => cluster.stop())

  await t.test('KIP-392: a fetcher with client.rack of a follower\'s rack reads from that follower', async t => {
    const topic = await topicLedByNode1()
    await produceRounds(topic, 4, 0)
    await cluster.waitUntilIsrFull([topic])
    const end = (await endOffsets(cluster, topic)).get(0)!
    const recorder = new FetchRecorder()
    const fetcher = startFetcher(t, cluster.bootstrap, recorder, { rack: 'rack-2' })
    fetcher.assign(topic, 0, 0n)
    await fetcher.start()
    await recorder.until(() => recorder.positions.get(`${topic}-0`) === end, 'the partition read to its end')
    const nodes = new Set((recorder.batches.get(`${topic}-0`) ?? []).map(batch => batch.node))
    assert.deepEqual([...nodes], [2], 'every batch came from node 2, the follower in rack-2')
    assert.ok((fetcher.counts.requestsByNode.get(2) ?? 0) > 0 && (fetcher.counts.requestsByNode.get(1) ?? 0) > 0, 'asked the leader first, then the follower')
    assert.equal(recorder.recordCount(topic, 0), end)
    fetcher.checkInvariants()
  })

  await t.test('the leader moved mid-read (KIP-320 epochs, metadata refreshed): nothing lost, nothing repeated', async t => {
    const topic = await topicLedByNode1()
    await produceRounds(topic, 4, 0)
    const recorder = new FetchRecorder()
    const fetcher = startFetcher(t, cluster.bootstrap, recorder, { partitionMaxBytes: 200 })
    fetcher.assign(topic, 0, 0n)
    await fetcher.start()
    await recorder.until(() => (recorder.batches.get(`${topic}-0`)?.length ?? 0) >= 1, 'the first batch')
    const moves = await cluster.moveLeaders(topic)
    assert.ok(moves.every(move => move.after !== move.before && move.after >= 0), JSON.stringify(moves))
    await produceRounds(topic, 4, 4)
    const end = (await endOffsets(cluster, topic)).get(0)!
    await recorder.until(() => recorder.positions.get(`${topic}-0`) === end, 'the partition read to its end')
    // The recorder checked that the batches follow each other without gap or overlap.
    assert.equal(recorder.recordCount(topic, 0), end)
    const nodes = new Set((recorder.batches.get(`${topic}-0`) ?? []).map(batch => batch.node))
    assert.ok(nodes.has(moves[0]!.after), `read from the new leader ${moves[0]!.after} too: ${[...nodes].join(', ')}`)
    fetcher.checkInvariants()
  })
})
