import type { AuditClient } from '../../kafka/audit-client.js'
import { ageSeconds, offsetLag, type PartitionLagRow } from './lag.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import { parsePartitionKey, partitionKey } from '../../shared/partition-key.js'

/** A member of a consumer group with its assignment, as `--describe --members` shows it. */
export interface GroupMember {
  readonly consumerId: string
  readonly host: string
  readonly clientId: string
  readonly assignment: ReadonlyArray<{ readonly topic: string, readonly partition: number }>
}

/**
 * A consumer group at one moment: state, members, and one row per partition with a committed
 * offset or an assignment, in `kafka-consumer-groups --describe` order (members with most
 * partitions first, then partitions with a committed offset but no member).
 */
export interface GroupOffsets {
  readonly group: string
  /** `Stable`, `Empty`, `PreparingRebalance`, `CompletingRebalance`, or `Dead` when the group does not exist. */
  readonly state: string
  readonly exists: boolean
  readonly rebalancing: boolean
  readonly assignmentStrategy: string
  readonly coordinator?: { readonly nodeId: number, readonly host: string, readonly port: number }
  readonly members: readonly GroupMember[]
  readonly rows: readonly PartitionLagRow[]
}

export interface GroupOffsetsOptions {
  /** Read the record at each committed offset to give LAG-SECONDS; default true. */
  readonly lagSeconds?: boolean
  /** Clock for LAG-SECONDS; default `Date.now`. */
  readonly nowMs?: () => number
  readonly withCoordinator?: boolean
}

const byTopicPartition = (a: { topic: string, partition: number }, b: { topic: string, partition: number }): number =>
  a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition

/** Consumer groups on the cluster (classic protocol type `consumer`, or groups that only hold committed offsets). */
export async function listConsumerGroups (client: AuditClient): Promise<string[]> {
  const { groups } = await client.call(() => client.admin.listGroups())
  return groups.filter(g => g.protocolType === 'consumer' || g.protocolType === '').map(g => g.groupId).sort()
}

/** One row of a group's description: a partition, and the member it is assigned to (none for a partition with only a committed offset). */
type Slot = { topic: string, partition: number, consumerId?: string, host?: string, clientId?: string }

/** The rows of a group's description, in the order of Kafka's tool: assigned partitions by member, then those with only a committed offset. */
function groupSlots (members: readonly GroupMember[], committedOffsets: ReadonlyMap<string, number>): Slot[] {
  const slots: Slot[] = []
  const assigned = new Set<string>()
  // Kafka's tool lists members with the most partitions first (a stable sort), each member's partitions by topic then partition.
  const ordered = members
    .filter(m => m.assignment.length > 0)
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.assignment.length - a.m.assignment.length || a.i - b.i)
  for (const { m } of ordered) {
    for (const tp of m.assignment) {
      assigned.add(partitionKey(tp.topic, tp.partition))
      slots.push({ ...tp, consumerId: m.consumerId, host: m.host, clientId: m.clientId })
    }
  }
  const unassigned = [...committedOffsets.keys()].filter(k => !assigned.has(k)).map(parsePartitionKey).sort(byTopicPartition)
  slots.push(...unassigned)

  return slots
}

/** Describes `group` as `kafka-consumer-groups --describe` does, plus LAG-SECONDS. */
export async function describeGroupOffsets (client: AuditClient, group: string, options: GroupOffsetsOptions = {}): Promise<GroupOffsets> {
  const description = await client.describeGroup(group)
  const state = description.state
  const members: GroupMember[] = description.members.map(m => ({
    consumerId: m.memberId,
    host: m.clientHost,
    clientId: m.clientId,
    assignment: [...m.assignment].sort(byTopicPartition),
  }))
  const committed = await client.call(() => client.admin.fetchOffsets({ groupId: group }))
  const committedOffsets = new Map<string, number>()
  for (const topic of committed) {
    for (const p of topic.partitions) if (Number(p.offset) >= 0) committedOffsets.set(partitionKey(topic.topic, p.partition), Number(p.offset))
  }
  const coordinator = options.withCoordinator === true && state !== 'Dead' ? await client.groupCoordinator(group) : undefined
  const base = {
    group,
    state,
    exists: state !== 'Dead',
    rebalancing: state === 'PreparingRebalance' || state === 'CompletingRebalance',
    assignmentStrategy: description.protocol,
    ...(coordinator === undefined ? {} : { coordinator }),
    members,
  }
  if (state === 'Dead') return { ...base, rows: [] }

  const slots = groupSlots(members, committedOffsets)

  const topics = [...new Set(slots.map(s => s.topic))]
  const ends = new Map<string, number>()
  const starts = new Map<string, number>()
  await Promise.all(topics.map(async topic => {
    const partitions = [...new Set(slots.filter(s => s.topic === topic).map(s => s.partition))]
    const [latest, earliest] = await Promise.all([client.listOffsets(topic, partitions, 'latest'), client.listOffsets(topic, partitions, 'earliest')])
    for (const [p, o] of latest) ends.set(partitionKey(topic, p), o)
    for (const [p, o] of earliest) starts.set(partitionKey(topic, p), o)
  }))
  const nowMs = options.nowMs ?? Date.now
  const rows = await Promise.all(slots.map(async (slot): Promise<PartitionLagRow> => {
    const id = partitionKey(slot.topic, slot.partition)
    const currentOffset = committedOffsets.get(id)
    const logEndOffset = ends.get(id)
    const lag = offsetLag(currentOffset, logEndOffset)
    let lagSeconds: number | undefined
    if (options.lagSeconds !== false && lag !== undefined && currentOffset !== undefined && logEndOffset !== undefined) {
      lagSeconds = 0
      if (lag > 0) {
        const reader = new PartitionReader(client, slot.topic, slot.partition, { fetchMaxBytes: 65_536, isolation: 'read_uncommitted' })
        const [record] = await reader.records(Math.max(currentOffset, starts.get(id) ?? 0), logEndOffset, 1)
        if (record !== undefined) lagSeconds = ageSeconds(Number(record.timestamp), nowMs())
      }
    }
    return {
      group,
      topic: slot.topic,
      partition: slot.partition,
      ...(currentOffset === undefined ? {} : { currentOffset }),
      ...(logEndOffset === undefined ? {} : { logEndOffset }),
      ...(lag === undefined ? {} : { lag }),
      ...(lagSeconds === undefined ? {} : { lagSeconds }),
      ...(slot.consumerId === undefined ? {} : { consumerId: slot.consumerId, host: slot.host!, clientId: slot.clientId! }),
    }
  }))
  return { ...base, rows }
}

/** Committed offsets of `group` for `topic`, by partition (partitions without one are absent). */
export async function committedOffsets (client: AuditClient, group: string, topic: string): Promise<Map<number, number>> {
  const result = await client.call(() => client.admin.fetchOffsets({ groupId: group, topics: [topic] }))
  const out = new Map<number, number>()
  for (const p of result.find(t => t.topic === topic)?.partitions ?? []) if (Number(p.offset) >= 0) out.set(p.partition, Number(p.offset))
  return out
}

/** True when `group` exists on the cluster (any state but Dead) or holds committed offsets. */
export async function groupExists (client: AuditClient, group: string): Promise<boolean> {
  return (await client.describeGroup(group)).state !== 'Dead'
}
