import type { FlowConfig } from '../../config/mirror-config.js'
import { AuditClient } from '../../kafka/audit-client.js'
import { GroupAdmin } from '../../kafka/group-admin.js'
import { decodePosition } from '../../kafka/position-record.js'
import { partitionKey } from '../../shared/partition-key.js'
import { MirrorError } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { readDecided, readMm2SourcePositions } from '../../mirror-topics/mm2-source-positions.js'
import { planStarts, type PartitionLog, type PartitionStart } from './start-plan.js'

/** Where every partition of one flow starts, as read from the clusters. */
export interface FlowStartPlan {
  readonly flow: string
  readonly groupId: string
  /** Where MirrorMaker 2's positions were looked for, and how many of this flow's partitions it had one for; absent for a flow of MirrorMaker 1 flags. */
  readonly mm2?: { readonly offsetsTopic: string, readonly cluster: string, readonly connector: string, readonly read: boolean, readonly found: number }
  readonly partitions: readonly PartitionStart[]
}

/** Answers of a group coordinator refusing an outside commit because the group has members. */
const MEMBER_REFUSALS = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION'])

/**
 * Reads where each partition of a flow starts (`planStarts`): the flow's own group on the source,
 * its exactly-once positions and MirrorMaker 2's positions (Connect's offsets topic) on the
 * target, the source partitions' logs. `takeOverFromMm2` commits MirrorMaker 2's positions into
 * the flow's group for the partitions that start from them, before the flow's consumers join.
 * Short-lived: `start()`, one or two reads, `stop()`.
 */
class StartPositions {
  readonly #flow: FlowConfig
  readonly #logger: Logger
  readonly #source: GroupAdmin
  #target: AuditClient | undefined

  constructor (flow: FlowConfig, logger: Logger) {
    this.#flow = flow
    this.#logger = logger
    this.#source = new GroupAdmin(flow.source, logger)
  }

  async start (): Promise<void> {
    await this.#source.start()
  }

  async #targetClient (): Promise<AuditClient> {
    if (this.#target === undefined) {
      const client = new AuditClient(this.#flow.target, { logger: this.#logger, retries: 3, requestTimeoutMs: 30_000 })
      await client.connect()
      this.#target = client
    }
    return this.#target
  }

