import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { GroupMemberOptions } from '../../src/kafka/wire/group/group-member.js'
import { partitionKey } from '../../src/kafka/wire/group/topic-partition.js'
import { bootstrapOf, memberInProcess, MemberProcess, OwnershipLedger, threeMembersThenOneStops } from '../helpers/group-members.js'
import { createTopic, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { waitUntil } from '../helpers/wait.js'

async function groupOptions (t: Parameters<typeof createTopic>[0], overrides: Partial<GroupMemberOptions> = {}): Promise<GroupMemberOptions> {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 12 })
  return {
    bootstrap: bootstrapOf(source.bootstrap),
    connection: { clientId: 'wire-group-test' },
    groupId: uniqueName('wire-group-classic'),
    topics: [topic],
    groupProtocol: 'classic',
    heartbeatIntervalMs: 500,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 20_000,
    ...overrides,
  }
}

const twelve = (topic: string): Array<{ topic: string, partition: number }> => Array.from({ length: 12 }, (_, partition) => ({ topic, partition }))

test('classic, cooperative-sticky: three members own 12 partitions once each; one stopping gracefully moves only its own, revoked once with its commit', {
  timeout: 120_000,
}, async t => {
  const options = await groupOptions(t)
  const seen = await threeMembersThenOneStops(t, options, twelve(options.topics[0]!))
  const { ledger } = seen
  assert.deepEqual(ledger.violations, [])
  // KIP-429: a and b keep every partition they had and revoke nothing; c's four go to them.
  assert.equal(ledger.revoked('a'), seen.revokedBefore.a)
  assert.equal(ledger.revoked('b'), seen.revokedBefore.b)
  for (const key of seen.before.a) assert.equal(ledger.owners.get(key), 'a')
  for (const key of seen.before.b) assert.equal(ledger.owners.get(key), 'b')
  assert.equal(ledger.ownedBy('a').length + ledger.ownedBy('b').length, 12)
  // c committed while revoking, with its generation still valid: each of its partitions holds that offset.
  assert.deepEqual(ledger.revokeCommits.refused, [])
  for (const key of seen.before.c) assert.equal(seen.committed.get(key), 7n, key)
  t.diagnostic(`classic: c's partitions owned by a and b ${seen.movedInMs} ms after c.stop() began`)
})

test('classic, static membership (KIP-345): a member killed and started again with its group.instance.id takes its partitions back, no other member revoked', {
  timeout: 120_000,
}, async t => {
  const options = await groupOptions(t, { sessionTimeoutMs: 30_000 })
  const ledger = new OwnershipLedger()
  const a = memberInProcess(t, ledger, 'a', { ...options, groupInstanceId: 'a' })
  const b = memberInProcess(t, ledger, 'b', { ...options, groupInstanceId: 'b' })
  await Promise.all([a.start(), b.start()])
  const c1 = new MemberProcess(t, ledger, 'c', { ...options, groupInstanceId: 'c' })
  await c1.next('started')
  await waitUntil(() => ledger.owners.size === 12 && [...ledger.counts().values()].every(count => count === 4), { message: '4 partitions per member' })
  const ofC = ledger.ownedBy('c')
  const revokedBefore = ledger.revoked('a') + ledger.revoked('b')

  c1.kill('SIGKILL')
  await c1.exited()
  // The killed process told nobody: its partitions stay its own in the ledger, as they do in the group.
  const restartAtMs = Date.now()
  const c2 = new MemberProcess(t, ledger, 'c', { ...options, groupInstanceId: 'c' })
  const back = await c2.next('started')
  const backInMs = Date.now() - restartAtMs
  assert.deepEqual(back.partitions.map(partitionKey).sort(), ofC)
  assert.equal(ledger.revoked('a') + ledger.revoked('b'), revokedBefore, 'no other member revoked a partition')
  assert.deepEqual(ledger.violations, [])
  assert.ok(backInMs < 30_000, `back within the session timeout: ${backInMs} ms`)
  a.checkInvariants()
  b.checkInvariants()
  t.diagnostic(`classic static member: partitions back ${backInMs} ms after the new process started`)
})

test('classic: a frozen member\'s commit after the group moved on is refused, and the member joins again', { timeout: 120_000 }, async t => {
  const options = await groupOptions(t, { sessionTimeoutMs: 6000 })
  const ledger = new OwnershipLedger()
  const a = memberInProcess(t, ledger, 'a', options)
  await a.start()
  const zombie = new MemberProcess(t, ledger, 'z', options)
  await zombie.next('started')
  await waitUntil(() => ledger.ownedBy('z').length === 6 && ledger.ownedBy('a').length === 6, { message: '6 partitions each' })
  const ofZombie = ledger.ownedBy('z').map(key => ({ topic: options.topics[0]!, partition: Number(key.split(':').at(-1)) }))

  zombie.kill('SIGSTOP')
  // The session times out; the group gives a all 12 (the ledger sees z's as never given up, so count a's own).
  await waitUntil(() => a.owned.length === 12, { timeoutMs: 60_000, message: 'a owning all 12 after z\'s session expired' })
  const from = zombie.events.length
  zombie.send({ command: 'commit', partitions: ofZombie, offset: '999' })
  zombie.kill('SIGCONT')
  const result = await zombie.next('committed', from)
  assert.equal(result.ok, false)
  assert.ok(['ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'REBALANCE_IN_PROGRESS'].includes(result.kafkaCode ?? ''), String(result.kafkaCode))
  const committed = await a.committed(ofZombie)
  for (const partition of ofZombie) assert.notEqual(committed.get(partitionKey(partition)), 999n)
  // The zombie learns it was removed: its partitions are lost (no commit), and it joins again.
  await zombie.next('lost', from)
  a.checkInvariants()
  t.diagnostic(`classic zombie commit refused with ${result.kafkaCode}`)
})
