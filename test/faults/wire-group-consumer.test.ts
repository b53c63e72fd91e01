import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { BrokerConnection, type RequestOf } from '../../src/kafka/wire/broker-connection.js'
import type { GroupMemberOptions } from '../../src/kafka/wire/group/group-member.js'
import { partitionKey } from '../../src/kafka/wire/group/topic-partition.js'
import { bootstrapOf, memberInProcess, MemberProcess, OwnershipLedger, threeMembersThenOneStops } from '../helpers/group-members.js'
import { createTopic, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { waitUntil } from '../helpers/wait.js'

/** KIP-848 members on the default 4.1.1 cluster (group.coordinator.rebalance.protocols holds consumer by default from 4.0). */
async function groupOptions (t: TestContext, overrides: Partial<GroupMemberOptions> = {}): Promise<GroupMemberOptions> {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 12 })
  return {
    bootstrap: bootstrapOf(source.bootstrap),
    connection: { clientId: 'wire-group-test' },
    groupId: uniqueName('wire-group-consumer'),
    topics: [topic],
    groupProtocol: 'consumer',
    groupRemoteAssignor: 'uniform',
    rebalanceTimeoutMs: 20_000,
    ...overrides,
  }
}

const twelve = (topic: string): Array<{ topic: string, partition: number }> => Array.from({ length: 12 }, (_, partition) => ({ topic, partition }))
const fourEach = (ledger: OwnershipLedger): boolean => ledger.owners.size === 12 && [...ledger.counts().values()].every(count => count === 4)

test('KIP-848: three members own 12 partitions once each; one stopping gracefully moves only its own, revoked once with its commit', {
  timeout: 120_000,
}, async t => {
  const options = await groupOptions(t)
  const seen = await threeMembersThenOneStops(t, options, twelve(options.topics[0]!))
  const { ledger } = seen
  assert.deepEqual(ledger.violations, [])
  assert.equal(ledger.revoked('a'), seen.revokedBefore.a)
  assert.equal(ledger.revoked('b'), seen.revokedBefore.b)
  for (const key of seen.before.a) assert.equal(ledger.owners.get(key), 'a')
  for (const key of seen.before.b) assert.equal(ledger.owners.get(key), 'b')
  assert.deepEqual(ledger.revokeCommits.refused, [])
  for (const key of seen.before.c) assert.equal(seen.committed.get(key), 7n, key)
  t.diagnostic(`KIP-848: c's partitions owned by a and b ${seen.movedInMs} ms after c.stop() began`)
})

test('KIP-848 static member: stopped (epoch -2) and started again with its group.instance.id, it takes its partitions back, no other member revoked', {
  timeout: 120_000,
}, async t => {
  const options = await groupOptions(t)
  const ledger = new OwnershipLedger()
  const [a, b, c1] = ['a', 'b', 'c'].map(name => memberInProcess(t, ledger, name, { ...options, groupInstanceId: name }))
  await Promise.all([a!.start(), b!.start(), c1!.start()])
  await waitUntil(() => fourEach(ledger), { message: '4 partitions per member' })
  const ofC = ledger.ownedBy('c')
  const revokedBefore = ledger.revoked('a') + ledger.revoked('b')
  await c1!.stop()
  assert.deepEqual(ledger.ownedBy('c'), [], 'c revoked its partitions, committing, before it left')

  const restartAtMs = Date.now()
  const c2 = memberInProcess(t, ledger, 'c', { ...options, groupInstanceId: 'c' })
  await c2.start()
  await waitUntil(() => ledger.ownedBy('c').length === 4, { message: 'c owning 4 again' })
  const backInMs = Date.now() - restartAtMs
  assert.deepEqual(ledger.ownedBy('c'), ofC)
  assert.equal(ledger.revoked('a') + ledger.revoked('b'), revokedBefore, 'no other member revoked a partition')
  assert.deepEqual(ledger.violations, [])
  for (const member of [a!, b!, c2]) member.checkInvariants()
  t.diagnostic(`KIP-848 static member: partitions back ${backInMs} ms after start()`)
})