  /**
   * Where each partition of the flow's source topics starts. MirrorMaker 2's positions are read
   * when `readMm2` is `always`, or with `missing` only when some partition has no position of the
   * flow's own (a restart after the takeover reads nothing more).
   */
  async plan (readMm2: 'always' | 'missing'): Promise<FlowStartPlan> {
    const flow = this.#flow
    const groupId = flow.consumer.groupId
    const topics = [...await this.#source.topicNames()].filter(topic => flow.topics.matches(topic)).sort()
    const logs = await this.#source.logOffsetsOf(topics)
    const partitions: PartitionLog[] = []
    for (const topic of topics) {
      for (const [partition, log] of [...(logs.get(topic) ?? new Map())].sort((a, b) => a[0] - b[0])) partitions.push({ topic, partition, ...log })
    }
    const committed = new Map<string, bigint>()
    if (topics.length > 0) {
      for (const offset of await this.#source.committedOffsets(groupId, topics)) committed.set(partitionKey(offset.topic, offset.partition), offset.offset)
    }
    const positions = flow.exactlyOnce === undefined ? undefined : await this.#exactlyOncePositions(flow.exactlyOnce.positionsTopic, groupId)
    const own = (key: string): boolean => committed.has(key) || (positions?.has(key) ?? false)
    const mm2 = new Map<string, bigint>()
    const where = flow.mm2Positions
    const read = where !== undefined && (readMm2 === 'always' || partitions.some(p => !own(partitionKey(p.topic, p.partition))))
    if (where !== undefined && read) {
      for (const [key, position] of await readMm2SourcePositions(await this.#targetClient(), where.offsetsTopic, where.connector, flow.source.alias)) {
        mm2.set(key, position.next)
      }
    }
    const starts = planStarts({ partitions, committed, mm2, autoOffsetReset: flow.consumer.autoOffsetReset, ...(positions === undefined ? {} : { positions }) })
    return {
      flow: flow.name,
      groupId,
      ...(where === undefined
        ? {}
        : {
            mm2: {
              offsetsTopic: where.offsetsTopic,
              cluster: flow.target.alias,
              connector: where.connector,
              read,
              found: starts.filter(s => s.mm2Next !== undefined).length,
            },
          }),
      partitions: starts,
    }
  }

  /** The flow's exactly-once positions on the target (`mirror-positions.<source>.internal`), read as committed; empty before its first transaction. */
  async #exactlyOncePositions (topic: string, groupId: string): Promise<Map<string, bigint>> {
    const found = new Map<string, bigint>()
    const target = await this.#targetClient()
    if (!await target.hasTopic(topic)) return found
    await readDecided(target, topic, (key, value) => {
      const position = decodePosition(key, value)
      if (position !== undefined && position.group === groupId) found.set(partitionKey(position.topic, position.partition), position.offset)
    })
    return found
  }

  /**
   * The partitions that start from MirrorMaker 2's position (none of the flow's own), with those
   * positions committed into the flow's group on the source when the coordinator takes it; then
   * one line. The plan is checked again just before the commit: a partition the group committed
   * since the plan was read (another process of the flow copied it and stopped) keeps that offset,
   * so no group offset goes back. The commit is an outside one (generation -1, as the AdminClient's
   * alterConsumerGroupOffsets of KIP-396), which the coordinator takes only while the group has no
   * members. While it has some (another process of
   * the flow runs: a rolling restart after the topic filter widened), nothing is committed here:
   * each such partition starts from MirrorMaker 2's position once this process is assigned it and
   * finds no offset of the group's, committed through its member in the group's generation
   * (`KafkaRecordSource` `startOffset`, called with what this returns).
   */
  async takeOverFromMm2 (): Promise<PartitionStart[]> {
    const flow = this.#flow
    const plan = await this.plan('missing')
    const planned = plan.partitions.filter(p => p.from === 'mm2')
    if (planned.length === 0 || plan.mm2 === undefined) return []
    const since = await this.#source.committedOffsets(plan.groupId, [...new Set(planned.map(p => p.topic))])
    const committedSince = new Set(since.map(offset => partitionKey(offset.topic, offset.partition)))
    const taken = planned.filter(p => !committedSince.has(partitionKey(p.topic, p.partition)))
    if (taken.length === 0) return []
    const fields = {
      flow: flow.name,
      partitions: taken.length,
      topics: new Set(taken.map(p => p.topic)).size,
      from: `${plan.mm2.offsetsTopic} on ${plan.mm2.cluster}`,
      connector: plan.mm2.connector,
      group: plan.groupId,
    }
    try {
      await this.#source.commitOffsets(plan.groupId, taken)
      this.#logger.info('took over from MirrorMaker 2', fields)
    } catch (error) {
      if (!(error instanceof MirrorError && MEMBER_REFUSALS.has(error.kafkaCode ?? ''))) throw error
      this.#logger.info(
        "the group has members (another process of the flow): each partition it has no offset for starts from MirrorMaker 2's position when assigned here",
        fields
      )
    }
    for (const start of taken) {
      if (start.note !== undefined) {
        this.#logger.warn('took over a partition from MirrorMaker 2 past a gap', {
          flow: flow.name,
          topic: start.topic,
          partition: start.partition,
          note: start.note,
        })
      }
    }
    return taken
  }

  async stop (): Promise<void> {
    const target = this.#target
    this.#target = undefined
    await Promise.all([this.#source.stop(), target?.close()])
  }
}

/** Runs `use` on a started `StartPositions` of `flow`, stopping it after. */
export async function withStartPositions<T> (flow: FlowConfig, logger: Logger, use: (positions: StartPositions) => Promise<T>): Promise<T> {
  const positions = new StartPositions(flow, logger)
  try {
    await positions.start()
    return await use(positions)
  } finally {
    await positions.stop()
  }
}
