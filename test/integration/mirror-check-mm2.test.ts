import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { startMirrorMaker2 } from '../helpers/mirror-maker2.js'
import { tagged } from '../helpers/offsets.js'
import { waitUntil } from '../helpers/wait.js'

test(
  "mirror-check lag --mm2 and verify on a running MirrorMaker 2 flow: positions from Connect's offsets topic, a planted target record found, lag after MirrorMaker 2 stops",
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 2, configs: { 'retention.ms': '-1' } })
    await produce(source, topic, [...tagged('a', 0, 50), ...tagged('a', 1, 50)])
    const alias = `src${uniqueName('').replace(/-/g, '')}`
    const targetAlias = `dst${alias.slice(3)}`
    const mirrored = `${alias}.${topic}`
    t.after(async () => {
      await withAdmin(target, async admin => {
        const own = (await admin.listTopics()).filter(name => name.includes(alias.slice(3)))
        if (own.length > 0) await admin.deleteTopics({ topics: own })
      })
      await withAdmin(source, async admin => {
        const own = (await admin.listTopics()).filter(name => name.includes(alias.slice(3)))
        if (own.length > 0) await admin.deleteTopics({ topics: own })
      })
      await deleteTopicIfExists(target, mirrored)
    })
    const mm2 = await startMirrorMaker2(t, { source, target, sourceAlias: alias, targetAlias, topics: topic })

    const lagArgs = [
      'lag',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--topic',
      topic,
      '--mm2',
      '--replication-policy',
      'default',
      '--source-alias',
      alias,
    ]
    // --max-lag alone passes a partition without a stored position: wait for the positions themselves.
    const positions = async (): Promise<unknown[]> => {
      const run = await runMirrorCheck([...lagArgs, '--format', 'json'])
      return run.code === 0 ? (JSON.parse(run.stdout) as Array<{ mirrorOffset: unknown }>).map(r => r.mirrorOffset) : []
    }
    await waitUntil(async () => JSON.stringify(await positions()) === '[50,50,null]', {
      timeoutMs: 150_000,
      intervalMs: 1000,
      message: 'MirrorMaker 2 copied and stored its position',
    })
    const caughtUp = await runMirrorCheck([...lagArgs, '--format', 'json'])
    assert.equal(caughtUp.code, 0, caughtUp.stderr)
    assert.deepEqual(
      (JSON.parse(caughtUp.stdout) as Array<Record<string, unknown>>).map(r => [
        r.partition,
        r.sourceLogEndOffset,
        r.targetLogEndOffset,
        r.mirrorOffset,
        r.lag,
      ]),
      [
        [0, 50, 50, 50, 0],
        [1, 50, 50, 50, 0],
        ['TOTAL', 100, 100, null, 0],
      ]
    )

    const verifyArgs = [
      'verify',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--topic',
      topic,
      '--replication-policy',
      'default',
      '--source-alias',
      alias,
    ]
    const clean = await runMirrorCheck(verifyArgs)
    assert.equal(clean.code, 0, clean.stdout + clean.stderr)
    assert.match(clean.stdout, /^PASSED: 100 records checked/m)

    // A record written to the target behind MirrorMaker 2's back, then one it copies after it.
    await produce(target, mirrored, [{ partition: 0, key: 'planted', value: 'not from the source' }])
    await produce(source, topic, tagged('b', 0, 1))
    await waitUntil(async () => JSON.stringify(await positions()) === '[51,50,null]', { timeoutMs: 60_000, intervalMs: 500, message: 'the new record copied' })
    const planted = await runMirrorCheck(verifyArgs)
    assert.equal(planted.code, 1, planted.stdout + planted.stderr)
    assert.match(planted.stdout, /^TOTAL +- +- +101 +0 +0 +1 +0 +0 +-$/m)
    assert.match(planted.stdout, /^FAILED: 101 records checked/m)

    await mm2.stop()
    await produce(source, topic, tagged('c', 1, 10))
    const lagging = await runMirrorCheck([...lagArgs, '--max-lag', '0'])
    assert.equal(lagging.code, 1, lagging.stdout + lagging.stderr)
    assert.match(lagging.stdout, new RegExp(`^${topic} +${mirrored} +1 +60 +50 +50 +10 `, 'm'))
    assert.match(lagging.stderr, new RegExp(`lag check failed: ${topic}-1: lag 10 records > 0`))

    const noTopic = await runMirrorCheck(['lag', '--source', source.bootstrap, '--target', target.bootstrap, '--mm2'])
    assert.equal(noTopic.code, 2)
    assert.equal(noTopic.stderr, 'mirror-check: --mm2 needs --topic: name the source topics MirrorMaker 2 copies\n')
  }
)
