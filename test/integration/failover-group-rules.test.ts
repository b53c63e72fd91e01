import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createKafkaClient } from '../../src/kafka/client.js'
import { committedOffsets, createTopic, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { commitAsAdmin, loadCheckpoints, tagged } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test('an active target group is never overwritten; a target group moves backwards only when the source group did', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const prefix = uniqueName('rules')
  const topic = await createTopic(t, source, { name: `${prefix}-t` })
  await createTopic(t, target, { name: topic })
  await produce(source, topic, tagged('r', 0, 100))
  const active = `${prefix}-active`
  const ahead = `${prefix}-ahead`
  await commitAsAdmin(source, active, topic, new Map([[0, 40n]]))
  await commitAsAdmin(source, ahead, topic, new Map([[0, 60n]]))
  await commitAsAdmin(target, ahead, topic, new Map([[0, 90n]])) // consumers on the target already went further

  const member = createKafkaClient(target.connection('test-active')).consumer({ groupId: active, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 })
  await member.connect()
  t.after(() => member.disconnect())
  await member.subscribe({ topics: [topic], fromBeginning: true })
  await member.run({ autoCommit: false, eachBatch: async () => {} })
  await waitUntil(async () => (await withAdmin(target, admin => admin.describeGroups([active]))).groups[0]?.state === 'Stable',
    { timeoutMs: 30_000, message: 'the target member to join' })

  const sidecar = spawnSidecar(t, {
    source,
    target,
    groupId: uniqueName('mirror'),
    include: topic,
    args: ['--sync.group.offsets.enabled', 'true', '--groups', `${prefix}-.*`, '--sync.group.offsets.interval.seconds', '1'],
  })
  await waitMirroring(sidecar)
  const checkpointed = async (group: string, sourceOffset: bigint): Promise<boolean> =>
    (await loadCheckpoints(target)).some(c => c.group === group && c.topic === topic && c.upstreamOffset === sourceOffset)
  await waitUntil(async () => (await checkpointed(active, 40n)) && (await checkpointed(ahead, 60n)), {
    timeoutMs: 30_000,
    intervalMs: 500,
    message: 'checkpoints of both groups',
  })

  assert.equal((await committedOffsets(target, active, topic)).get(0), -1n, 'a group with members on the target is left alone')
  assert.equal((await committedOffsets(target, ahead, topic)).get(0), 90n, 'not moved backwards: the source group did not move back')

  await member.disconnect()
  await waitUntil(async () => (await committedOffsets(target, active, topic)).get(0) === 40n, { timeoutMs: 30_000, message: 'the idle group to be synced' })

  await commitAsAdmin(source, ahead, topic, new Map([[0, 20n]])) // the application rewound on the source
  await waitUntil(async () => (await committedOffsets(target, ahead, topic)).get(0) === 20n, {
    timeoutMs: 30_000,
    message: 'the rewind to follow on the target',
  })
  const checkpoints = (await loadCheckpoints(target)).filter(c => c.group === ahead)
  assert.deepEqual(checkpoints.map(c => [c.upstreamOffset, c.downstreamOffset]), [[20n, 20n]])
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0)
})
