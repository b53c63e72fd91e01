/**
 * Loss an audit can see in the clusters themselves (what `mirror-check lag`, `offsets` and
 * `cutover` report): a group's committed offset below the log start offset (retention deleted
 * records before the group read them), above the log end offset (the topic was recreated or
 * truncated after the group committed), and a target log end offset below what the mirror's
 * offset syncs say it wrote (the target topic was deleted, recreated or truncated).
 */

export interface PartitionOffsets {
  readonly topic: string
  readonly partition: number
  /** The group's committed offset; undefined when it has none. */
  readonly committedOffset?: number
  readonly logStartOffset?: number
  readonly logEndOffset?: number
  readonly targetTopic?: string
  readonly targetLogEndOffset?: number
  /** The mirror's next target offset from its offset syncs (`position.targetNext`). */
  readonly mirroredTargetNext?: number
}

export type LossKind = 'source-retention' | 'source-topic-recreated' | 'target-lost'

export interface RecordedLoss {
  readonly kind: LossKind
  readonly topic: string
  readonly partition: number
  /** Records lost (at least this many for `target-lost`); 0 when unknown (`source-topic-recreated`). */
  readonly records: number
  /** One line naming the partition, the offsets and the cause. */
  readonly text: string
}

/** Every loss the offsets of `rows` show, in row order. */
export function lossEvidence (rows: readonly PartitionOffsets[], group: string): RecordedLoss[] {
  const out: RecordedLoss[] = []
  for (const r of rows) {
    const at = `${r.topic}-${r.partition}`
    const c = r.committedOffset
    if (c !== undefined && r.logStartOffset !== undefined && c < r.logStartOffset) {
      out.push({
        kind: 'source-retention',
        topic: r.topic,
        partition: r.partition,
        records: r.logStartOffset - c,
        text: `${at}: offsets ${c}-${r.logStartOffset - 1} (${r.logStartOffset - c} records) were deleted on the source before group '${group}' read them (committed offset ${c} < log start offset ${r.logStartOffset})`,
      })
    }
    if (c !== undefined && r.logEndOffset !== undefined && c > r.logEndOffset) {
      out.push({
        kind: 'source-topic-recreated',
        topic: r.topic,
        partition: r.partition,
        records: 0,
        text: `${at}: committed offset ${c} of group '${group}' is past the log end offset ${r.logEndOffset}: the topic was recreated (or truncated) after the group committed; what it held past offset ${r.logEndOffset} before is unknown`,
      })
    }
    if (r.mirroredTargetNext !== undefined && r.targetLogEndOffset !== undefined && r.targetLogEndOffset < r.mirroredTargetNext) {
      const lost = r.mirroredTargetNext - r.targetLogEndOffset
      out.push({
        kind: 'target-lost',
        topic: r.topic,
        partition: r.partition,
        records: lost,
        text: `${r.targetTopic ?? r.topic}-${r.partition}: the target log end offset ${r.targetLogEndOffset} is below ${r.mirroredTargetNext}, where the mirror's offset syncs say it wrote up to: at least ${lost} copied records are gone from the target (topic deleted, recreated or truncated)`,
      })
    }
  }
  return out
}
