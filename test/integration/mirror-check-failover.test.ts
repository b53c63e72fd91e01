import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { executeGroupFailover, planGroupFailover, type GroupFailoverPlan } from '../../src/check/translate/group-failover-plan.js'
import { loadOffsetSyncs } from '../../src/check/translate/offset-sync-store.js'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck, type CliResult } from '../helpers/mirror-check.js'
import { commitAsAdmin, consumeAndCommit, readAsGroup, readToEnd, tagged, values } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface JsonPartition {
  topic: string
  partition: number
  currentOffset: number
  lag: number | null
  translation: string
  toTopic: string | null
  translatedOffset: number | null
  toCommittedOffset: number | null
  plannedOffset: number | null
  toLag: number | null
  action: string
  actionText: string
}
interface JsonGroup {
  group: string
  from: { state: string, members: number }
  to: { state: string, members: number }
  blocker: string | null
  outcome: string
  writes: Array<{ topic: string, partition: number, offset: number }>
  partitions: JsonPartition[]
}
interface JsonPlan { command: string, mode: string, groups: JsonGroup[] }

function parsePlan (result: CliResult): JsonPlan {
  try {
    return JSON.parse(result.stdout) as JsonPlan
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`)
  }
}

/** Runs a mirror (`from` -> `to`) of `topic` until it committed the end offsets of `from`, then stops it. */
async function mirrorOnce (t: TestContext, from: LocalCluster, to: LocalCluster, topic: string): Promise<void> {
  const mirrorGroup = uniqueName('mirror')
  const sidecar = spawnSidecar(t, { source: from, target: to, groupId: mirrorGroup, include: topic })
  await waitMirroring(sidecar)
  const ends = await withAdmin(from, admin => admin.fetchTopicOffsets(topic))
  await waitUntil(async () => {
    const committed = await committedOffsets(from, mirrorGroup, topic)
    return ends.every(e => committed.get(e.partition) === BigInt(e.high))
  }, { timeoutMs: 60_000, message: 'the mirror to commit the end offsets' })
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
}

function withoutOutcome (plan: JsonPlan): unknown {
  return plan.groups.map(g => ({ ...g, outcome: undefined, partitions: g.partitions.map(p => ({ ...p, actionText: undefined })) }))
}

test(
  'mirror-check failover: dry run writes nothing; --execute writes exactly the plan; the group then reads exactly what it had not read',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const prefix = uniqueName('fo')
    const topic = await createTopic(t, source, { name: `${prefix}-t`, partitions: 2 })
    await createTopic(t, target, { name: topic, partitions: 2 })
    await produce(target, topic, [...tagged('other', 0, 17), ...tagged('other', 1, 5)]) // target offsets are shifted by 17 and 5
    await produce(source, topic, [...tagged('fo', 0, 120), ...tagged('fo', 1, 120)])
    const app = `${prefix}-app`
    const ahead = `${prefix}-ahead`
    const committed = await consumeAndCommit(
      source,
      topic,
      app,
      new Map([
        [0, 30],
        [1, 70],
      ])
    )
    assert.deepEqual([committed.get(0), committed.get(1)], [30n, 70n])
    await commitAsAdmin(
      source,
      ahead,
      topic,
      new Map([
        [0, 10n],
        [1, 10n],
      ])
    )
    await commitAsAdmin(target, ahead, topic, new Map([[0, 100n]])) // consumers on the target already went past 10 + 17
    await mirrorOnce(t, source, target, topic)

    const base = ['--source', source.bootstrap, '--target', target.bootstrap, '--groups', `${prefix}-.*`]
    const dry = await runMirrorCheck(['failover', ...base, '--format', 'json'])
    assert.equal(dry.code, 0, dry.stderr)
    const plan = parsePlan(dry)
    assert.equal(plan.mode, 'dry-run')
    assert.deepEqual(
      plan.groups.map(g => [g.group, g.blocker, g.outcome, g.to.members]),
      [
        [ahead, null, 'planned', 0],
        [app, null, 'planned', 0],
      ]
    )
    const appPlan = plan.groups.find(g => g.group === app) as JsonGroup
    assert.deepEqual(
      appPlan.partitions.map(p => [p.partition, p.currentOffset, p.lag, p.translatedOffset, p.toCommittedOffset, p.plannedOffset, p.toLag, p.action]),
      [
        [0, 30, 90, 47, null, 47, 90, 'commit'],
        [1, 70, 50, 75, null, 75, 50, 'commit'],
      ]
    )
    const aheadPlan = plan.groups.find(g => g.group === ahead) as JsonGroup
    assert.deepEqual(
      aheadPlan.partitions.map(p => [p.partition, p.translatedOffset, p.toCommittedOffset, p.plannedOffset, p.action]),
      [
        [0, 27, 100, 100, 'keep-ahead'],
        [1, 15, null, 15, 'commit'],
      ]
    )
    assert.deepEqual(aheadPlan.writes, [{ topic, partition: 1, offset: 15 }], 'the partition ahead on the target is not rewound')
    assert.match(dry.stderr, /dry run, nothing written; --execute would commit 3 offset\(s\)/)
    assert.match(
      dry.stderr,
      new RegExp(`group '${ahead}': ${topic}-0 already committed past the translation on the target; kept \\(offsets are never rewound\\)`)
    )
    assert.deepEqual([...(await committedOffsets(target, app, topic)).values()], [-1n, -1n], 'the dry run wrote nothing')
    assert.deepEqual([...(await committedOffsets(target, ahead, topic)).values()], [100n, -1n], 'the dry run wrote nothing')

    const table = await runMirrorCheck(['failover', ...base])
    assert.equal(table.code, 0, table.stderr)
    const lines = table.stdout
      .trim()
      .split('\n')
      .map(line => line.trim().split(/\s+/))
    assert.deepEqual(lines[0], [
      'GROUP',
      'TOPIC',
      'PARTITION',
      'CURRENT-OFFSET',
      'LAG',
      'MEMBERS',
      'TO-TOPIC',
      'TRANSLATED-OFFSET',
      'TO-COMMITTED-OFFSET',
      'TO-LAG',
      'TO-MEMBERS',
      'ACTION',
    ])
    assert.deepEqual(
      lines.find(l => l[0] === app && l[2] === '0'),
      [app, topic, '0', '30', '90', '0', topic, '47', '-', '90', '0', 'commit', '47']
    )
    assert.deepEqual(
      lines.find(l => l[0] === ahead && l[2] === '0'),
      [ahead, topic, '0', '10', '110', '0', topic, '27', '100', '37', '0', 'keep', '100', '(ahead', 'of', '27;', 'never', 'rewound)']
    )

    const executed = await runMirrorCheck(['failover', ...base, '--format', 'json', '--execute'])
    assert.equal(executed.code, 0, executed.stderr)
    const done = parsePlan(executed)
    assert.deepEqual(withoutOutcome(done), withoutOutcome(plan), '--execute acts on the same plan the dry run printed')
    assert.deepEqual(
      done.groups.map(g => g.outcome),
      ['written', 'written']
    )
    assert.deepEqual(
      [...(await committedOffsets(target, app, topic))].sort(),
      [
        [0, 47n],
        [1, 75n],
      ],
      'exactly the planned offsets'
    )
    assert.deepEqual(
      [...(await committedOffsets(target, ahead, topic))].sort(),
      [
        [0, 100n],
        [1, 15n],
      ],
      'exactly the planned offsets, the one ahead kept'
    )

    const sourceRecords = await readToEnd(source, topic)
    const read = await readAsGroup(target, topic, app)
    for (const [partition, offset] of committed) {
      const expected = sourceRecords.filter(r => r.partition === partition && BigInt(r.offset) >= offset).map(r => r.value?.toString())
      assert.deepEqual(
        values(read, partition),
        expected,
        `partition ${partition}: the group reads on the target exactly the records it had not read on the source`
      )
    }

    const again = await runMirrorCheck(['failover', ...base, '--format', 'json'])
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual(
      parsePlan(again).groups.flatMap(g => g.partitions.map(p => p.action)),
      ['keep-ahead', 'keep-equal', 'keep-equal', 'keep-equal'],
      'a second run has nothing to write'
    )
  }
)

test('mirror-check failover refuses a group active on the target and fails for a partition without offset syncs', { timeout: 180_000 }, async t => {
  const { source, target } = await sharedClusters()
  const prefix = uniqueName('fo-refuse')
  const topic = await createTopic(t, source, { name: `${prefix}-t` })
  t.after(() => deleteTopicIfExists(target, topic))
  const unmirrored = await createTopic(t, source, { name: `${prefix}-unmirrored` })
  await produce(source, topic, tagged('r', 0, 60))
  await produce(source, unmirrored, tagged('u', 0, 20))
  await mirrorOnce(t, source, target, topic)

  const active = `${prefix}-active`
  await commitAsAdmin(source, active, topic, new Map([[0, 40n]]))
  const member = createKafkaClient(target.connection('test-active')).consumer({ groupId: active, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 })
  await member.connect()
  t.after(() => member.disconnect())
  await member.subscribe({ topics: [topic], fromBeginning: false })
  await member.run({ autoCommit: false, eachBatch: async () => {} })
  await waitUntil(async () => (await withAdmin(target, admin => admin.describeGroups([active]))).groups[0]?.state === 'Stable', {
    timeoutMs: 30_000,
    message: 'the target member to join',
  })

  const args = ['failover', '--source', source.bootstrap, '--target', target.bootstrap, '--group', active]
  const dry = await runMirrorCheck(args)
  assert.equal(dry.code, 1, dry.stderr)
  assert.match(
    dry.stderr,
    new RegExp(
      `group '${active}' has 1 active member\\(s\\) on the target cluster \\(${target.bootstrap}\\): --execute would refuse it; stop its consumers there first`
    )
  )
  assert.match(dry.stdout, /not written: the group has 1 member\(s\) on the target/)
  const refused = await runMirrorCheck([...args, '--execute', '--format', 'json'])
  assert.equal(refused.code, 1, refused.stderr)
  assert.match(
    refused.stderr,
    new RegExp(
      `group '${active}' has 1 active member\\(s\\) on the target cluster \\(${target.bootstrap}\\): refused, nothing written; stop its consumers there, then run again`
    )
  )
  assert.deepEqual(parsePlan(refused).groups.map(g => [g.blocker, g.outcome, g.to.members]), [['active', 'blocked', 1]])
  assert.deepEqual([...(await committedOffsets(target, active, topic)).values()], [-1n], 'an active group is never written')
  // A member that joins between plan and write: the broker itself refuses the outside commit.
  const syncs = await loadOffsetSyncs(target.connection('test'), 'mirror-offset-syncs.source.internal')
  const [planned] = await planGroupFailover({ from: source.connection('test'), to: target.connection('test'), groups: [active], syncs })
  assert.equal(planned?.blocker, 'active')
  const { blocker: _, ...raced } = planned as GroupFailoverPlan
  const outcomes = await executeGroupFailover(target.connection('test'), [raced])
  assert.deepEqual(outcomes.map(o => o.status), ['refused'], JSON.stringify(outcomes))
  assert.deepEqual([...(await committedOffsets(target, active, topic)).values()], [-1n], 'the broker refused the write of a group with a member')

  // A group on a mirrored topic and on one that never was: nothing of it is written, exit 1.
  const partly = `${prefix}-partly`
  await commitAsAdmin(source, partly, topic, new Map([[0, 20n]]))
  await commitAsAdmin(source, partly, unmirrored, new Map([[0, 5n]]))
  const noSyncs = await runMirrorCheck(['failover', '--source', source.bootstrap, '--target', target.bootstrap, '--group', partly, '--execute'])
  assert.equal(noSyncs.code, 1, noSyncs.stderr)
  const rows = noSyncs.stdout.trim().split('\n').map(line => line.trim().split(/\s+/))
  assert.equal(rows.find(r => r[1] === unmirrored)?.slice(11).join(' '), 'cannot translate: no offset syncs')
  assert.equal(rows.find(r => r[1] === topic)?.slice(11).join(' '), 'not written: another partition cannot be translated')
  assert.match(
    noSyncs.stderr,
    new RegExp(`group '${partly}': ${unmirrored}-0 \\(no offset syncs\\) cannot be translated exactly; nothing of the group was written`)
  )
  assert.deepEqual([...(await committedOffsets(target, partly, topic)).values()], [-1n], 'the translatable partition is not written either')
  const onlyMirrored = await runMirrorCheck([
    'failover',
    '--source',
    source.bootstrap,
    '--target',
    target.bootstrap,
    '--group',
    partly,
    '--topic',
    topic,
    '--execute',
  ])
  assert.equal(onlyMirrored.code, 0, onlyMirrored.stderr)
  assert.deepEqual([...(await committedOffsets(target, partly, topic)).values()], [20n], '--topic limits the move to what can be translated')

  // The target topic deleted since it was mirrored: the syncs point nowhere; exit 1 and nothing written.
  const late = `${prefix}-late`
  await commitAsAdmin(source, late, topic, new Map([[0, 30n]]))
  await deleteTopicIfExists(target, topic)
  await waitUntil(async () => !(await withAdmin(target, admin => admin.listTopics())).includes(topic), { message: 'the target topic to be gone' })
  const gone = await runMirrorCheck(['failover', '--source', source.bootstrap, '--target', target.bootstrap, '--group', late, '--execute', '--format', 'json'])
  assert.equal(gone.code, 1, gone.stderr)
  assert.deepEqual(
    parsePlan(gone).groups.map(g => [g.blocker, g.outcome, g.partitions[0]?.translatedOffset, g.partitions[0]?.actionText]),
    [['untranslatable', 'blocked', 30, `cannot translate: ${topic} does not exist on the target`]]
  )
  assert.match(
    gone.stderr,
    new RegExp(`group '${late}': ${topic}-0 \\(${topic} does not exist on the target\\) cannot be translated exactly; nothing of the group was written`)
  )
})

test(
  'mirror-check failback: moves a group back with the offset syncs of a target -> source flow; says so when they are missing',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const prefix = uniqueName('fb')
    // Consumers moved to the target and consumed there a topic produced on the target; a second sidecar mirrors it back.
    const topic = await createTopic(t, target, { name: `${prefix}-t` })
    await createTopic(t, source, { name: topic })
    await produce(source, topic, tagged('before', 0, 13))
    await produce(target, topic, tagged('fb', 0, 80))
    const group = `${prefix}-app`
    const consumed = await consumeAndCommit(target, topic, group, new Map([[0, 25]]))
    assert.equal(consumed.get(0), 25n)

    const missing = await runMirrorCheck([
      'failback',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--target-alias',
      uniqueName('nobody'),
    ])
    assert.equal(missing.code, 1, missing.stderr)
    assert.match(
      missing.stderr,
      /no offset syncs in mirror-offset-syncs\.nobody-[0-9a-f]+\.internal on the source cluster .*: failback needs the offset syncs of a flow target -> source \(a second sidecar mirroring the target cluster back to the source cluster\)/
    )
    assert.match(missing.stdout, /cannot translate: no offset syncs/)

    await mirrorOnce(t, target, source, topic) // the flow target -> source: its offset syncs are on the source
    const args = ['failback', '--source', source.bootstrap, '--target', target.bootstrap, '--group', group, '--format', 'json']
    const dry = await runMirrorCheck(args)
    assert.equal(dry.code, 0, dry.stderr)
    const plan = parsePlan(dry)
    assert.equal(plan.command, 'failback')
    assert.deepEqual(
      plan.groups[0]?.partitions.map(p => [p.currentOffset, p.lag, p.translatedOffset, p.plannedOffset, p.toLag, p.action]),
      [[25, 55, 38, 38, 55, 'commit']]
    )
    assert.deepEqual([...(await committedOffsets(source, group, topic)).values()], [-1n], 'the dry run wrote nothing')

    const executed = await runMirrorCheck([...args, '--execute'])
    assert.equal(executed.code, 0, executed.stderr)
    assert.deepEqual(withoutOutcome(parsePlan(executed)), withoutOutcome(plan))
    assert.deepEqual([...(await committedOffsets(source, group, topic)).values()], [38n])
    const expected = (await readToEnd(target, topic)).filter(r => BigInt(r.offset) >= 25n).map(r => r.value?.toString())
    assert.deepEqual(
      values(await readAsGroup(source, topic, group), 0),
      expected,
      'back on the source, the group reads exactly what it had not read on the target'
    )
  }
)

test('mirror-check failover: usage errors are exit 2 before anything connects', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['failover', '--source', '127.0.0.1:1', '--target', '127.0.0.1:1'], /--group, --group-regex or --all-groups is required/],
    [
      ['failover', '--source', '127.0.0.1:1', '--target', '127.0.0.1:1', '--group', 'g', '--dry-run', '--execute'],
      /--dry-run and --execute exclude each other/,
    ],
    [['failback', '--source', '127.0.0.1:1', '--target', '127.0.0.1:1', '--groups', 'orders-(', '--execute'], /--group-regex "orders-\(": not a valid regex/],
    [['failover', '--target', '127.0.0.1:1', '--group', 'g'], /--source/],
  ]
  for (const [args, message] of cases) {
    const result = await runMirrorCheck(args)
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, message)
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace')
  }
})
