import assert from 'node:assert/strict'
import { test } from 'node:test'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

async function assigned (port: number): Promise<number> {
  return sampleSum(await scrape(port), 'kafka_mirror_assigned_partitions') ?? 0
}

test(
  'a partition that goes to another process and comes back: its first process never commits the offset it had (the group stays at the end)',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('returning'), partitions: 2 })
    t.after(() => deleteTopicIfExists(target, topic))
    const groupId = uniqueName('mirror')
    const consumer = { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500 }
    // The first process commits only at rebalances and at stop: what it acknowledges after the
    // rebalance that takes a partition away (records in flight) stays its own, uncommitted offset.
    const first = spawnSidecar(t, { source, target, groupId, include: topic, consumer, args: ['--offset.commit.interval.ms', '600000'] })
    const firstPort = await sidecarHttpPort(first)
    await waitMirroring(first)

    // Traffic while the second process joins: batches of the partition it takes are in flight in the first.
    let producing = true
    let written = 0
    const traffic = (async () => {
      for (let round = 0; producing; round++) {
        await produce(source, topic, [...tagged(`r${round}`, 0, 200), ...tagged(`r${round}`, 1, 200)])
        written += 400
      }
    })()
    await waitUntil(() => written >= 4_000, { timeoutMs: 30_000, message: 'traffic under way' })
    const second = spawnSidecar(t, { source, target, groupId, include: topic, consumer })
    const secondPort = await sidecarHttpPort(second)
    await waitMirroring(second)
    await waitUntil(async () => (await assigned(secondPort)) === 1, { timeoutMs: 40_000, message: 'the second process to own a partition' })
    await waitUntil(() => written >= 12_000, { timeoutMs: 60_000, message: 'traffic after the rebalance' })
    producing = false
    await traffic

    // The second process copies its partition to the end and commits it as it stops; the partition goes back to the first.
    const ends = await endOffsets(source, topic)
    await waitUntil(
      async () => {
        const committed = await committedOffsets(source, groupId, topic)
        return [...ends].some(([p, end]) => committed.get(p) === end)
      },
      { timeoutMs: 60_000, message: "the second process to commit its partition's end" }
    )
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0, second.stderr().slice(-2000))
    await waitUntil(async () => (await assigned(firstPort)) === 2, { timeoutMs: 40_000, message: 'the partition back in the first process' })
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 0, first.stderr().slice(-2000))
    assert.deepEqual(
      await committedOffsets(source, groupId, topic),
      ends,
      'every partition committed at its end: none moved back to an offset the first process had before it lost the partition'
    )
  }
)
