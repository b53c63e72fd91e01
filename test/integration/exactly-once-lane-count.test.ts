import assert from 'node:assert/strict'
import { test } from 'node:test'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { readToEnd, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test(
  'exactly-once: a process with another --num.producers than the running one gets no partitions and stops (exit 2, one line naming both counts); the running one goes on: every record once',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('eos-lanes'), partitions: 4 })
    t.after(() => deleteTopicIfExists(target, topic))
    const groupId = uniqueName('mirror')
    const run = (lanes: number) => ({
      source,
      target,
      groupId,
      include: topic,
      consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 },
      args: ['--exactly.once', 'true', '--num.producers', String(lanes), '--offset.commit.interval.ms', '300'],
    })
    const caughtUp = async (): Promise<void> =>
      waitUntil(
        async () => {
          const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, groupId, topic)])
          return [...ends].every(([p, end]) => committed.get(p) === end)
        },
        { timeoutMs: 60_000, message: 'the running process to copy and commit the whole topic' }
      )

    for (let p = 0; p < 4; p++) await produce(source, topic, tagged('a', p, 50))
    const running = spawnSidecar(t, run(4))
    await waitMirroring(running)
    await caughtUp()

    const other = spawnSidecar(t, run(2))
    assert.equal(await other.exited, 2, other.stderr().slice(-3000))
    const lines = other
      .stderr()
      .split('\n')
      .filter(line => line.startsWith('mirror-sidecar: '))
    assert.deepEqual(lines, [
      `mirror-sidecar: --num.producers 2: the other processes of exactly-once group "${groupId}" run 4 producer lanes, and partitions map to transactional ids by that count (a process with another count would not fence them); start this process with --num.producers 4, or stop every process of the flow and start them all with the same count`,
    ])
    assert.ok(!other.stderr().includes('producer lane taken'), 'the refused process took no lane (fenced nobody)')

    for (let p = 0; p < 4; p++) await produce(source, topic, tagged('b', p, 50))
    await caughtUp()
    assert.equal(running.child.exitCode, null, 'the running process goes on')
    const copied = (await readToEnd(target, topic)).map(r => r.value?.toString())
    assert.equal(copied.length, 400, 'every record once')
    assert.equal(new Set(copied).size, 400)
    running.child.kill('SIGTERM')
    assert.equal(await running.exited, 0, running.stderr().slice(-2000))
  }
)
