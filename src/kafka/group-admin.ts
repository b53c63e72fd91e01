import type { Admin, Kafka } from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { errorLabel, ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'
import { createInternalCluster, type InternalCluster } from './kafkajs-internals.js'

/** One topic of a ListOffsets request: its partitions, each with the timestamp asked for. */
interface ListOffsetsTopic { readonly topic: string, readonly partitions: Array<{ partition: number, timestamp: number }> }

/** Kafka errors of a coordinator that moved or is still loading: an outside commit is tried again. */
const COORDINATOR_CODES = new Set([
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP',
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS',
])
/** Attempts of an outside commit in all (some 6 s of backoff at most). */
const COMMIT_ATTEMPTS = 6

/**
 * How old the partition leaders `logOffsetsOf` keeps may get (kafkajs' consumer default,
 * `metadata.max.age.ms` 5 minutes): partitions added to a topic are seen within it; a new topic, a
 * moved leader or a recreated topic at once (missing from it, or the brokers' answer makes the
 * next attempt ask again).
 */
const METADATA_MAX_AGE_MS = 300_000
/** ListOffsets timestamps: the log start offset, and the high watermark. */
const EARLIEST_TIMESTAMP = -2
const LATEST_TIMESTAMP = -1
/**
 * ListOffsets isolation level 0 (READ_UNCOMMITTED): the answer for LATEST is the high watermark.
 * kafkajs asks READ_COMMITTED by default, which answers the last stable offset: below records an
 * open transaction holds, so a mirror's transaction kept open through an outage would read as
 * records gone from the target.
 */
const READ_UNCOMMITTED = 0
/** Answers of brokers to a client whose metadata is stale: refreshed and asked once more. */
const STALE_METADATA_CODES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
])

/** Log start offset and high watermark of one partition. */
export interface PartitionLogOffsets {
  readonly logStartOffset: bigint
  readonly highWatermark: bigint
}

/** A committed offset of a group: the next offset the group would read. */
export interface GroupOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
}

/** What a group coordinator says about a group: its state and how many members it has. */
export interface GroupDescription {
  readonly groupId: string
  /** `Empty`, `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Dead` (the group does not exist). */
  readonly state: string
  readonly members: number
}

/** Consumer-group requests on one cluster (list, describe, committed offsets, simple commits), behind start()/stop(). */
export class GroupAdmin {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  #kafka: Kafka | undefined
  #admin: Admin | undefined
  #cluster: InternalCluster | undefined
  /** The internal cluster's connect in flight, shared by concurrent commits (kafkajs' broker pool would open a seed broker per caller). */
  #connecting: Promise<void> | undefined
  /** The partitions and leaders of every topic, from one Metadata answer (`logOffsetsOf`). */
  #leaders: { readonly atMs: number, readonly byTopic: ReadonlyMap<string, ReadonlyArray<{ partitionId: number, leader: number }>> } | undefined
  /**
   * The ListOffsets topics per leader that `logOffsetsOf` last built, for the leaders and topics
   * they were built from: the loss monitor asks for the same topics every check, so the 20,000
   * request entries of 10,000 partitions are made once (and kafkajs' patched encoder keeps the
   * bytes of a topics array it encoded before). Never changed once built.
   */
  #requests:
    | {
      readonly leaders: ReadonlyMap<string, unknown>
      readonly wanted: readonly string[]
      readonly byLeader: ReadonlyMap<number, { readonly earliest: ListOffsetsTopic[], readonly latest: ListOffsetsTopic[] }>
    }
    | undefined

  constructor (connection: ClusterConnection, logger: Logger) {
    this.#connection = connection
    this.#logger = logger
  }

  get alias (): string {
    return this.#connection.alias
  }

