/**
 * A member of a classic consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) with cooperative
 * rebalancing (KIP-429) and static membership (KIP-345), speaking the consumer protocol as Java's consumer
 * does, so that it can share a group with Java consumers using the cooperative-sticky assignor.
 */
import type { BrokerConnection, ResponseOf } from '../broker-connection.js'
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from './consumer-protocol.js'
import { assignCooperativeSticky, COOPERATIVE_STICKY } from './cooperative-sticky-assignor.js'
import { coordinatorMoved, GroupErrors, groupError } from './group-errors.js'
import { GroupMemberCore } from './group-member-core.js'
import type { GroupMemberOptions } from './group-member.js'
import type { GroupMemberListener } from './group-member-listener.js'

/** KIP-62: JoinGroup is answered when the rebalance ends; Java's consumer waits the rebalance timeout plus this (AbstractCoordinator.JOIN_GROUP_TIMEOUT_LAPSE). */
const JOIN_GROUP_TIMEOUT_MARGIN_MS = 5000

/**
 * The classic protocol's member.
 *
 * Invariant C1 (KIP-429): partitions the member keeps are never revoked at a rebalance: it joins with what
 * it owns, and gives up only what the new assignment lacks, after its owner's `revoking()` resolved; having
 * given any up, it joins again at once, so that the leader can hand them on in a second rebalance (the
 * leader never assigns a partition to a new member in the rebalance that revokes it from its old one).
 * Invariant C2: heartbeats run only between SyncGroup and the next JoinGroup, with the generation SyncGroup
 * answered; a REBALANCE_IN_PROGRESS answer makes the member join again keeping its partitions.
 * Invariant C3 (KIP-345): a static member does not send LeaveGroup when it stops, so that its instance id
 * keeps its partitions for a restart within the session timeout; a FENCED_INSTANCE_ID answer (another
 * process took its instance id) ends the member, its partitions lost, nothing committed.
 */
export class ClassicGroupMember extends GroupMemberCore {
  #memberId = ''
  #generationId = -1
  #heartbeatTimer: NodeJS.Timeout | undefined
  /** The generation the heartbeats are for; another generation's answers are stale. */
  #heartbeatGeneration = -1

  constructor (options: GroupMemberOptions, listener: GroupMemberListener) {
    super(options, listener, (options.rebalanceTimeoutMs ?? 300_000) + JOIN_GROUP_TIMEOUT_MARGIN_MS)
  }

  get memberId (): string {
    return this.#memberId
  }

  get generationIdOrMemberEpoch (): number {
    return this.#generationId
  }

  protected async session (): Promise<void> {
    this.#stopHeartbeats()
    // A stopping member does not join again: it revokes what it owns and leaves, as Java's consumer closes.
    if (this.stopping) return this.pause(Infinity)
    const connection = await this.coordinator.connection()
    const join = await this.#join(connection)
    if (join === undefined) return
    this.#memberId = join.memberId
    this.#generationId = join.generationId
    // KIP-814: a static leader that rejoined a stable group is told to skip the assignment the group already has.
    const leads = join.leader === join.memberId && join.skipAssignment !== true
    const sync = await connection.send('SyncGroup', {
      groupId: this.options.groupId,
      generationId: join.generationId,
      memberId: join.memberId,
      groupInstanceId: this.instanceId,
      protocolType: 'consumer',
      protocolName: join.protocolName ?? COOPERATIVE_STICKY,
      assignments: leads ? await this.#assign(join) : [],
    })
    if (sync.errorCode !== GroupErrors.NONE) {
      await this.#refused('SyncGroup', sync.errorCode)
      return
    }
    this.#startHeartbeats(connection, join.generationId)
    const { revoked } = await this.reconcile(decodeAssignment(sync.assignment))
    this.markStarted()
    // KIP-429: having revoked partitions, join again so that they can be assigned to their new owners.
    if (revoked.length > 0 && !this.stopping) return
    await this.pause(Infinity)
  }

