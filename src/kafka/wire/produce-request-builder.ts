/**
 * Produce requests of the mirror's idempotent producer, and the per-partition results of their
 * responses. Each request carries at most one batch per partition (the broker takes one per
 * partition per request), acks=-1 (every in-sync replica: an acknowledged batch survives a leader
 * change) and no transactional id.
 */
import { batchForTarget } from '../record-batch-header.js'
import type { SequenceFields } from './idempotent-producer-state.js'
import type { ProduceRequest } from './schemas/produce-request.js'
import type { ProduceResponse } from './schemas/produce-response.js'

/** One v2 record batch for one partition, as fetched or made by the mirror. */
export interface PartitionBatch {
  readonly topic: string
  /** The topic's id (KIP-516): Produce v13 names topics by id, older versions by name. */
  readonly topicId: string
  readonly partition: number
  /** One whole v2 batch; never written to. */
  readonly bytes: Buffer
  /** Its CRC was checked against its bytes (a batch as fetched): the new CRC is derived without reading the records. */
  readonly crcChecked: boolean
}

/** What the broker answered for one partition of a Produce request. */
export interface PartitionResult {
  readonly topic: string
  readonly partition: number
  readonly errorCode: number
  /** The offset the broker gave the batch's first record (-1 on an error). */
  readonly baseOffset: bigint
  readonly logAppendTimeMs: bigint
  readonly errorMessage: string | null
}

/**
 * A Produce request for `batches` (at most one per partition), each written with its producer id, epoch
 * and base sequence (`batchForTarget`: base offset 0, leader epoch -1, the CRC over the new header and
 * the records as they are). The rewritten header and the records go as two chunks of the partition's
 * records field: the records are sent from the fetched bytes, never copied.
 */
export function produceRequest (
  batches: ReadonlyArray<{ readonly batch: PartitionBatch, readonly fields: SequenceFields }>,
  timeoutMs: number
): ProduceRequest {
  const topics = new Map<string, ProduceRequest['topicData'][number]>()
  for (const { batch, fields } of batches) {
    let topic = topics.get(batch.topic)
    if (topic === undefined) {
      topic = { name: batch.topic, topicId: batch.topicId, partitionData: [] }
      topics.set(batch.topic, topic)
    }
    if (topic.partitionData.some(data => data.index === batch.partition)) {
      throw new RangeError(`two batches for ${batch.topic}-${batch.partition} in one Produce request`)
    }
    const [header, records] = batchForTarget(batch.bytes, { ...fields, transactional: false }, batch.crcChecked)
    topic.partitionData.push({ index: batch.partition, records: [header, records] })
  }
  return { transactionalId: null, acks: -1, timeoutMs, topicData: [...topics.values()] }
}

/** The per-partition results of `response`, topics named by name (v13 names them by id: `topicNames` maps ids to names). */
export function produceResults (response: ProduceResponse, topicNames: ReadonlyMap<string, string>): PartitionResult[] {
  return response.responses.flatMap(topic => {
    const name = topic.name !== undefined && topic.name !== '' ? topic.name : topicNames.get(topic.topicId ?? '') ?? ''
    return topic.partitionResponses.map(partition => ({
      topic: name,
      partition: partition.index,
      errorCode: partition.errorCode,
      baseOffset: partition.baseOffset,
      logAppendTimeMs: partition.logAppendTimeMs,
      errorMessage: partition.errorMessage ?? null,
    }))
  })
}
