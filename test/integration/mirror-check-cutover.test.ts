import assert from 'node:assert/strict'
import { test } from 'node:test'
import { GroupAdmin } from '../../src/kafka/group-admin.js'
import { silentLogger } from '../../src/shared/logger.js'
import { createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { consumeAndCommit, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'

async function committed (cluster: LocalCluster, group: string, topic: string): Promise<Map<number, bigint>> {
  const admin = new GroupAdmin(cluster.connection('test'), silentLogger)
  await admin.start()
  try {
    return new Map((await admin.committedOffsets(group, [topic])).map(o => [o.partition, o.offset]))
  } finally {
    await admin.stop()
  }
}

interface CutoverJson {
  passed: boolean
  failed: Record<string, number>
  checks: Array<{ check: string, topic: string, partition: number, group: string | null, ok: boolean, detail: string }>
}

test(
  'mirror-check cutover: passes on a caught-up mirror with a synced group; fails (exit 1) naming the cause for lag, an unsynced group and lost records; lag reports the loss too',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 2, configs: { 'retention.ms': '-1' } })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(source, topic, [...tagged('a', 0, 100), ...tagged('a', 1, 100)])
    const app = uniqueName('app')
    const other = uniqueName('other')
    await consumeAndCommit(
      source,
      topic,
      app,
      new Map([
        [0, 60],
        [1, 40],
      ])
    )
    await consumeAndCommit(
      source,
      topic,
      other,
      new Map([
        [0, 10],
        [1, 10],
      ])
    )
    const mirrorGroup = uniqueName('mirror')
    const sidecar = spawnSidecar(t, {
      source,
      target,
      groupId: mirrorGroup,
      include: topic,
      args: ['--sync.group.offsets.enabled', 'true', '--groups', app, '--sync.group.offsets.interval.seconds', '1'],
    })
    await waitMirroring(sidecar)
    await waitUntil(
      async () => {
        const mirror = await committed(source, mirrorGroup, topic)
        const synced = await committed(target, app, topic)
        return mirror.get(0) === 100n && mirror.get(1) === 100n && synced.get(0) === 60n && synced.get(1) === 40n
      },
      { timeoutMs: 60_000, message: 'mirror caught up and the app group synced' }
    )

    const base = ['cutover', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--mirror-group', mirrorGroup]
    const passing = await runMirrorCheck([...base, '--group', app, '--verify-records', '50'])
    assert.equal(passing.code, 0, passing.stdout + passing.stderr)
    assert.match(passing.stdout, /^CHECK +TOPIC +PARTITION +GROUP +RESULT +DETAIL$/m)
    assert.match(passing.stdout, new RegExp(`^verify +${topic} +0 +- +ok +50 records checked \\(source 50-99\\)$`, 'm'))
    assert.match(passing.stdout, new RegExp(`^group +${topic} +1 +${app} +ok +source 40 -> target 40, committed on the target$`, 'm'))
    assert.match(passing.stdout, /PASSED: all 8 checks hold; safe to move consumers to the target\n$/)

    const json = await runMirrorCheck([...base, '--group', app, '--format', 'json'])
    assert.equal(json.code, 0, json.stderr)
    const parsed = JSON.parse(json.stdout) as CutoverJson
    assert.equal(parsed.passed, true)
    assert.deepEqual(
      parsed.checks.map(c => `${c.check} ${c.partition} ${c.ok}`),
      ['lag 0 true', 'lag 1 true', 'loss 0 true', 'loss 1 true', 'verify 0 true', 'verify 1 true', 'group 0 true', 'group 1 true']
    )

    const unsynced = await runMirrorCheck([...base, '--group', app, '--group', other])
    assert.equal(unsynced.code, 1, unsynced.stdout + unsynced.stderr)
    assert.match(unsynced.stdout, /FAILED: 8 of 10 checks hold; failed: group 2\n$/)
    assert.match(
      unsynced.stderr,
      new RegExp(
        `^mirror-check: cutover check failed: group ${topic}-0 group ${other}: source 10 -> target 10, but the group's offset on the target is not committed: not synced`,
        'm'
      )
    )

    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
    await produce(source, topic, tagged('b', 0, 10))
    const lagging = await runMirrorCheck([...base])
    assert.equal(lagging.code, 1, lagging.stdout + lagging.stderr)
    assert.match(lagging.stdout, new RegExp(`^lag +${topic} +0 +- +FAILED +lag 10 records > --max-lag 0 \\(source end 110, mirror at 100\\)$`, 'm'))
    assert.match(lagging.stdout, /FAILED: 5 of 6 checks hold; failed: lag 1\n$/)
    assert.equal((await runMirrorCheck([...base, '--max-lag', '10'])).code, 0, 'within --max-lag 10')

    await withAdmin(source, async admin => {
      await admin.fetchTopicMetadata({ topics: [topic] })
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '105' }] })
    })
    const lost = await runMirrorCheck([...base, '--max-lag', '10'])
    assert.equal(lost.code, 1, lost.stdout + lost.stderr)
    assert.match(lost.stdout, /FAILED: 5 of 6 checks hold; failed: loss 1\n$/)
    const lossText =
      `${topic}-0: offsets 100-104 (5 records) were deleted on the source before group '${mirrorGroup}' read them (committed offset 100 < log start offset 105)`
    assert.ok(lost.stderr.includes(`mirror-check: cutover check failed: loss ${lossText}\n`), lost.stderr)

    const lag = await runMirrorCheck(['lag', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', mirrorGroup])
    assert.equal(lag.code, 1, 'a loss fails the lag audit')
    assert.ok(lag.stderr.includes(`mirror-check: loss: ${lossText}\n`), lag.stderr)

    const usage = await runMirrorCheck([...base, '--max-lag', 'abc'])
    assert.equal(usage.code, 2)
    assert.equal(usage.stderr.split('\n')[0], 'mirror-check: --max-lag "abc": expected a non-negative integer')
  }
)
