import assert from 'node:assert/strict'
import { test } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { Cluster, GroupMember } from '@kafka-mirror-sidecar/kafkajs'
import { bucketAssigner, decodeLaneRefusal, laneRefusalError } from '../../../src/kafka/bucket-assigner.js'
import { bucketOf } from '../../../src/ports/partition-bucket.js'
import { ErrorCodes } from '../../../src/shared/errors.js'

const { AssignerProtocol } = kafkajs

/** Enough of kafkajs' cluster for the assignor: `topic` has `partitions` partitions. */
function cluster (partitions: number): Cluster {
  return { findTopicPartitionMetadata: () => Array.from({ length: partitions }, (_, partitionId) => ({ partitionId })) } as unknown as Cluster
}

/** A member as the leader sees it: the metadata its own assignor announced (`protocol`). */
function member (memberId: string, lanes: number, startedAtMs: number, partitions: number): GroupMember {
  const assigner = bucketAssigner(lanes, startedAtMs)({ cluster: cluster(partitions), groupId: 'g', logger: undefined as never })
  return { memberId, memberMetadata: assigner.protocol({ topics: ['t'] }).metadata }
}

async function assign (
  leaderLanes: number,
  members: GroupMember[],
  partitions: number
): Promise<Map<string, { partitions: number[], refusal: ReturnType<typeof decodeLaneRefusal> }>> {
  const assigner = bucketAssigner(leaderLanes, 0)({ cluster: cluster(partitions), groupId: 'g', logger: undefined as never })
  const out = new Map<string, { partitions: number[], refusal: ReturnType<typeof decodeLaneRefusal> }>()
  for (const { memberId, memberAssignment } of await assigner.assign({ members, topics: ['t'] })) {
    const decoded = AssignerProtocol.MemberAssignment.decode(memberAssignment)
    out.set(memberId, { partitions: [...(decoded?.assignment.t ?? [])].sort((a, b) => a - b), refusal: decodeLaneRefusal(decoded?.userData) })
  }
  return out
}

test('bucket assignor: all partitions of a bucket go to one member; members with the same lane count share the buckets', async () => {
  const result = await assign(4, [member('a', 4, 100, 8), member('b', 4, 200, 8)], 8)
  assert.deepEqual([...result.values()].map(r => r.refusal), [undefined, undefined])
  assert.deepEqual([...result.values()].flatMap(r => r.partitions).sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7], 'every partition once')
  for (const { partitions } of result.values()) {
    const buckets = new Set(partitions.map(p => bucketOf('t', p, 4)))
    for (const [, other] of [...result].filter(([, r]) => r.partitions !== partitions)) {
      for (const p of other.partitions) assert.ok(!buckets.has(bucketOf('t', p, 4)), 'a bucket is on one member only')
    }
  }
})

test(
  'bucket assignor: a member with another --num.producers than the process that started first gets no partitions and a refusal naming both counts; the others share every bucket',
  async () => {
  // The leader may be any member, the refused one included: the answer is the same.
    for (const leaderLanes of [4, 2]) {
      const result = await assign(leaderLanes, [member('a', 4, 100, 8), member('b', 2, 300, 8), member('c', 4, 200, 8)], 8)
      assert.deepEqual(result.get('b'), { partitions: [], refusal: { refused: { lanes: 2, groupLanes: 4 } } }, `leader with ${leaderLanes} lanes`)
      assert.equal(result.get('a')?.refusal, undefined)
      assert.equal(result.get('c')?.refusal, undefined)
      assert.deepEqual([...(result.get('a')?.partitions ?? []), ...(result.get('c')?.partitions ?? [])].sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7])
    }
    const error = laneRefusalError('mirror', { refused: { lanes: 2, groupLanes: 4 } })
    assert.equal(error.code, ErrorCodes.CONFIG)
    assert.equal(error.retriable, false)
    assert.equal(
      error.message,
      '--num.producers 2: the other processes of exactly-once group "mirror" run 4 producer lanes, and partitions map to transactional ids by that count (a process with another count would not fence them); start this process with --num.producers 4, or stop every process of the flow and start them all with the same count'
    )
  }
)

test('bucket assignor: a member of an older version (no lane count announced) is assigned as before', async () => {
  const old: GroupMember = { memberId: 'old', memberMetadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics: ['t'], userData: Buffer.alloc(0) }) }
  const result = await assign(4, [old, member('new', 4, 100, 4)], 4)
  assert.deepEqual([...result.values()].map(r => r.refusal), [undefined, undefined])
  assert.deepEqual([...result.values()].flatMap(r => r.partitions).sort(), [0, 1, 2, 3])
})
