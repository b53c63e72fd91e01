import assert from 'node:assert/strict'
import { test } from 'node:test'
import { uniqueName } from '../helpers/kafka.js'
import { waitUntil } from '../helpers/wait.js'
import { wholeFaultClusters } from './fault-clusters.js'

test(
  'a 3-node cluster: RF 3 by default, a frozen node fenced and thawed back in sync, leaders moved by reassignment and preferred-leader election, a node killed and started again',
  { timeout: 300_000 },
  async t => {
    const { source: cluster } = await wholeFaultClusters()
    const topic = uniqueName('node-cluster')
    await cluster.withAdmin(admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6 }] }))
    t.after(() => cluster.withAdmin(admin => admin.deleteTopics({ topics: [topic] })))
    const partitions = async (): Promise<Array<{ partitionId: number, leader: number, replicas: number[], isr: number[] }>> =>
      (await cluster.withAdmin(admin => admin.fetchTopicMetadata({ topics: [topic] }))).topics[0]?.partitions ?? []
    assert.deepEqual(
      (await partitions()).map(p => p.replicas.length),
      [3, 3, 3, 3, 3, 3],
      'default.replication.factor=3'
    )
    const counts = await cluster.leaderCounts(topic)
    assert.deepEqual([...counts.keys()].sort(), [1, 2, 3])
    assert.equal(
      [...counts.values()].reduce((a, b) => a + b, 0),
      6
    )
    const most = await cluster.nodeLeadingMost(topic)
    assert.equal(counts.get(most.nodeId), Math.max(...counts.values()))

    const frozen = cluster.node(2)
    await frozen.freeze()
    t.after(() => frozen.thaw())
    assert.equal((await frozen.status()).frozen, true)
    // Fenced once its broker session times out (broker.session.timeout.ms, 9 s): its leaderships move.
    await waitUntil(async () => ((await cluster.leaderCounts(topic)).get(2) ?? 0) === 0, {
      timeoutMs: 60_000,
      message: "the frozen node's leaderships to move",
    })
    await frozen.thaw()
    assert.equal((await frozen.status()).frozen, false)
    await cluster.waitUntilIsrFull([topic])

    const moves = await cluster.moveLeaders(topic)
    assert.equal(moves.length, 6)
    assert.ok(
      moves.every(m => m.after >= 0 && m.after !== m.before),
      `every leader moved: ${JSON.stringify(moves)}`
    )
    assert.ok(
      (await partitions()).every(p => p.leader === p.replicas[0]),
      'each partition led by its preferred replica'
    )

    const killed = await cluster.nodeLeadingMost(topic)
    await killed.kill()
    assert.equal(await killed.pid(), undefined)
    await waitUntil(async () => ((await cluster.leaderCounts(topic)).get(killed.nodeId) ?? 0) === 0, {
      timeoutMs: 60_000,
      message: "the killed node's leaderships to move",
    })
    await cluster.startNode(killed.nodeId)
    await cluster.waitUntilIsrFull()
    assert.ok((await partitions()).every(p => p.isr.length === 3))
  }
)