test('KIP-848 static member killed: its instance id is refused (UNRELEASED_INSTANCE_ID) until its session expires, then it joins again', {
  timeout: 150_000,
}, async t => {
  const options = await groupOptions(t)
  const ledger = new OwnershipLedger()
  const a = memberInProcess(t, ledger, 'a', { ...options, groupInstanceId: 'a' })
  await a.start()
  const c1 = new MemberProcess(t, ledger, 'c', { ...options, groupInstanceId: 'c' })
  await c1.next('started')
  await waitUntil(() => ledger.ownedBy('a').length === 6 && ledger.ownedBy('c').length === 6, { message: '6 partitions each' })
  c1.kill('SIGKILL')
  await c1.exited()
  // A killed process holds nothing any more; the group reassigns its partitions only once its session expires.
  for (const key of ledger.ownedBy('c')) ledger.owners.delete(key)

  const restartAtMs = Date.now()
  const c2 = new MemberProcess(t, ledger, 'c', { ...options, groupInstanceId: 'c' })
  const refused = await c2.next('error')
  assert.match(refused.message, /UNRELEASED_INSTANCE_ID/)
  await c2.next('started', 0, 90_000)
  await waitUntil(() => fourEach(ledger) || (ledger.owners.size === 12 && ledger.ownedBy('c').length === 6), { message: 'c owning partitions again' })
  const backInMs = Date.now() - restartAtMs
  assert.deepEqual(ledger.violations, [])
  a.checkInvariants()
  t.diagnostic(`KIP-848 static member killed: partitions back ${backInMs} ms after the new process started (the broker's session timeout)`)
})

test('KIP-848: a frozen member\'s commit after its session expired is refused, and the member joins again at epoch 0', { timeout: 150_000 }, async t => {
  const options = await groupOptions(t)
  const ledger = new OwnershipLedger()
  const a = memberInProcess(t, ledger, 'a', options)
  await a.start()
  const zombie = new MemberProcess(t, ledger, 'z', options)
  await zombie.next('started')
  await waitUntil(() => ledger.ownedBy('z').length === 6 && ledger.ownedBy('a').length === 6, { message: '6 partitions each' })
  const ofZombie = ledger.ownedBy('z').map(key => ({ topic: options.topics[0]!, partition: Number(key.split(':').at(-1)) }))

  zombie.kill('SIGSTOP')
  // The broker's session timeout (group.consumer.session.timeout.ms, 45 s by default) removes z; a gets all 12.
  await waitUntil(() => a.owned.length === 12, { timeoutMs: 90_000, message: 'a owning all 12 after z\'s session expired' })
  const from = zombie.events.length
  zombie.send({ command: 'commit', partitions: ofZombie, offset: '999' })
  zombie.kill('SIGCONT')
  const result = await zombie.next('committed', from)
  assert.equal(result.ok, false)
  assert.ok(['STALE_MEMBER_EPOCH', 'UNKNOWN_MEMBER_ID', 'FENCED_MEMBER_EPOCH'].includes(result.kafkaCode ?? ''), String(result.kafkaCode))
  const committed = await a.committed(ofZombie)
  for (const partition of ofZombie) assert.notEqual(committed.get(partitionKey(partition)), 999n)
  await zombie.next('lost', from)
  a.checkInvariants()
  t.diagnostic(`KIP-848 zombie commit refused with ${result.kafkaCode}`)
})

test('KIP-848: a stable member heartbeats at the interval the broker answers (5 s by default), naming its partitions only when they change', {
  timeout: 60_000,
}, async t => {
  const options = await groupOptions(t)
  const sent: Array<RequestOf<'ConsumerGroupHeartbeat'>> = []
  // Counted on the wire layer's own send, in this process: the member's requests as the broker receives them.
  const send = BrokerConnection.prototype.send
  BrokerConnection.prototype.send = function (this: BrokerConnection, api, request, sendOptions) {
    if (api === 'ConsumerGroupHeartbeat') sent.push(request as RequestOf<'ConsumerGroupHeartbeat'>)
    return send.call(this, api, request, sendOptions) as ReturnType<typeof send>
  } as typeof send
  t.after(() => { BrokerConnection.prototype.send = send })
  const ledger = new OwnershipLedger()
  const member = memberInProcess(t, ledger, 'a', options)
  await member.start()
  await waitUntil(() => ledger.ownedBy('a').length === 12, { message: 'a owning all 12' })
  const from = sent.length
  // A rate is measured over a window: no condition to wait for ends it.
  await new Promise(resolve => setTimeout(resolve, 6000))
  const stable = sent.slice(from)
  assert.ok(stable.length >= 1 && stable.length <= 2, `${stable.length} heartbeats in 6 s`)
  assert.ok(stable.every(request => request.topicPartitions === null && request.subscribedTopicNames === null), 'unchanged state is not sent again')
  assert.ok(sent[0]!.memberEpoch === 0 && sent[0]!.subscribedTopicNames !== null && sent[0]!.topicPartitions !== null, 'the join carries the whole state')
})
