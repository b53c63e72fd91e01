/**
 * A member of a group speaking KIP-848's consumer protocol (`group.protocol=consumer`, brokers 4.0+): one
 * ConsumerGroupHeartbeat request carries the subscription and what the member owns, and the broker answers
 * with the member's epoch and its assignment, which its own assignor (`group.remote.assignor`) computed.
 */
import { randomBytes } from 'node:crypto'
import type { BrokerConnection, RequestOf, ResponseOf } from '../broker-connection.js'
import type { ConsumerGroupHeartbeatResponseTopicPartitions } from '../schemas/consumer-group-heartbeat-response.js'
import { GroupErrors, groupError } from './group-errors.js'
import { GroupMemberCore } from './group-member-core.js'
import type { GroupMemberOptions } from './group-member.js'
import type { GroupMemberListener } from './group-member-listener.js'
import { partitionKey, partitionsByTopic, type TopicPartition } from './topic-partition.js'

/** KIP-848: the epoch a member leaves with; a static member's -2 keeps its assignment for its instance id (KIP-345's rule). */
const LEAVE_GROUP_MEMBER_EPOCH = -1
const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
/** The coordinator answers a heartbeat at once; this bounds one that does not. */
const HEARTBEAT_TIMEOUT_MS = 30_000

/** A Kafka Uuid as text (base64url of 16 random bytes), the member id the client chooses (KIP-1082). */
function newMemberId (): string {
  return randomBytes(16).toString('base64url')
}

/**
 * The consumer protocol's member.
 *
 * Invariant K1 (KIP-848 reconciliation): a target assignment is reached by revoking first (the owner's
 * `revoking()` resolved), acknowledging by the next heartbeat (which names what the member still owns), and
 * only then taking new partitions; the coordinator gives a partition to another member only after the
 * member that held it no longer names it. Each heartbeat names exactly the partitions owned at its sending.
 * Invariant K2: FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID end the membership: the partitions are lost (no
 * commit: another member may own them already) and the member joins again at epoch 0 with its member id.
 * Invariant K3: a member leaves with epoch -1, a static one with -2, only after it revoked every partition.
 */
export class ConsumerGroupMember extends GroupMemberCore {
  #memberId = newMemberId()
  #memberEpoch = 0
  #heartbeatIntervalMs = 5000
  readonly #topicNames = new Map<string, string>()
  readonly #topicIds = new Map<string, string>()
  /** The newest assignment not reconciled yet (kept until reconciled: the coordinator sends an assignment only when it changes). */
  #target: readonly ConsumerGroupHeartbeatResponseTopicPartitions[] | undefined
  /** The reconciliation under way, or the last one, settled. */
  #reconciliation: Promise<void> = Promise.resolve()
  #reconciling = false
  /**
   * The owned partitions the coordinator last heard of (partition keys, joined), or undefined when the next
   * heartbeat must carry the member's whole state (joining, or after an error). KIP-848: a heartbeat names the
   * subscription and the owned partitions only when they changed, and the coordinator answers an assignment
   * only to a heartbeat that names them or when the epoch moves; naming them every time would make every
   * answer carry the assignment.
   */
  #ownedSent: string | undefined

  constructor (options: GroupMemberOptions, listener: GroupMemberListener) {
    super(options, listener, HEARTBEAT_TIMEOUT_MS)
  }

  get memberId (): string {
    return this.#memberId
  }

  get generationIdOrMemberEpoch (): number {
    return this.#memberEpoch
  }

