import { ErrorCodes, MirrorError } from '../../../shared/errors.js'
import type { BrokerConnection } from '../broker-connection.js'
import { coordinatorMoved, GroupErrors, groupErrorName } from './group-errors.js'
import { partitionKey, partitionsByTopic, type TopicPartition } from './topic-partition.js'

/** An offset to commit: the next offset to read of a partition. */
export interface PartitionOffset extends TopicPartition {
  readonly offset: bigint
  /** The leader epoch of the record before `offset` (KIP-320); -1 when unknown. */
  readonly leaderEpoch?: number
}

/** Who commits: the member as the coordinator knows it now. */
export interface Committer {
  readonly groupId: string
  readonly memberId: string
  /** The classic protocol's generation id, or KIP-848's member epoch. */
  readonly generationIdOrMemberEpoch: number
  readonly groupInstanceId: string | null
}

/**
 * Errors of a commit that say the committer is no longer who the group knows: its generation ended
 * (ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS), its epoch is old (STALE_MEMBER_EPOCH, KIP-848), or it was
 * removed or replaced (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID of KIP-345). A zombie's commit is refused so;
 * the member joins again.
 */
export const FENCING_COMMIT_ERRORS: ReadonlySet<number> = new Set([
  GroupErrors.ILLEGAL_GENERATION,
  GroupErrors.REBALANCE_IN_PROGRESS,
  GroupErrors.STALE_MEMBER_EPOCH,
  GroupErrors.UNKNOWN_MEMBER_ID,
  GroupErrors.FENCED_INSTANCE_ID,
  GroupErrors.FENCED_MEMBER_EPOCH,
])

/**
 * OffsetCommit of `offsets` as `committer`. Rejects with a COMMIT_FAILED MirrorError naming the first refused
 * partition's error (`kafkaCode`), retriable only when the coordinator moved; nothing is retried here.
 */
export async function commitOffsets (connection: BrokerConnection, committer: Committer, offsets: readonly PartitionOffset[]): Promise<void> {
  if (offsets.length === 0) return
  const byKey = new Map(offsets.map(offset => [partitionKey(offset), offset]))
  const answer = await connection.send('OffsetCommit', {
    groupId: committer.groupId,
    generationIdOrMemberEpoch: committer.generationIdOrMemberEpoch,
    memberId: committer.memberId,
    groupInstanceId: committer.groupInstanceId,
    topics: partitionsByTopic(offsets).map(({ topic, partitions }) => ({
      name: topic,
      partitions: partitions.map(partition => {
        const offset = byKey.get(partitionKey({ topic, partition }))!
        return { partitionIndex: partition, committedOffset: offset.offset, committedLeaderEpoch: offset.leaderEpoch ?? -1, committedMetadata: null }
      }),
    })),
  })
  for (const topic of answer.topics) {
    for (const partition of topic.partitions) {
      if (partition.errorCode === GroupErrors.NONE) continue
      const name = groupErrorName(partition.errorCode)
      const message = `commit of ${topic.name ?? topic.topicId}:${partition.partitionIndex} in group ${committer.groupId} refused: ${name}`
      throw new MirrorError(ErrorCodes.COMMIT_FAILED, message, { retriable: coordinatorMoved(partition.errorCode), kafkaCode: name })
    }
  }
}

/**
 * The committed offset of each of `partitions` in `groupId` (OffsetFetch, the batched form of KIP-709 from v8),
 * by partition key; -1n when none was committed. `requireStable` (KIP-447) makes the coordinator wait for
 * pending transactional commits instead of answering past them.
 */
export async function fetchCommittedOffsets (
  connection: BrokerConnection,
  groupId: string,
  partitions: readonly TopicPartition[]
): Promise<Map<string, bigint>> {
  const topics = partitionsByTopic(partitions).map(({ topic, partitions: list }) => ({ name: topic, partitionIndexes: list }))
  const committed = new Map<string, bigint>()
  const read = (topic: string, partition: { partitionIndex: number, committedOffset: bigint, errorCode: number }): void => {
    if (partition.errorCode !== GroupErrors.NONE) {
      const name = groupErrorName(partition.errorCode)
      throw new MirrorError(ErrorCodes.KAFKA, `committed offset of ${topic}:${partition.partitionIndex} in group ${groupId}: ${name}`, {
        retriable: partition.errorCode === GroupErrors.UNSTABLE_OFFSET_COMMIT || coordinatorMoved(partition.errorCode),
        kafkaCode: name,
      })
    }
    committed.set(partitionKey({ topic, partition: partition.partitionIndex }), partition.committedOffset)
  }
  const refused = (code: number): MirrorError => new MirrorError(ErrorCodes.KAFKA, `committed offsets of group ${groupId}: ${groupErrorName(code)}`, {
    retriable: code === GroupErrors.COORDINATOR_LOAD_IN_PROGRESS || coordinatorMoved(code),
    kafkaCode: groupErrorName(code),
  })
  if ((connection.versionOf('OffsetFetch') ?? 0) >= 8) {
    const answer = await connection.send('OffsetFetch', { groups: [{ groupId, topics }], requireStable: true })
    const group = answer.groups![0]!
    if (group.errorCode !== GroupErrors.NONE) throw refused(group.errorCode)
    for (const topic of group.topics) for (const partition of topic.partitions) read(topic.name ?? '', partition)
  } else {
    const stable = (connection.versionOf('OffsetFetch') ?? 0) >= 7 ? { requireStable: true } : {}
    const answer = await connection.send('OffsetFetch', { groupId, topics, ...stable })
    if ((answer.errorCode ?? 0) !== GroupErrors.NONE) throw refused(answer.errorCode!)
    for (const topic of answer.topics ?? []) for (const partition of topic.partitions) read(topic.name, partition)
  }
  return committed
}
