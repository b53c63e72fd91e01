/**
 * A checkpoint (`mirror-checkpoints.<alias>.internal` on the target, one partition, compacted, as
 * MirrorMaker 2's `<alias>.checkpoints.internal`): group `group` had committed `sourceOffset` on
 * the source partition, which is `targetOffset` on the target. Written when a translation changes.
 * Key: JSON `[group, sourceTopic, partition]`; value: JSON with offsets as decimal strings.
 */
export interface Checkpoint {
  readonly group: string
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly sourceOffset: bigint
  readonly targetOffset: bigint
  readonly timestampMs: number
}

export function checkpointKey (group: string, sourceTopic: string, partition: number): string {
  return JSON.stringify([group, sourceTopic, partition])
}

export function encodeCheckpoint (checkpoint: Checkpoint): { key: string, value: string } {
  return {
    key: checkpointKey(checkpoint.group, checkpoint.sourceTopic, checkpoint.partition),
    value: JSON.stringify({
      v: 1,
      group: checkpoint.group,
      sourceTopic: checkpoint.sourceTopic,
      targetTopic: checkpoint.targetTopic,
      partition: checkpoint.partition,
      sourceOffset: checkpoint.sourceOffset.toString(),
      targetOffset: checkpoint.targetOffset.toString(),
      timestampMs: checkpoint.timestampMs,
    }),
  }
}

export function decodeCheckpoint (value: string | null): Checkpoint | undefined {
  if (value === null) return undefined
  try {
    const v = JSON.parse(value) as Record<string, unknown>
    if (v.v !== 1 || typeof v.group !== 'string' || typeof v.sourceTopic !== 'string' || typeof v.targetTopic !== 'string' || typeof v.partition !== 'number' ||
      typeof v.sourceOffset !== 'string' || typeof v.targetOffset !== 'string' || typeof v.timestampMs !== 'number') return undefined
    return { group: v.group, sourceTopic: v.sourceTopic, targetTopic: v.targetTopic, partition: v.partition, sourceOffset: BigInt(v.sourceOffset), targetOffset: BigInt(v.targetOffset), timestampMs: v.timestampMs }
  } catch {
    return undefined
  }
}
