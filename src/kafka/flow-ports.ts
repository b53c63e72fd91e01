import { hasMessageHandler } from '../config/message-handler-config.js'
import { producerLaneCount, type FlowConfig } from '../config/mirror-config.js'
import type { FlowPorts, RecordSink } from '../ports/ports.js'
import type { Logger } from '../shared/logger.js'
import { KafkaRecordSink } from './record-sink.js'
import { KafkaTransactionalSink } from './transactional-sink.js'
import { KafkaPositionStore } from './position-store.js'
import { bucketAssigner } from './bucket-assigner.js'
import type { MirrorProducerFilter } from './batch-handover.js'
import { KafkaRecordSource } from './record-source.js'
import type { StartOffset } from './start-offset.js'
import { TopicAdmin } from './topic-admin.js'
import { forwardingPolicy, type ForwardingPolicy } from './forwarded-record-batch.js'
import { targetProducerOf } from './target-producer.js'
import { wireClusterOptions } from './wire/wire-connection-options.js'
import { WireRecordSink } from './wire-record-sink.js'
import { WireRecordSource } from './wire-record-source.js'
import { sourceConsumerOf } from './source-consumer.js'

/**
 * What the flow's record source forwards undecoded: nothing when pass-through is off or a message
 * handler reads every record (then every batch is decoded, one at a time, with that reason).
 */
function batchForwarding (flow: FlowConfig): ForwardingPolicy {
  const decodeAll = hasMessageHandler(flow) ? 'message_handler' : flow.passThrough === 'off' ? 'disabled' : undefined
  return forwardingPolicy(decodeAll, flow.producer.compressionSet ? flow.producer.compression : undefined, flow.producer.maxRequestSizeBytes)
}

/** One at-least-once producer lane of `flow`: the wire layer's or kafkajs' sink, as `targetProducerOf` decides. */
function recordSink (flow: FlowConfig, logger: Logger, publish: ((producerId: bigint) => Promise<void>) | undefined): RecordSink {
  const wire = targetProducerOf(flow, process.env) === 'wire' ? wireClusterOptions(flow.target, logger) : undefined
  return wire === undefined
    ? new KafkaRecordSink(flow.target, flow.producer, logger, publish)
    : new WireRecordSink(flow.target, wire, flow.producer, logger, publish)
}

/** Active-active support: publishes this flow's producer ids, and recognises the opposite mirror's (see `sidecar/offsets/mirror-producers.ts`). */
export interface MirrorProducerLinks extends MirrorProducerFilter {
  publish: (producerId: bigint) => Promise<void>
}

/**
 * The kafkajs adapters of one flow: the source group, one producer per lane, an admin per cluster.
 * `startOffset` says where a partition the group has no committed offset for starts (see `KafkaRecordSource`).
 */
export function kafkaFlowPorts (flow: FlowConfig, logger: Logger, producers?: MirrorProducerLinks, startOffset?: StartOffset): FlowPorts {
  const flowLogger = logger.child({ flow: flow.name })
  const publish = producers === undefined ? undefined : (id: bigint) => producers.publish(id)
  const exactlyOnce = flow.exactlyOnce
  const wireSource = sourceConsumerOf(flow, process.env) === 'wire'
  if (!wireSource && flow.consumer.clientRack !== undefined) {
    flowLogger.warn('client.rack is ignored: the kafkajs source reads from partition leaders; MIRROR_SOURCE_CONSUMER=wire fetches from the rack (KIP-392)', {
      clientRack: flow.consumer.clientRack,
    })
  }
  if (exactlyOnce !== undefined) {
    // One transactional id per lane, the same in every process of the flow; the bucket assignor keeps each lane's partitions on one member.
    const sinks = Array.from({ length: flow.numProducers }, (_, lane) => new KafkaTransactionalSink(flow.target, flow.producer, {
      transactionalIds: [`${flow.consumer.groupId}.lane-${lane}`, `${flow.consumer.groupId}.lane-${lane}.2`],
      transactionTimeoutMs: exactlyOnce.transactionTimeoutMs,
      positionsTopic: exactlyOnce.positionsTopic,
      groupId: flow.consumer.groupId,
      ...(publish === undefined ? {} : { onProducerStarted: publish }),
    }, flowLogger.child({ lane })))
    // Made once: its start time (the group keeps the lane count of the process that started first) is the process's, not the subscription's.
    const assigner = bucketAssigner(flow.numProducers)
    return {
      source: () => new KafkaRecordSource(flow.source, flow.consumer, flow.numStreams, flowLogger, batchForwarding(flow), producers, [assigner], startOffset),
      sinks,
      exactlyOnce: { sinks, positions: new KafkaPositionStore(flow.target, exactlyOnce, flow.consumer.groupId, flowLogger) },
      sourceTopics: new TopicAdmin(flow.source, flowLogger),
      targetTopics: new TopicAdmin(flow.target, flowLogger, flow.incrementalAlterConfigs),
    }
  }
  return {
    source: () => wireSource
      ? new WireRecordSource(flow.source, flow.consumer, flowLogger, batchForwarding(flow), producers, startOffset)
      : new KafkaRecordSource(flow.source, flow.consumer, flow.numStreams, flowLogger, batchForwarding(flow), producers, undefined, startOffset),
    sinks: Array.from({ length: producerLaneCount(flow) }, () => recordSink(flow, flowLogger, publish)),
    sourceTopics: new TopicAdmin(flow.source, flowLogger),
    targetTopics: new TopicAdmin(flow.target, flowLogger, flow.incrementalAlterConfigs),
  }
}
