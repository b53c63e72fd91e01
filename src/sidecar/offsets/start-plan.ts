import { partitionKey } from '../../shared/partition-key.js'

/**
 * Why a partition starts where it does, in the order they are tried: the flow's exactly-once
 * position on the target, its own group's committed offset on the source, MirrorMaker 2's
 * position in Connect's offsets topic, `auto.offset.reset`.
 */
export type StartSource = 'positions' | 'group' | 'mm2' | 'reset'

/** Where one source partition starts, and why. */
export interface PartitionStart {
  readonly topic: string
  readonly partition: number
  /** The next source offset the flow copies. */
  readonly offset: bigint
  readonly from: StartSource
  /** MirrorMaker 2's position (its stored offset + 1), when it stored one. */
  readonly mm2Next?: bigint
  /** What an operator should know about this partition's start; absent when there is nothing to say. */
  readonly note?: string
}

/** One source partition's log: the log start offset and the high watermark. */
export interface PartitionLog {
  readonly topic: string
  readonly partition: number
  readonly logStartOffset: bigint
  readonly highWatermark: bigint
}

export interface StartPlanInput {
  readonly partitions: readonly PartitionLog[]
  /** The flow's group's committed offsets by `partitionKey`. */
  readonly committed: ReadonlyMap<string, bigint>
  /** The flow's exactly-once positions by `partitionKey` (exactly-once flows only). */
  readonly positions?: ReadonlyMap<string, bigint>
  /** MirrorMaker 2's positions (next offset) by `partitionKey`. */
  readonly mm2: ReadonlyMap<string, bigint>
  readonly autoOffsetReset: 'earliest' | 'latest'
}

/**
 * Where each partition starts. The flow's own position wins over MirrorMaker 2's whenever it has
 * one: it is what this flow copied, and MirrorMaker 2's is only newer after MirrorMaker 2 ran again
 * behind the flow's back (a rollback), which the note says, with what to do. MirrorMaker 2's
 * position is used within the partition's log only: past the high watermark (the topic was
 * recreated since) it is left out; below the log start offset the records in between are gone,
 * so the partition starts at the log start offset.
 */
export function planStarts (input: StartPlanInput): PartitionStart[] {
  const starts: PartitionStart[] = []
  for (const log of input.partitions) {
    const key = partitionKey(log.topic, log.partition)
    const mm2Next = input.mm2.get(key)
    const at = { topic: log.topic, partition: log.partition, ...(mm2Next === undefined ? {} : { mm2Next }) }
    const ahead = (own: bigint, what: string, remedy: string): { note?: string } => mm2Next !== undefined && mm2Next > own
      ? { note: `MirrorMaker 2's position ${mm2Next} is ${mm2Next - own} ahead of ${what}: it copied after this flow stopped; ${remedy}` }
      : {}
    const position = input.positions?.get(key)
    if (position !== undefined) {
      starts.push({
        ...at,
        offset: position,
        from: 'positions',
        ...ahead(position, 'the exactly-once position', 'the flow starts from its position (records in between are copied again)'),
      })
      continue
    }
    const committed = input.committed.get(key)
    if (committed !== undefined) {
      starts.push({
        ...at,
        offset: committed,
        from: 'group',
        ...ahead(
          committed,
          "the group's committed offset",
          "to start from MirrorMaker 2's position instead, delete the group's offsets of this topic with the sidecar stopped"
        ),
      })
      continue
    }
    const reset = input.autoOffsetReset === 'latest' ? log.highWatermark : log.logStartOffset
    if (mm2Next === undefined) {
      starts.push({ ...at, offset: reset, from: 'reset' })
    } else if (mm2Next > log.highWatermark) {
      starts.push({
        ...at,
        offset: reset,
        from: 'reset',
        note: `MirrorMaker 2's position ${mm2Next} is past the log end offset ${log.highWatermark} (the topic was recreated since): not used`,
      })
    } else if (mm2Next < log.logStartOffset) {
      starts.push({
        ...at,
        offset: log.logStartOffset,
        from: 'mm2',
        note: `offsets ${mm2Next} to ${log.logStartOffset - 1n} were deleted by retention before MirrorMaker 2 copied them`,
      })
    } else {
      starts.push({ ...at, offset: mm2Next, from: 'mm2' })
    }
  }
  return starts
}