  protected async session (): Promise<void> {
    const connection = await this.coordinator.connection()
    // KIP-1082: from v1 the client chooses its member id; v0's coordinator chooses it at epoch 0.
    if (this.#memberEpoch === 0 && (connection.versionOf('ConsumerGroupHeartbeat') ?? 0) < 1) this.#memberId = ''
    this.#ownedSent = undefined
    while (!this.abort.signal.aborted) {
      const answer = await this.#heartbeat(connection, this.#memberEpoch)
      if (answer.errorCode === GroupErrors.FENCED_MEMBER_EPOCH || answer.errorCode === GroupErrors.UNKNOWN_MEMBER_ID) {
        await this.#fenced()
        continue
      }
      if (answer.errorCode !== GroupErrors.NONE) throw groupError('ConsumerGroupHeartbeat', this.options.groupId, answer.errorCode, answer.errorMessage)
      if (answer.memberId !== null) this.#memberId = answer.memberId
      this.#memberEpoch = answer.memberEpoch
      this.#heartbeatIntervalMs = answer.heartbeatIntervalMs
      if (answer.assignment !== null) this.#target = answer.assignment.topicPartitions
      this.#startReconciling()
      await this.pause(this.#heartbeatIntervalMs)
    }
  }

  /**
   * K1: reconciles the pending target while the heartbeats go on, then wakes the session so that the next
   * heartbeat acknowledges what is owned now. One reconciliation at a time; a newer target waits for it.
   */
  #startReconciling (): void {
    const target = this.#target
    if (this.#reconciling || target === undefined) return
    this.#reconciling = true
    this.#reconciliation = this.#reconcileTo(target).then(changed => {
      if (changed !== undefined && this.#target === target) this.#target = undefined
      // Acknowledge at once what changed (K1); an assignment equal to what is owned needs no answer.
      if (changed !== false) this.wake()
    }, error => {
      this.report(error)
      this.wake()
    }).finally(() => { this.#reconciling = false })
  }

  /**
   * Whether the owned partitions changed; undefined when the topic names could not be looked up (reported; the
   * target stays pending for the next heartbeat).
   */
  async #reconcileTo (topicPartitions: readonly ConsumerGroupHeartbeatResponseTopicPartitions[]): Promise<boolean | undefined> {
    const target: TopicPartition[] = []
    try {
      for (const { topicId, partitions } of topicPartitions) {
        const topic = await this.#topicName(topicId)
        // A topic deleted since the broker assigned it: nothing of it can be owned.
        if (topic === undefined) continue
        for (const partition of partitions) target.push({ topic, partition })
      }
    } catch (error) {
      this.report(error)
      return undefined
    }
    const { revoked, assigned } = await this.reconcile(target)
    this.markStarted()
    return revoked.length > 0 || assigned.length > 0
  }

  async #topicName (topicId: string): Promise<string | undefined> {
    if (!this.#topicNames.has(topicId)) await this.#refreshTopics()
    return this.#topicNames.get(topicId)
  }

  async #refreshTopics (): Promise<void> {
    for (const topic of await this.coordinator.topics(this.options.topics)) {
      this.#topicNames.set(topic.topicId, topic.name)
      this.#topicIds.set(topic.name, topic.topicId)
    }
  }

  /** K2: the partitions are lost without a commit; join again at epoch 0 (KIP-848). */
  async #fenced (): Promise<void> {
    this.#target = undefined
    this.#ownedSent = undefined
    await this.#reconciliation
    await this.ownership.loseAll()
    this.#memberEpoch = 0
  }

  async #heartbeat (connection: BrokerConnection, memberEpoch: number): Promise<ResponseOf<'ConsumerGroupHeartbeat'>> {
    const owned = this.ownership.owned
    if (owned.some(partition => !this.#topicIds.has(partition.topic))) await this.#refreshTopics()
    const ownedKeys = owned.map(partitionKey).join()
    const full = this.#ownedSent === undefined || memberEpoch === 0
    const request: RequestOf<'ConsumerGroupHeartbeat'> = {
      groupId: this.options.groupId,
      memberId: this.#memberId,
      memberEpoch,
      instanceId: this.instanceId,
      rackId: null,
      // Null (and -1) mean "unchanged" to the coordinator: the whole state goes only with a full heartbeat.
      rebalanceTimeoutMs: full ? this.options.rebalanceTimeoutMs ?? 300_000 : -1,
      subscribedTopicNames: full ? [...this.options.topics] : null,
      serverAssignor: full ? this.options.groupRemoteAssignor ?? null : null,
      topicPartitions: full || ownedKeys !== this.#ownedSent
        ? partitionsByTopic(owned).map(({ topic, partitions }) => ({ topicId: this.#topicIds.get(topic)!, partitions }))
        : null,
    }
    try {
      const answer = await connection.send('ConsumerGroupHeartbeat', request)
      this.#ownedSent = answer.errorCode === GroupErrors.NONE ? ownedKeys : undefined
      return answer
    } catch (error) {
      this.#ownedSent = undefined
      throw error
    }
  }

  /** K3: a heartbeat at epoch -1 (dynamic) or -2 (static: the assignment waits for the instance id to come back). */
  protected async leave (): Promise<void> {
    if (this.#memberEpoch === 0 && this.#memberId === '') return
    const connection = await this.coordinator.connection()
    const answer = await connection.send('ConsumerGroupHeartbeat', {
      groupId: this.options.groupId,
      memberId: this.#memberId,
      memberEpoch: this.instanceId === null ? LEAVE_GROUP_MEMBER_EPOCH : LEAVE_GROUP_STATIC_MEMBER_EPOCH,
      instanceId: this.instanceId,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      serverAssignor: null,
      topicPartitions: null,
    })
    if (answer.errorCode !== GroupErrors.NONE && answer.errorCode !== GroupErrors.UNKNOWN_MEMBER_ID) {
      throw groupError('ConsumerGroupHeartbeat (leave)', this.options.groupId, answer.errorCode, answer.errorMessage)
    }
  }
}
