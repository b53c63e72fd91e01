import type { ClusterAccess } from './group-coordinator.js'
import type { PartitionOffset } from './committed-offsets.js'
import type { TopicPartition } from './topic-partition.js'

/** Java's `group.protocol`: KIP-848's consumer protocol, or the classic one (Java's default through 4.x). */
export type GroupProtocol = 'classic' | 'consumer'

/** A group member's settings, named and defaulted as Java's consumer names them. */
export interface GroupMemberOptions extends ClusterAccess {
  /** `group.id`. */
  readonly groupId: string
  /** The topics to own partitions of (a list, not a pattern). */
  readonly topics: readonly string[]
  /** `group.protocol`: 'consumer' (KIP-848, brokers 4.0+) or 'classic'. Default 'classic'. */
  readonly groupProtocol?: GroupProtocol
  /** `group.instance.id`: a static member (KIP-345) keeps its partitions across a restart within the session timeout. Default none. */
  readonly groupInstanceId?: string | null
  /** `session.timeout.ms`, classic protocol only (KIP-848's is the broker's `group.consumer.session.timeout.ms`). Default 45,000. */
  readonly sessionTimeoutMs?: number
  /** `heartbeat.interval.ms`, classic protocol only (KIP-848's comes from the broker). Default 3,000. */
  readonly heartbeatIntervalMs?: number
  /** `max.poll.interval.ms`: how long a rebalance waits for this member, in milliseconds. Default 300,000. */
  readonly rebalanceTimeoutMs?: number
  /** `group.remote.assignor`, consumer protocol only: the broker's assignor ('uniform', 'range'). Default none: the broker's first. */
  readonly groupRemoteAssignor?: string | null
  /** `retry.backoff.ms`: the first wait before a failed group request is sent again. Default 100. */
  readonly retryBackoffMs?: number
  /** `retry.backoff.max.ms`: the longest wait between tries. Default 1,000. */
  readonly retryBackoffMaxMs?: number
  /** Hears what the member cannot throw to anyone: a listener's rejection, a retried failure, a fatal one. Default: none. */
  readonly onError?: (error: unknown) => void
}

/**
 * One member of a consumer group: it owns partitions of its topics, tells its owner through a
 * `GroupMemberListener` which it takes and which it must give up, commits and fetches offsets as the member
 * the coordinator knows. `start()` resolves once the member joined and reconciled its first assignment;
 * `stop()` revokes everything (the owner commits), then leaves the group (a static member does not, as
 * Java's consumer does not, KIP-345), once-only. `failure` is set when the member stopped on its own (a fatal
 * error: FENCED_INSTANCE_ID, an unsupported assignor).
 */
export interface GroupMember {
  start (): Promise<void>
  stop (): Promise<void>
  /** The partitions owned now. */
  readonly owned: readonly TopicPartition[]
  /** The member id the coordinator gave (or took, KIP-1082); '' before joining. */
  readonly memberId: string
  /** The classic generation id, or KIP-848's member epoch, the member commits with. */
  readonly generationIdOrMemberEpoch: number
  /** The error that ended the member, when it ended by itself. */
  readonly failure: Error | undefined
  /** Commits `offsets` with the current generation or epoch; a refusal that fences the member makes it join again. */
  commit (offsets: readonly PartitionOffset[]): Promise<void>
  /** The group's committed offsets of `partitions`, by `partitionKey`; -1n for none. */
  committed (partitions: readonly TopicPartition[]): Promise<Map<string, bigint>>
  /** Throws when one of the member's invariants does not hold. */
  checkInvariants (): void
}