  async start (): Promise<void> {
    const kafka = createKafkaClient(this.#connection, this.#logger)
    const admin = kafka.admin({ retry: { retries: 3, initialRetryTime: 300 } })
    try {
      await admin.connect()
    } catch (error) {
      throw toMirrorError(
        error,
        `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
        ErrorCodes.CONNECTION,
        this.#connection
      )
    }
    this.#kafka = kafka
    this.#admin = admin
  }

  #client (): Admin {
    if (this.#admin === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'GroupAdmin used before start()')
    return this.#admin
  }

  async listGroups (): Promise<string[]> {
    try {
      return (await this.#client().listGroups()).groups.map(g => g.groupId)
    } catch (error) {
      throw toMirrorError(error, `listing consumer groups on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  async describe (groupId: string): Promise<GroupDescription> {
    try {
      const { groups } = await this.#client().describeGroups([groupId])
      const group = groups[0]
      return { groupId, state: group?.state ?? 'Dead', members: group?.members.length ?? 0 }
    } catch (error) {
      throw toMirrorError(error, `describing group "${groupId}" on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /**
   * Describes `groupIds` together: one DescribeGroups request per group coordinator (kafkajs finds
   * each group's coordinator, then asks each coordinator once for all its groups). A group that
   * does not exist reads as `Dead` with no members.
   */
  async describeAll (groupIds: readonly string[]): Promise<Map<string, GroupDescription>> {
    const out = new Map<string, GroupDescription>()
    if (groupIds.length === 0) return out
    try {
      const { groups } = await this.#client().describeGroups([...new Set(groupIds)])
      for (const g of groups) out.set(g.groupId, { groupId: g.groupId, state: g.state, members: g.members.length })
    } catch (error) {
      throw toMirrorError(error, `describing ${groupIds.length} groups on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
    for (const groupId of groupIds) if (!out.has(groupId)) out.set(groupId, { groupId, state: 'Dead', members: 0 })
    return out
  }

  /**
   * Committed offsets of each of `groupIds` (as `committedOffsets`), `concurrency` OffsetFetch
   * requests in flight. kafkajs speaks OffsetFetch v4, one group a request; the batched form of
   * KIP-709 (v8, several groups a request) is not in it.
   */
  async committedOffsetsOfGroups (groupIds: readonly string[], topics: readonly string[] | undefined, concurrency = 16): Promise<Map<string, GroupOffset[]>> {
    const out = new Map<string, GroupOffset[]>()
    const queue = [...new Set(groupIds)]
    const worker = async (): Promise<void> => {
      for (let group = queue.shift(); group !== undefined; group = queue.shift()) out.set(group, await this.committedOffsets(group, topics))
    }
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker))
    return out
  }

  /** Committed offsets of `groupId` (of `topics`, or all it has), partitions without a commit left out. */
  async committedOffsets (groupId: string, topics?: readonly string[]): Promise<GroupOffset[]> {
    try {
      const result = await this.#client().fetchOffsets({ groupId, ...(topics === undefined ? {} : { topics: [...topics] }) })
      const offsets: GroupOffset[] = []
      for (const { topic, partitions } of result) {
        for (const p of partitions) if (BigInt(p.offset) >= 0n) offsets.push({ topic, partition: p.partition, offset: BigInt(p.offset) })
      }
      return offsets
    } catch (error) {
      throw toMirrorError(
        error,
        `reading committed offsets of group "${groupId}" on the ${this.#connection.alias} cluster failed`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
  }

  /**
   * Committed offsets of `groupId` as stored, negative ones included: kafkajs commits -2 (earliest)
   * or -1 (latest) when it resets a partition after OFFSET_OUT_OF_RANGE.
   */
  async storedOffsets (groupId: string): Promise<GroupOffset[]> {
    try {
      const result = await this.#client().fetchOffsets({ groupId })
      return result.flatMap(({ topic, partitions }) => partitions.map(p => ({ topic, partition: p.partition, offset: BigInt(p.offset) })))
    } catch (error) {
      throw toMirrorError(
        error,
        `reading committed offsets of group "${groupId}" on the ${this.#connection.alias} cluster failed`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
  }

  /** Log end offsets (high watermarks) of `topic` by partition. */
  async endOffsets (topic: string): Promise<Map<number, bigint>> {
    try {
      const offsets = await this.#client().fetchTopicOffsets(topic)
      return new Map(offsets.map(o => [o.partition, BigInt(o.high)]))
    } catch (error) {
      throw toMirrorError(error, `reading end offsets of ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /**
   * Names of the cluster's topics: one Metadata request (kafkajs' `admin.listTopics` first
   * refreshed the metadata of every topic its admin had been asked about, its metadata never being fresh).
   */
  async topicNames (): Promise<Set<string>> {
    const cluster = this.#internalCluster()
    try {
      await cluster.connect()
      const { topicMetadata } = await cluster.metadata()
      return new Set(topicMetadata.map(t => t.topic))
    } catch (error) {
      throw toMirrorError(error, `listing topics on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /** Log start offset and high watermark of each partition of `topic` (a topic the cluster does not have reads as no partitions). */
  async logOffsets (topic: string): Promise<Map<number, PartitionLogOffsets>> {
    return (await this.logOffsetsOf([topic])).get(topic) ?? new Map()
  }

  /**
   * Log start offset and high watermark (read uncommitted) of each partition of each of `topics`, by topic: two
   * ListOffsets requests per leader broker for all of them. A topic the cluster does not have (in
   * a Metadata answer asked for because the topic was not in the one kept, or because a broker
   * answered as if it were stale) is left out. Partition leaders come from one Metadata request of
   * all the cluster's topics, kept for `METADATA_MAX_AGE_MS`, so a read of topics known to exist
   * costs no Metadata request. kafkajs' `admin.fetchTopicOffsets` instead asked for the metadata
   * of every topic it had been asked about before each topic's offsets (its admin's metadata never
   * stays fresh): at 1,250 topics read one by one, 1,250 Metadata answers of up to 10,000
   * partitions each per round.
   */
  /** The next `logOffsetsOf` asks for the partition leaders again (a partition was missing from the one kept: partitions were added). */
  forgetLeaders (): void {
    this.#leaders = undefined
    this.#requests = undefined
  }

  async logOffsetsOf (topics: readonly string[]): Promise<Map<string, Map<number, PartitionLogOffsets>>> {
    if (topics.length === 0) return new Map()
    const cluster = this.#internalCluster()
    const wanted = [...new Set(topics)]
    return await retry(
      async attempt => {
        try {
          await cluster.connect()
          const leaders = await this.#partitionLeaders(cluster, wanted, attempt > 1)
          const byLeader = this.#listOffsetsRequests(leaders, wanted)
          const result = new Map<string, Map<number, PartitionLogOffsets>>()
          for (const topic of wanted) if (leaders.has(topic)) result.set(topic, new Map())
          await Promise.all(
            [...byLeader].map(async ([leader, { earliest, latest }]) => {
              const broker = await cluster.findBroker({ nodeId: String(leader) })
              const [starts, ends] = await Promise.all([
                broker.listOffsets({ isolationLevel: READ_UNCOMMITTED, topics: earliest }),
                broker.listOffsets({ isolationLevel: READ_UNCOMMITTED, topics: latest }),
              ])
              // This leader's log start offsets by topic, then partition, as kafkajs decodes them (decimal strings); then each
              // partition's pair straight into the result (nothing per partition kept across leaders but the result).
              const startOf = new Map<string, Map<number, string>>()
              for (const { topic, partitions } of starts.responses) {
                let ofTopic = startOf.get(topic)
                if (ofTopic === undefined) startOf.set(topic, (ofTopic = new Map()))
                for (const { partition, offset } of partitions) ofTopic.set(partition, offset)
              }
              for (const { topic, partitions } of ends.responses) {
                const offsets = result.get(topic)
                const startsOfTopic = startOf.get(topic)
                if (offsets === undefined || startsOfTopic === undefined) continue
                for (const { partition, offset } of partitions) {
                  const start = startsOfTopic.get(partition)
                  if (start !== undefined) offsets.set(partition, { logStartOffset: BigInt(start), highWatermark: BigInt(offset) })
                }
              }
            })
          )
          return result
        } catch (error) {
          this.#leaders = undefined
          this.#requests = undefined
          const names = wanted.length === 1 ? wanted[0] : `${wanted.length} topics`
          throw toMirrorError(error, `reading log offsets of ${names} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
        }
      },
      { maxAttempts: 2, initialBackoffMs: 100, shouldRetry: error => STALE_METADATA_CODES.has(errorLabel(error)) }
    )
  }

  /**
   * Per leader: the ListOffsets topics of its partitions among `wanted`, one array per timestamp
   * (the last ones again when built from the same leaders for the same topics).
   */
  #listOffsetsRequests (
    leaders: ReadonlyMap<string, ReadonlyArray<{ partitionId: number, leader: number }>>,
    wanted: readonly string[]
  ): ReadonlyMap<number, { readonly earliest: ListOffsetsTopic[], readonly latest: ListOffsetsTopic[] }> {
    const last = this.#requests
    if (last !== undefined && last.leaders === leaders && last.wanted.length === wanted.length && last.wanted.every((topic, i) => topic === wanted[i])) {
      return last.byLeader
    }
    const byLeader = new Map<number, { earliest: ListOffsetsTopic[], latest: ListOffsetsTopic[] }>()
    for (const topic of wanted) {
      const partitions = leaders.get(topic)
      if (partitions === undefined) continue
      const ofLeader = new Map<number, { earliest: ListOffsetsTopic, latest: ListOffsetsTopic }>()
      for (const { partitionId, leader } of partitions) {
        let request = ofLeader.get(leader)
        if (request === undefined) {
          request = { earliest: { topic, partitions: [] }, latest: { topic, partitions: [] } }
          ofLeader.set(leader, request)
          let all = byLeader.get(leader)
          if (all === undefined) byLeader.set(leader, (all = { earliest: [], latest: [] }))
          all.earliest.push(request.earliest)
          all.latest.push(request.latest)
        }
        request.earliest.partitions.push({ partition: partitionId, timestamp: EARLIEST_TIMESTAMP })
        request.latest.partitions.push({ partition: partitionId, timestamp: LATEST_TIMESTAMP })
      }
    }
    this.#requests = { leaders, wanted: [...wanted], byLeader }
    return byLeader
  }

  /**
   * Partitions and their leaders by topic, from the cached Metadata answer of all topics (asked
   * again when `refresh`, too old, or a topic of `topics` is not in it).
   */
  async #partitionLeaders (
    cluster: InternalCluster,
    topics: readonly string[],
    refresh: boolean
  ): Promise<ReadonlyMap<string, ReadonlyArray<{ partitionId: number, leader: number }>>> {
    const cached = this.#leaders
    if (!refresh && cached !== undefined && Date.now() - cached.atMs <= METADATA_MAX_AGE_MS && topics.every(topic => cached.byTopic.has(topic))) {
      return cached.byTopic
    }
    const { topicMetadata } = await cluster.metadata()
    const byTopic = new Map(topicMetadata.map(t => [t.topic, t.partitionMetadata.map(p => ({ partitionId: p.partitionId, leader: p.leader }))]))
    this.#leaders = { atMs: Date.now(), byTopic }
    return byTopic
  }

  /** The kafkajs cluster object for requests its admin has no API for, or none that scales (made on first use). */
  #internalCluster (): InternalCluster {
    if (this.#kafka === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'GroupAdmin used before start()')
    this.#cluster ??= createInternalCluster(this.#kafka, { metadataMaxAge: METADATA_MAX_AGE_MS })
    return this.#cluster
  }

  /**
   * Commits `offsets` for `groupId` as an outside admin (generation -1, no member). The broker
   * refuses it while the group has members: then this throws a MirrorError whose `kafkaCode` is
   * UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION, and nothing was written.
   * A coordinator that moved or is still loading is asked again, up to 6 attempts in all.
   *
   * kafkajs' own `admin.setOffsets` joins the group as a member to commit, which would race with a
   * consumer starting on the target. The Java AdminClient's alterConsumerGroupOffsets instead sends
   * an OffsetCommit with generation -1 and no member id, which the coordinator accepts only while
   * the group has no members: the check and the write are one atomic step on the broker. kafkajs
   * has that request but no public API for it, so it goes through kafkajs' internal cluster object
   * (`createInternalCluster`).
   */
  async commitOffsets (groupId: string, offsets: readonly GroupOffset[]): Promise<void> {
    if (offsets.length === 0) return
    this.#internalCluster()
    const byTopic = new Map<string, Array<{ partition: number, offset: string }>>()
    for (const { topic, partition, offset } of offsets) {
      const list = byTopic.get(topic) ?? []
      list.push({ partition, offset: offset.toString() })
      byTopic.set(topic, list)
    }
    const cluster = this.#internalCluster()
    const topics = [...byTopic].map(([topic, partitions]) => ({ topic, partitions }))
    // The same commit again is harmless; only a moving or loading coordinator is retried (a cluster's
    // first group creates __consumer_offsets), never a refusal because the group has members.
    await retry(
      async () => {
        try {
          await this.#connectCluster(cluster)
          const coordinator = await cluster.findGroupCoordinator({ groupId })
          await coordinator.offsetCommit({ groupId, groupGenerationId: -1, memberId: '', topics })
        } catch (error) {
          throw toMirrorError(
            error,
            `committing offsets of group "${groupId}" on the ${this.#connection.alias} cluster failed`,
            ErrorCodes.COMMIT_FAILED,
            this.#connection
          )
        }
      },
      { maxAttempts: COMMIT_ATTEMPTS, initialBackoffMs: 200, shouldRetry: error => COORDINATOR_CODES.has(errorLabel(error)) }
    )
  }

  /** `cluster.connect()`, one call in flight at a time: a connected cluster returns at once, a dropped one connects again. */
  async #connectCluster (cluster: InternalCluster): Promise<void> {
    const pending = this.#connecting ?? cluster.connect().finally(() => { this.#connecting = undefined })
    this.#connecting = pending
    await pending
  }

  async stop (): Promise<void> {
    const admin = this.#admin
    const cluster = this.#cluster
    this.#admin = undefined
    this.#cluster = undefined
    this.#connecting = undefined
    this.#kafka = undefined
    await admin?.disconnect().catch(error => this.#logger.warn('group admin did not disconnect cleanly', { error }))
    await cluster?.disconnect().catch(error => this.#logger.warn('group admin cluster did not disconnect cleanly', { error }))
  }
}
