import assert from 'node:assert/strict'
import { test } from 'node:test'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { consumeAndCommit, readAsGroup, readToEnd, tagged, values } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test(
  'exactly-once: kill -9 right after a transaction committed, restart: translate and failover of a group inside that transaction are exact (0 re-read, 0 skipped)',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('eos-syncs') })
    t.after(() => deleteTopicIfExists(target, topic))
    const run = {
      source,
      target,
      groupId: uniqueName('mirror'),
      include: topic,
      consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 },
      // No source commit during the test: the offset-sync writer never flushes, so every range there is comes from a transaction.
      args: ['--exactly.once', 'true', '--num.producers', '1', '--offset.commit.interval.ms', '600000'],
    }
    const onTarget = async (count: number): Promise<void> =>
      waitUntil(async () => (await readToEnd(target, topic)).length === count, {
        timeoutMs: 60_000,
        message: `${count} records on the target (read_committed)`,
      })

    await produce(source, topic, tagged('a', 0, 200))
    const first = spawnSidecar(t, run)
    await waitMirroring(first)
    await onTarget(200)
    await produce(source, topic, tagged('b', 0, 100))
    await onTarget(300)
    // The last transaction committed (its records are visible read_committed): the process dies before any source commit.
    first.child.kill('SIGKILL')
    assert.equal(await first.exited, 'SIGKILL')
    assert.equal((await committedOffsets(source, run.groupId, topic)).get(0), -1n, 'the mirror never committed on the source')

    // An application read 250 records on the source: its offset lies inside the last transaction.
    const app = uniqueName('app')
    assert.deepEqual([...(await consumeAndCommit(source, topic, app, new Map([[0, 250]])))], [[0, 250n]])

    // The restarted lane resumes past those records (its positions): it never copies them again.
    const second = spawnSidecar(t, run)
    await waitMirroring(second)
    await produce(source, topic, tagged('c', 0, 50))
    await onTarget(350)
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0, second.stderr().slice(-2000))

    const targetRecords = await readToEnd(target, topic)
    const copyOf250 = targetRecords.find(r => r.value?.toString() === 'b-0-50')
    assert.ok(copyOf250 !== undefined, 'source record 250 is on the target once')
    assert.equal(targetRecords.length, 350, 'every record once')

    const base = ['--source', source.bootstrap, '--target', target.bootstrap, '--group', app, '--topic', topic]
    const translated = await runMirrorCheck(['translate', ...base, '--format', 'json'])
    assert.equal(translated.code, 0, translated.stdout + translated.stderr)
    const rows = JSON.parse(translated.stdout) as Array<Record<string, unknown>>
    assert.deepEqual(
      rows.map(r => [r.partition, r.sourceOffset, r.targetOffset, r.status]),
      [[0, 250, Number(copyOf250.offset), 'ok']],
      'the group offset translates to the copy of source record 250'
    )

    const failover = await runMirrorCheck(['failover', ...base, '--execute', '--format', 'json'])
    assert.equal(failover.code, 0, failover.stdout + failover.stderr)
    const plan = JSON.parse(failover.stdout) as { groups: Array<{ outcome: string, partitions: Array<{ translatedOffset: number, reReads: number }> }> }
    assert.deepEqual(
      plan.groups.map(g => [g.outcome, g.partitions.map(p => [p.translatedOffset, p.reReads])]),
      [['written', [[Number(copyOf250.offset), 0]]]]
    )
    const sourceValues = (await readToEnd(source, topic)).map(r => r.value?.toString())
    assert.deepEqual(
      values(await readAsGroup(target, topic, app), 0),
      sourceValues.slice(250),
      'on the target the group reads exactly the records it had not read: 0 re-read, 0 skipped'
    )
  }
)
