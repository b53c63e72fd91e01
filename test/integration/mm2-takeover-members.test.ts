import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createKafkaClient } from '../../src/kafka/client.js'
import { readKeys } from '../faults/kcat-reader.js'
import { committedOffsets, createTopic, produce, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { mm2File } from '../helpers/mm2-file.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 2
/** Records per partition on the source (offsets 0 to 99). */
const PER_PARTITION = 100
/** MirrorMaker 2's stored position of each partition: the next offset it would copy. */
const MM2_NEXT = 60n
/** What the other member of the group commits for partition 0 after the sidecar read its plan. */
const SIBLING_OFFSET = 80n

test(
  "with another member in the group, partitions without an offset start from MirrorMaker 2's position inside the group's generation, and one a sibling committed after the plan was read keeps that offset (no group offset goes back)",
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const id = uniqueName('').replace(/-/g, '')
    const [sourceAlias, targetAlias] = [`src${id}`, `dst${id}`]
    t.after(async () => {
      for (const cluster of [source, target]) {
        await withAdmin(cluster, async admin => {
          const own = (await admin.listTopics()).filter(name => name.includes(id))
          if (own.length > 0) await admin.deleteTopics({ topics: own })
        })
      }
    })
    const topic = await createTopic(t, source, { name: `takeover-members-${id}`, partitions: PARTITIONS })
    // Record i is key k<i> in partition i % 2: offset o of partition p holds k<2o + p>.
    await produce(source, topic, Array.from({ length: PARTITIONS * PER_PARTITION }, (_, i) => ({ partition: i % PARTITIONS, key: `k${i}`, value: `v${i}` })))
    // MirrorMaker 2's positions as Connect stores them (the last offset copied), in its offsets topic on the target.
    const offsetsTopic = await createTopic(t, target, { name: `mm2-offsets.${sourceAlias}.internal` })
    await produce(target, offsetsTopic, Array.from({ length: PARTITIONS }, (_, partition) => ({
      key: JSON.stringify(['MirrorSourceConnector', { cluster: sourceAlias, partition, topic }]),
      value: JSON.stringify({ offset: Number(MM2_NEXT) - 1 }),
    })))

    // Another process of the flow: a member that owns every partition and commits nothing yet. Its heartbeat is slow, so
    // it hears of the sidecar's join only late: its generation still takes its commit when the sidecar has joined.
    const groupId = uniqueName('takeover-members')
    const sibling = createKafkaClient(source.connection('takeover-sibling')).consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval: 10_000 })
    t.after(() => sibling.disconnect())
    let joined = false
    sibling.on(sibling.events.GROUP_JOIN, () => {
      sibling.pause([{ topic }])
      joined = true
    })
    await sibling.connect()
    await sibling.subscribe({ topics: [topic] })
    await sibling.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => { /* paused at once: it copies nothing */ } })
    await waitUntil(() => joined, { message: 'the other member to join the group' })

    const config = mm2File({
      clusters: `${sourceAlias}, ${targetAlias}`,
      [`${sourceAlias}.bootstrap.servers`]: source.bootstrap,
      [`${targetAlias}.bootstrap.servers`]: target.bootstrap,
      [`${sourceAlias}->${targetAlias}.enabled`]: 'true',
      [`${sourceAlias}->${targetAlias}.topics`]: topic,
      [`${sourceAlias}->${targetAlias}.consumer.group.id`]: groupId,
      'replication.factor': '1',
      'refresh.topics.interval.seconds': '1',
      'offset.flush.interval.ms': '500',
    })
    const sidecar = spawnSidecarArgs(t, [config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
    // The plan is read (both partitions from MirrorMaker 2's position) and the group has a member: nothing committed from outside.
    await waitUntil(() => sidecar.child.exitCode !== null || sidecar.stderr().includes('"msg":"the group has members'), {
      timeoutMs: 60_000,
      message: 'the sidecar to read its plan',
    })
    assert.equal(sidecar.child.exitCode, null, sidecar.stderr().slice(-3000))
    // The sibling copied partition 0 up to 80, commits it in its generation, and stops; partition 1 it leaves uncommitted.
    await sibling.commitOffsets([{ topic, partition: 0, offset: SIBLING_OFFSET.toString() }])
    await sibling.disconnect()
    await waitMirroring(sidecar)

    const targetTopic = `${sourceAlias}.${topic}`
    const expected = [[0, SIBLING_OFFSET], [1, MM2_NEXT]] as const
    const lowest = new Map<number, bigint>()
    await waitUntil(
      async () => {
        const committed = await committedOffsets(source, groupId, topic)
        for (const [partition, offset] of committed) {
          const seen = lowest.get(partition)
          if (seen === undefined || offset < seen) lowest.set(partition, offset)
        }
        return expected.every(([partition]) => committed.get(partition) === BigInt(PER_PARTITION))
      },
      { timeoutMs: 60_000, message: 'the sidecar to copy and commit both partitions to their end' }
    )
    const copied = await totalRecords(target, targetTopic)
    const keys = await readKeys(target, targetTopic)
    for (const [partition, from] of expected) {
      const want = Array.from({ length: PER_PARTITION - Number(from) }, (_, i) => `k${2 * (Number(from) + i) + partition}`)
      const got = keys.filter(k => k.partition === partition).map(k => k.key)
      assert.deepEqual(got, want, `partition ${partition}: offsets ${from} to ${PER_PARTITION - 1}, once, in order`)
    }
    t.diagnostic(`copied ${copied} records; the group's lowest offsets seen: ${JSON.stringify(Object.fromEntries([...lowest].map(([p, o]) => [p, String(o)])))}`)
    assert.ok((lowest.get(0) ?? 0n) >= SIBLING_OFFSET, `partition 0's group offset never went below the sibling's ${SIBLING_OFFSET}`)
    assert.ok((lowest.get(1) ?? 0n) >= MM2_NEXT, `partition 1's group offset never went below MirrorMaker 2's position ${MM2_NEXT}`)
    assert.match(sidecar.stderr(), /"msg":"partition starts from MirrorMaker 2's position \(the group has no offset for it\)"[^\n]*"partition":1,"offset":"?60/)
    assert.doesNotMatch(sidecar.stderr(), /"msg":"partition starts from MirrorMaker 2's position[^\n]*"partition":0,/)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
