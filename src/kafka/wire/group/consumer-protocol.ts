/**
 * The bytes the classic group protocol carries for consumers (protocol type "consumer"): a member's
 * subscription in JoinGroup and its assignment in SyncGroup, as Kafka's `ConsumerProtocol` writes them
 * (`ConsumerProtocolSubscription` and `ConsumerProtocolAssignment` in `common/message/` of kafka-clients:
 * an int16 version, then the fields, no flexible versions). Members of other clients (Java's consumer
 * with the cooperative-sticky assignor) read what we write and we read theirs.
 */
import { WireReader } from '../wire-reader.js'
import { WireWriter } from '../wire-writer.js'
import { partitionsByTopic, type TopicPartition } from './topic-partition.js'

/** The newest version of both structures in Kafka 4.x (v3: the subscription's rack id, KIP-881). */
const CONSUMER_PROTOCOL_VERSION = 3

/** A member's subscription as the group leader reads it. */
export interface ConsumerSubscription {
  readonly topics: readonly string[]
  readonly userData: Buffer | null
  /** KIP-429: what the member owns as it joins (v1+; empty for older members). */
  readonly ownedPartitions: readonly TopicPartition[]
  /** The generation its owned partitions are from (v2+, KIP-792); -1 when unknown. */
  readonly generationId: number
  /** v3+ (KIP-881); null when none. */
  readonly rackId: string | null
}

function writePartitions (writer: WireWriter, partitions: readonly TopicPartition[]): void {
  const byTopic = partitionsByTopic(partitions)
  writer.arrayLength(byTopic.length, false)
  for (const { topic, partitions: list } of byTopic) {
    writer.string(topic, false).arrayLength(list.length, false)
    for (const partition of list) writer.int32(partition)
  }
}

function readPartitions (reader: WireReader): TopicPartition[] {
  const partitions: TopicPartition[] = []
  const topics = reader.arrayLength(false) ?? 0
  for (let t = 0; t < topics; t++) {
    const topic = reader.string(false) ?? ''
    const count = reader.arrayLength(false) ?? 0
    for (let p = 0; p < count; p++) partitions.push({ topic, partition: reader.int32() })
  }
  return partitions
}

/** JoinGroup's protocol metadata for `subscription` at version 3. */
export function encodeSubscription (subscription: ConsumerSubscription): Buffer {
  const writer = new WireWriter().int16(CONSUMER_PROTOCOL_VERSION)
  writer.arrayLength(subscription.topics.length, false)
  for (const topic of subscription.topics) writer.string(topic, false)
  writer.bytes(subscription.userData, false)
  writePartitions(writer, subscription.ownedPartitions)
  writer.int32(subscription.generationId)
  writer.string(subscription.rackId, false)
  return writer.toBuffer()
}

/**
 * Reads a subscription of any version. As Kafka's `ConsumerProtocol` does, a newer version than ours is
 * read as ours (later versions only add fields at the end) and fields a version lacks take their defaults.
 */
export function decodeSubscription (bytes: Buffer): ConsumerSubscription {
  const reader = new WireReader(bytes)
  const version = reader.int16()
  const count = reader.arrayLength(false) ?? 0
  const topics: string[] = []
  for (let i = 0; i < count; i++) topics.push(reader.string(false) ?? '')
  const userData = reader.bytes(false)
  const ownedPartitions = version >= 1 && reader.remaining > 0 ? readPartitions(reader) : []
  const generationId = version >= 2 && reader.remaining > 0 ? reader.int32() : -1
  const rackId = version >= 3 && reader.remaining > 0 ? reader.string(false) : null
  return { topics, userData, ownedPartitions, generationId, rackId }
}

/** SyncGroup's assignment bytes for one member, at version 3 (no user data: the cooperative-sticky assignor sends none). */
export function encodeAssignment (partitions: readonly TopicPartition[]): Buffer {
  const writer = new WireWriter().int16(CONSUMER_PROTOCOL_VERSION)
  writePartitions(writer, partitions)
  writer.bytes(null, false)
  return writer.toBuffer()
}

/** The partitions of an assignment of any version; empty bytes (a member the leader left out) are no partitions. */
export function decodeAssignment (bytes: Buffer): TopicPartition[] {
  if (bytes.length === 0) return []
  const reader = new WireReader(bytes)
  reader.int16()
  return readPartitions(reader)
}
