/** One partition of a consumer group as `kafka-consumer-groups --describe` shows it, plus the age of the record at the committed offset. */
export interface PartitionLagRow {
  readonly group: string
  readonly topic: string
  readonly partition: number
  /** Committed offset; undefined when the group has none for this partition (shown `-`). */
  readonly currentOffset?: number
  /** High watermark; undefined when the partition has no leader (shown `-`). */
  readonly logEndOffset?: number
  /** logEndOffset - currentOffset, as Kafka computes it; undefined when either is unknown. */
  readonly lag?: number
  /** Age of the record at the committed offset (now - its timestamp), 0 when caught up. */
  readonly lagSeconds?: number
  readonly consumerId?: string
  readonly host?: string
  readonly clientId?: string
}

/** Sum of a topic's partitions: lag added, LAG-SECONDS the worst partition. */
export interface TopicLagTotal {
  readonly group: string
  readonly topic: string
  readonly partitions: number
  readonly lag: number
  readonly lagSeconds: number
}

/** Kafka's LAG: end - committed, unknown when there is no committed offset (or it is -1). */
export function offsetLag (currentOffset: number | undefined, logEndOffset: number | undefined): number | undefined {
  if (currentOffset === undefined || currentOffset < 0 || logEndOffset === undefined) return undefined
  return logEndOffset - currentOffset
}

/** Seconds between a record's timestamp and `nowMs`, never negative (clock skew), with millisecond precision. */
export function ageSeconds (timestampMs: number, nowMs: number): number {
  return Math.max(0, Math.round(nowMs - timestampMs)) / 1000
}

export function topicTotals (rows: readonly PartitionLagRow[]): TopicLagTotal[] {
  const totals = new Map<string, { group: string, topic: string, partitions: number, lag: number, lagSeconds: number }>()
  for (const row of rows) {
    const id = `${row.group}\u0000${row.topic}`
    const total = totals.get(id) ?? { group: row.group, topic: row.topic, partitions: 0, lag: 0, lagSeconds: 0 }
    total.partitions++
    total.lag += row.lag ?? 0
    total.lagSeconds = Math.max(total.lagSeconds, row.lagSeconds ?? 0)
    totals.set(id, total)
  }
  return [...totals.values()]
}

/** Thresholds of a lag check; a missing one is not checked. */
export interface LagThresholds {
  readonly maxLagRecords?: number
  readonly maxLagSeconds?: number
}

/** Partitions over a threshold, each with the reason, for the one-line summary of a failed check. */
export function lagViolations (
  rows: ReadonlyArray<{ readonly topic: string, readonly partition: number, readonly lag?: number, readonly lagSeconds?: number }>,
  thresholds: LagThresholds
): string[] {
  const out: string[] = []
  for (const row of rows) {
    if (thresholds.maxLagRecords !== undefined && (row.lag ?? 0) > thresholds.maxLagRecords) {
      out.push(`${row.topic}-${row.partition}: lag ${row.lag} records > ${thresholds.maxLagRecords}`)
    }
    if (thresholds.maxLagSeconds !== undefined && (row.lagSeconds ?? 0) > thresholds.maxLagSeconds) {
      out.push(`${row.topic}-${row.partition}: lag ${row.lagSeconds} s > ${thresholds.maxLagSeconds} s`)
    }
  }
  return out
}
