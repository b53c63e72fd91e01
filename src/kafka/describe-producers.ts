import { kafkajsProtocol, type ProtocolDecoder, type ProtocolRequest } from './kafkajs-internals.js'

/** DescribeProducers' API key (KIP-664, Kafka 3.0 and later); kafkajs has no method for it. */
export const DESCRIBE_PRODUCERS = 61

/** The request version built here: v0, the only one (flexible: compact strings and arrays, tagged fields). */
export const DESCRIBE_PRODUCERS_VERSIONS: readonly number[] = [0]

/** A producer the partition leader holds state for: who wrote to the partition, and when last. */
export interface ActiveProducer {
  readonly producerId: string
  readonly producerEpoch: number
  readonly lastSequence: number
  /** The max timestamp of the producer's last batch on the partition (the records' own timestamps, CreateTime unless the topic says LogAppendTime). */
  readonly lastTimestampMs: number
  /** First offset of its open transaction, -1 when none. */
  readonly currentTxnStartOffset: string
}

/** One partition's answer: its producers, or the error the leader gave. */
export interface PartitionProducers {
  readonly partition: number
  readonly errorCode: number
  readonly errorMessage: string | null
  readonly producers: readonly ActiveProducer[]
}

/**
 * DescribeProducers v0 of `partitions` of `topic`, sent to their leader.
 *
 *   Request => [topics] TAG_BUFFER
 *     topics => name [partition_indexes] TAG_BUFFER
 *   Response => throttle_time_ms [topics] TAG_BUFFER
 *     topics => name [partitions] TAG_BUFFER
 *       partitions => partition_index error_code error_message [active_producers] TAG_BUFFER
 *         active_producers => producer_id producer_epoch last_sequence last_timestamp coordinator_epoch current_txn_start_offset TAG_BUFFER
 *
 * NOTE: v0 is a flexible version (KIP-482): its request header is v2 (the v1 header plus tagged
 * fields) and its response header v1 (the correlation id plus tagged fields). kafkajs writes header
 * v1 and reads the correlation id only, so the body starts with the header's empty tagged fields
 * and the answer is read past the response header's.
 */
export function describeProducersRequest (topic: string, partitions: readonly number[]): (version: number) => ProtocolRequest {
  return version => ({
    request: {
      apiKey: DESCRIBE_PRODUCERS,
      apiVersion: version,
      apiName: 'DescribeProducers',
      encode: async () => {
        const indexes = kafkajsProtocol.encoder().writeUVarInt(partitions.length + 1)
        for (const partition of partitions) indexes.writeInt32(partition)
        const topicEntry = kafkajsProtocol.encoder().writeUVarIntString(topic).writeBuffer(bufferOf(indexes)).writeUVarInt(0)
        return kafkajsProtocol.encoder()
          .writeUVarInt(0) // the request header's tagged fields (header v2)
          .writeUVarIntArray([topicEntry], 'object')
          .writeUVarInt(0)
      },
    },
    response: {
      decode: async bytes => {
        const decoder = kafkajsProtocol.decoder(bytes)
        decoder.readTaggedFields() // the response header's (v1)
        decoder.readInt32() // throttle_time_ms
        const topics = decoder.readUVarIntArray(d => {
          d.readUVarIntString()
          const answers = d.readUVarIntArray(readPartition) ?? []
          d.readTaggedFields()
          return answers
        }) ?? []
        decoder.readTaggedFields()
        return topics.flat()
      },
      parse: async decoded => decoded,
    },
  })
}

function readPartition (d: ProtocolDecoder): PartitionProducers {
  const partition = d.readInt32()
  const errorCode = d.readInt16()
  const errorMessage = d.readUVarIntString()
  const producers = (d.readUVarIntArray((p): ActiveProducer => {
    const producerId = p.readInt64().toString()
    const producerEpoch = p.readInt32()
    const lastSequence = p.readInt32()
    const lastTimestampMs = Number(p.readInt64().toString())
    p.readInt32() // coordinator_epoch
    const currentTxnStartOffset = p.readInt64().toString()
    p.readTaggedFields()
    return { producerId, producerEpoch, lastSequence, lastTimestampMs, currentTxnStartOffset }
  }) ?? [])
  d.readTaggedFields()
  return { partition, errorCode, errorMessage, producers }
}

/** The bytes an encoder holds (kafkajs' `Encoder#buffer`). */
function bufferOf (encoder: object): Buffer {
  return (encoder as { buffer: Buffer }).buffer
}