  /** JoinGroup until the coordinator accepts the member id (KIP-394's MEMBER_ID_REQUIRED asks again with the id it gave). */
  async #join (connection: BrokerConnection): Promise<ResponseOf<'JoinGroup'> | undefined> {
    for (;;) {
      const metadata = encodeSubscription({
        topics: this.options.topics,
        userData: null,
        ownedPartitions: this.ownership.owned,
        generationId: this.#generationId,
        rackId: null,
      })
      const join = await connection.send('JoinGroup', {
        groupId: this.options.groupId,
        sessionTimeoutMs: this.options.sessionTimeoutMs ?? 45_000,
        rebalanceTimeoutMs: this.options.rebalanceTimeoutMs ?? 300_000,
        memberId: this.#memberId,
        groupInstanceId: this.instanceId,
        protocolType: 'consumer',
        protocols: [{ name: COOPERATIVE_STICKY, metadata }],
        reason: null,
      })
      if (join.errorCode === GroupErrors.MEMBER_ID_REQUIRED) {
        this.#memberId = join.memberId
        continue
      }
      if (join.errorCode === GroupErrors.NONE) return join
      await this.#refused('JoinGroup', join.errorCode)
      return undefined
    }
  }

  /**
   * The answer to an error of JoinGroup, SyncGroup or Heartbeat. REBALANCE_IN_PROGRESS: join again, keeping
   * the partitions (KIP-429). UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION: the group went on without this member,
   * whose partitions may be another's already: lost, then join as a new member. The coordinator's transient
   * errors are thrown retriable (the session is retried); anything else ends the member.
   */
  async #refused (api: string, code: number): Promise<void> {
    if (code === GroupErrors.REBALANCE_IN_PROGRESS) return
    if (code === GroupErrors.UNKNOWN_MEMBER_ID || code === GroupErrors.ILLEGAL_GENERATION) {
      if (code === GroupErrors.UNKNOWN_MEMBER_ID) this.#memberId = ''
      this.#generationId = -1
      await this.ownership.loseAll()
      return
    }
    throw groupError(api, this.options.groupId, code)
  }

  /** The leader's assignment: cooperative-sticky over the members' subscriptions and the topics' partition counts. */
  async #assign (join: ResponseOf<'JoinGroup'>): Promise<Array<{ memberId: string, assignment: Buffer }>> {
    const members = join.members.map(member => ({ memberId: member.memberId, ...decodeSubscription(member.metadata) }))
    const topics = [...new Set(members.flatMap(member => member.topics))].sort()
    const counts = new Map((await this.coordinator.topics(topics)).map(topic => [topic.name, topic.partitionCount]))
    const assignment = assignCooperativeSticky(counts, members)
    return [...assignment].map(([memberId, partitions]) => ({ memberId, assignment: encodeAssignment(partitions) }))
  }

  #startHeartbeats (connection: BrokerConnection, generationId: number): void {
    this.#stopHeartbeats()
    this.#heartbeatGeneration = generationId
    const beat = (): void => {
      this.#heartbeatTimer = setTimeout(() => {
        this.#heartbeat(connection, generationId).then(goOn => {
          if (goOn && this.#heartbeatGeneration === generationId) beat()
        }, error => {
          this.report(error)
          this.wake()
        })
      }, this.options.heartbeatIntervalMs ?? 3000)
    }
    beat()
  }

  #stopHeartbeats (): void {
    clearTimeout(this.#heartbeatTimer)
    this.#heartbeatTimer = undefined
    this.#heartbeatGeneration = -1
  }

  /** One Heartbeat; false when the session must join again (and has been woken to). */
  async #heartbeat (connection: BrokerConnection, generationId: number): Promise<boolean> {
    let code: number
    try {
      const request = { groupId: this.options.groupId, generationId, memberId: this.#memberId, groupInstanceId: this.instanceId }
      const answer = await connection.send('Heartbeat', request)
      code = answer.errorCode
    } catch (error) {
      if (this.stopping) return false
      // The connection is gone: look the coordinator up again and join (the join keeps the member's partitions).
      this.coordinator.reset()
      throw error
    }
    if (this.#heartbeatGeneration !== generationId) return false
    if (code === GroupErrors.NONE) return true
    this.#stopHeartbeats()
    if (code === GroupErrors.FENCED_INSTANCE_ID) {
      this.fail(groupError('Heartbeat', this.options.groupId, code))
      return false
    }
    if (coordinatorMoved(code)) this.coordinator.reset()
    else await this.#refused('Heartbeat', code).catch(error => this.fail(error as Error))
    this.wake()
    return false
  }

  /** KIP-345: a static member stays in the group (its instance id keeps its partitions); a dynamic one sends LeaveGroup. */
  protected async leave (): Promise<void> {
    this.#stopHeartbeats()
    if (this.instanceId !== null || this.#memberId === '') return
    const connection = await this.coordinator.connection()
    // LeaveGroup v3 (KIP-345) names the leaving members in a list; v0-2 name the one member.
    const answer = await connection.send('LeaveGroup', (connection.versionOf('LeaveGroup') ?? 0) >= 3
      ? { groupId: this.options.groupId, members: [{ memberId: this.#memberId, groupInstanceId: null, reason: 'the member stops' }] }
      : { groupId: this.options.groupId, memberId: this.#memberId })
    if (answer.errorCode !== GroupErrors.NONE && answer.errorCode !== GroupErrors.UNKNOWN_MEMBER_ID) {
      throw groupError('LeaveGroup', this.options.groupId, answer.errorCode)
    }
  }
}
