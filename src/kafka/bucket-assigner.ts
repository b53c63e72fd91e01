import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { GroupMember, PartitionAssigner } from '@kafka-mirror-sidecar/kafkajs'
import { bucketOf } from '../ports/partition-bucket.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'

const { AssignerProtocol } = kafkajs

/** The protocol name every member of an exactly-once flow's source group announces. */
const BUCKET_ASSIGNER_NAME = 'MirrorBucketAssigner'

/**
 * What a member announces in its metadata's userData (JSON): its lane count and when its process
 * started. Members of older versions announce nothing (an empty userData): they are not checked.
 */
export interface LaneAnnouncement {
  readonly lanes: number
  readonly startedAtMs: number
}

/** What the leader answers a member whose lane count differs from the group's, in its assignment's userData (JSON). */
export interface LaneRefusal {
  readonly refused: { readonly lanes: number, readonly groupLanes: number }
}

function encodeLaneAnnouncement (announcement: LaneAnnouncement): Buffer {
  return Buffer.from(JSON.stringify({ lanes: announcement.lanes, startedAtMs: announcement.startedAtMs }))
}

function decodeLaneAnnouncement (userData: Buffer | null | undefined): LaneAnnouncement | undefined {
  const parsed = parseJson(userData) as Partial<LaneAnnouncement> | undefined
  if (parsed === undefined || !Number.isSafeInteger(parsed.lanes) || typeof parsed.startedAtMs !== 'number') return undefined
  return { lanes: parsed.lanes as number, startedAtMs: parsed.startedAtMs }
}

/** The refusal in a member's assignment userData, if any. */
export function decodeLaneRefusal (userData: Buffer | null | undefined): LaneRefusal | undefined {
  const parsed = parseJson(userData) as Partial<LaneRefusal> | undefined
  const refused = parsed?.refused
  if (refused === undefined || !Number.isSafeInteger(refused.lanes) || !Number.isSafeInteger(refused.groupLanes)) return undefined
  return { refused: { lanes: refused.lanes, groupLanes: refused.groupLanes } }
}

function parseJson (userData: Buffer | null | undefined): unknown {
  if (userData === null || userData === undefined || userData.length === 0) return undefined
  try {
    const parsed = JSON.parse(userData.toString('utf8')) as unknown
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined
  } catch {
    // Not ours (another assignor's bytes, or a future format): nothing to check.
    return undefined
  }
}

/** The one line a refused process stops with (exit 2). */
export function laneRefusalError (groupId: string, refusal: LaneRefusal): MirrorError {
  const { lanes, groupLanes } = refusal.refused
  return new MirrorError(
    ErrorCodes.CONFIG,
    `--num.producers ${lanes}: the other processes of exactly-once group "${groupId}" run ${groupLanes} producer lanes, and partitions map to transactional ids by that count (a process with another count would not fence them); start this process with --num.producers ${groupLanes}, or stop every process of the flow and start them all with the same count`
  )
}

/**
 * The lane count the group runs with: that of the member whose process started first among those
 * that announce one (ties: the lowest member id); undefined when none announces one.
 */
function groupLanes (members: ReadonlyArray<{ readonly memberId: string, readonly announcement: LaneAnnouncement | undefined }>): number | undefined {
  let first: { memberId: string, announcement: LaneAnnouncement } | undefined
  for (const { memberId, announcement } of members) {
    if (announcement === undefined) continue
    if (
      first === undefined ||
      announcement.startedAtMs < first.announcement.startedAtMs ||
      (announcement.startedAtMs === first.announcement.startedAtMs && memberId < first.memberId)
    ) { first = { memberId, announcement } }
  }
  return first?.announcement.lanes
}

/**
 * The source group's assignor with exactly-once: every partition of a bucket (`bucketOf` over
 * `buckets`, the flow's producer lanes) goes to the same member, so one process holds a bucket's
 * transactional id at a time. Buckets are dealt round-robin over the members sorted by id. Members
 * of a group that does not announce this protocol cannot join an exactly-once flow's group
 * (kafkajs finds no common protocol), which keeps at-least-once and exactly-once processes apart.
 *
 * Each member announces its lane count (`LaneAnnouncement`). Processes with different counts map
 * partitions to different transactional ids, so neither would fence the other: the leader takes
 * the count of the process that started first (`groupLanes`), gives a member with another count
 * no partitions and a `LaneRefusal`, and deals the buckets over the others. The refused process
 * stops (`laneRefusalError`); the others go on.
 */
export function bucketAssigner (buckets: number, startedAtMs = Date.now()): PartitionAssigner {
  return ({ cluster }) => ({
    name: BUCKET_ASSIGNER_NAME,
    version: 1,
    async assign ({ members, topics }) {
      const announced = members.map((member: GroupMember) => ({
        memberId: member.memberId,
        announcement: decodeLaneAnnouncement(AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.userData),
      }))
      const lanes = groupLanes(announced) ?? buckets
      const refused = new Map<string, LaneRefusal>()
      for (const { memberId, announcement } of announced) {
        if (announcement !== undefined && announcement.lanes !== lanes) refused.set(memberId, { refused: { lanes: announcement.lanes, groupLanes: lanes } })
      }
      const sorted = announced.map(member => member.memberId).filter(memberId => !refused.has(memberId)).sort()
      const assignment = new Map<string, Record<string, number[]>>()
      for (const topic of sorted.length === 0 ? [] : topics) {
        for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
          const member = sorted[bucketOf(topic, partitionId, lanes) % sorted.length] as string
          let topicsOf = assignment.get(member)
          if (topicsOf === undefined) assignment.set(member, topicsOf = {})
          ;(topicsOf[topic] ??= []).push(partitionId)
        }
      }
      return announced.map(({ memberId }) => {
        const refusal = refused.get(memberId)
        return {
          memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: 1,
            assignment: assignment.get(memberId) ?? {},
            userData: refusal === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(refusal)),
          }),
        }
      })
    },
    protocol ({ topics }) {
      return {
        name: BUCKET_ASSIGNER_NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: encodeLaneAnnouncement({ lanes: buckets, startedAtMs }) }),
      }
    },
  })
}
