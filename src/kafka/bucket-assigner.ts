import kafkajs from 'kafkajs'
import type { PartitionAssigner } from 'kafkajs'
import { bucketOf } from '../pipeline/partition-bucket.js'

const { AssignerProtocol } = kafkajs

/** The protocol name every member of an exactly-once flow's source group announces. */
export const BUCKET_ASSIGNER_NAME = 'MirrorBucketAssigner'

/**
 * The source group's assignor with exactly-once: every partition of a bucket (`bucketOf` over
 * `buckets`, the flow's producer lanes) goes to the same member, so one process holds a bucket's
 * transactional id at a time. Buckets are dealt round-robin over the members sorted by id. Members
 * of a group that does not announce this protocol cannot join an exactly-once flow's group
 * (kafkajs finds no common protocol), which keeps at-least-once and exactly-once processes apart.
 */
export function bucketAssigner (buckets: number): PartitionAssigner {
  return ({ cluster }) => ({
    name: BUCKET_ASSIGNER_NAME,
    version: 1,
    async assign ({ members, topics }) {
      const sorted = members.map(member => member.memberId).sort()
      const assignment = new Map<string, Record<string, number[]>>()
      for (const topic of topics) {
        for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
          const member = sorted[bucketOf(topic, partitionId, buckets) % sorted.length] as string
          let topicsOf = assignment.get(member)
          if (topicsOf === undefined) assignment.set(member, topicsOf = {})
          ;(topicsOf[topic] ??= []).push(partitionId)
        }
      }
      return sorted.map(memberId => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: assignment.get(memberId) ?? {}, userData: Buffer.alloc(0) }),
      }))
    },
    protocol ({ topics }) {
      return { name: BUCKET_ASSIGNER_NAME, metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }) }
    },
  })
}
