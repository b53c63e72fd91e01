import type { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'

/** One source partition's records not yet on the target at one moment. */
export interface UnmirroredPartition {
  readonly topic: string
  readonly partition: number
  /** The source's log end offset (high watermark) at that moment. */
  readonly sourceEndOffset: bigint
  /** How far the mirror copied (exclusive source offset), from the offset syncs; undefined when it has no sync for the partition. */
  readonly mirroredUpTo?: bigint
  /** Source offsets at or past `mirroredUpTo` below the end: records the target does not hold (all of them without syncs). */
  readonly records: bigint
}

/**
 * Records of each partition on the source past the last one the mirror copied, from the source's
 * end offsets and the offset syncs (the end of the furthest range, or the mirror's position when
 * further): what a failover at that moment leaves behind on the source. Pure. Offsets in that
 * span that hold no record (transaction markers) are counted too, so the count is an upper bound
 * by those markers, never below the records missing. Records below the source's log start are gone and not counted.
 */
export function unmirroredRecords (
  syncs: OffsetSyncIndex,
  logs: ReadonlyArray<{ topic: string, partition: number, logStartOffset: bigint, endOffset: bigint }>
): UnmirroredPartition[] {
  return logs.map(({ topic, partition, logStartOffset, endOffset }) => {
    let upTo: bigint | undefined
    for (const range of syncs.ranges(topic, partition)) {
      const end = range.sourceStart + range.length
      if (upTo === undefined || end > upTo) upTo = end
    }
    const position = syncs.position(topic, partition)
    if (position !== undefined && (upTo === undefined || position.sourceNext > upTo)) upTo = position.sourceNext
    // Records below the log start are gone from the source: not counted.
    const from = upTo === undefined || upTo < logStartOffset ? logStartOffset : upTo
    return {
      topic,
      partition,
      sourceEndOffset: endOffset,
      ...(upTo === undefined ? {} : { mirroredUpTo: upTo }),
      records: endOffset > from ? endOffset - from : 0n,
    }
  })
}
