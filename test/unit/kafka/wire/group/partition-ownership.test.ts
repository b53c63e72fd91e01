import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { GroupMemberListener } from '../../../../../src/kafka/wire/group/group-member-listener.js'
import { PartitionOwnership } from '../../../../../src/kafka/wire/group/partition-ownership.js'
import { partitionKey, type TopicPartition } from '../../../../../src/kafka/wire/group/topic-partition.js'

const tp = (partition: number): TopicPartition => ({ topic: 't', partition })
const keys = (partitions: readonly TopicPartition[]): string[] => partitions.map(partitionKey)

/** A listener that records its calls and holds each `revoking()` until the test releases it. */
class RecordingListener implements GroupMemberListener {
  readonly calls: string[] = []
  readonly held: Array<() => void> = []
  holdRevokes = false
  ownership: PartitionOwnership | undefined

  async assigned (partitions: readonly TopicPartition[]): Promise<void> {
    this.calls.push(`assigned ${keys(partitions).join(',')}`)
    this.ownership?.checkInvariants()
  }

  async revoking (partitions: readonly TopicPartition[]): Promise<void> {
    this.calls.push(`revoking ${keys(partitions).join(',')}`)
    this.ownership?.checkInvariants()
    if (this.holdRevokes) await new Promise<void>(resolve => this.held.push(resolve))
  }

  async lost (partitions: readonly TopicPartition[]): Promise<void> {
    this.calls.push(`lost ${keys(partitions).join(',')}`)
  }
}

function owning (): { listener: RecordingListener, ownership: PartitionOwnership, errors: unknown[] } {
  const listener = new RecordingListener()
  const errors: unknown[] = []
  const ownership = new PartitionOwnership(listener, error => errors.push(error))
  listener.ownership = ownership
  return { listener, ownership, errors }
}

test('a reconciliation revokes first, then assigns, and owns exactly the target', async () => {
  const { listener, ownership } = owning()
  await ownership.reconcile([tp(0), tp(1), tp(2)])
  const result = await ownership.reconcile([tp(1), tp(2), tp(3)])
  assert.deepEqual(keys(result.revoked), ['t:0'])
  assert.deepEqual(keys(result.assigned), ['t:3'])
  assert.deepEqual(listener.calls, ['assigned t:0,t:1,t:2', 'revoking t:0', 'assigned t:3'])
  assert.deepEqual(keys(ownership.owned), ['t:1', 't:2', 't:3'])
  ownership.checkInvariants()
})

test('O1: a partition stays owned until revoking() resolved, and nothing new is taken meanwhile (O2)', async () => {
  const { listener, ownership } = owning()
  await ownership.reconcile([tp(0), tp(1)])
  listener.holdRevokes = true
  const reconciling = ownership.reconcile([tp(1), tp(5)])
  await new Promise(resolve => setImmediate(resolve))
  assert.deepEqual(listener.calls.at(-1), 'revoking t:0')
  assert.deepEqual(keys(ownership.owned), ['t:0', 't:1'], 'still owned while the owner drains')
  assert.ok(ownership.busy)
  ownership.checkInvariants()
  listener.held.shift()!()
  await reconciling
  assert.deepEqual(listener.calls.slice(-2), ['revoking t:0', 'assigned t:5'])
  assert.deepEqual(keys(ownership.owned), ['t:1', 't:5'])
  assert.ok(!ownership.busy)
})

test('O3: reconciliations run one after another in call order; the later target wins', async () => {
  const { listener, ownership } = owning()
  await ownership.reconcile([tp(0), tp(1)])
  listener.holdRevokes = true
  const first = ownership.reconcile([tp(1)])
  const second = ownership.reconcile([tp(2)])
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(listener.held.length, 1, 'the second waits for the first')
  listener.held.shift()!()
  await first
  await new Promise(resolve => setImmediate(resolve))
  listener.held.shift()!()
  await second
  assert.deepEqual(listener.calls, ['assigned t:0,t:1', 'revoking t:0', 'revoking t:1', 'assigned t:2'])
  assert.deepEqual(keys(ownership.owned), ['t:2'])
})

test('loseAll drops every partition through lost(), never revoking()', async () => {
  const { listener, ownership } = owning()
  await ownership.reconcile([tp(3), tp(4)])
  assert.deepEqual(keys(await ownership.loseAll()), ['t:3', 't:4'])
  assert.deepEqual(listener.calls, ['assigned t:3,t:4', 'lost t:3,t:4'])
  assert.deepEqual(ownership.owned, [])
  assert.deepEqual(await ownership.loseAll(), [], 'nothing left to lose: no call')
  assert.equal(listener.calls.length, 2)
})

test('a revoking() that rejects is reported and the partitions are given up all the same', async () => {
  const { listener, ownership, errors } = owning()
  await ownership.reconcile([tp(0)])
  listener.revoking = async () => { throw new Error('drain failed') }
  await ownership.revokeAll()
  assert.deepEqual(ownership.owned, [])
  assert.equal((errors[0] as Error).message, 'drain failed')
})
