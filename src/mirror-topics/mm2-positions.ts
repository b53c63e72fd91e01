import { MM2_SOURCE_CONNECTOR, mm2OffsetsTopicDefault } from '../config/mm2-config.js'
import type { AuditClient } from '../kafka/audit-client.js'
import { readMm2SourcePositions } from './mm2-source-positions.js'

/** Connect's offsets topic of a MirrorMaker 2 flow from `sourceAlias`, on the target cluster (dedicated mode). */
export function mm2OffsetsTopicName (sourceAlias: string): string {
  return mm2OffsetsTopicDefault(sourceAlias)
}

/**
 * A running MirrorMaker 2 flow's position per partition of `topic`: the next source offset it will
 * copy, from the source offsets its `MirrorSourceConnector` tasks stored in Connect's offsets topic
 * (`readMm2SourcePositions`: the newest decided record of a key wins, a null value removes it);
 * `connector` is Connect's name of that connector (`<source>-><target>.MirrorSourceConnector` under Strimzi).
 * MirrorMaker 2 writes them every `offset.flush.interval.ms` (default 60 s), as the sidecar commits.
 */
export async function mm2Positions (
  target: AuditClient,
  offsetsTopic: string,
  sourceAlias: string,
  topic: string,
  connector = MM2_SOURCE_CONNECTOR
): Promise<Map<number, number>> {
  // A missing topic is an error naming the flag here (the sidecar's takeover reads it as no positions).
  await target.partitionsOf(offsetsTopic, '--mm2-offsets-topic')
  const positions = new Map<number, number>()
  for (const position of (await readMm2SourcePositions(target, offsetsTopic, connector, sourceAlias)).values()) {
    if (position.topic === topic) positions.set(position.partition, Number(position.next))
  }
  return positions
}
