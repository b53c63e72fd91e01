import { rangeKey, type OffsetRange, type OffsetSyncEntry } from '../../mirror-topics/offset-sync-record.js'
import { partitionKey } from '../../shared/partition-key.js'

/**
 * The ranges of the offset-syncs topic as they stand now (a rewrite of a key replaces it, a
 * tombstone removes it), keyed by their record key. Pure: fed in topic order.
 */
export class LiveRanges {
  readonly #byKey = new Map<string, OffsetRange>()

  apply (entry: OffsetSyncEntry): void {
    if (entry.kind === 'range') this.#byKey.set(rangeKey(entry.range.sourceTopic, entry.range.partition, entry.range.targetStart), entry.range)
    else if (entry.kind === 'deleted') this.#byKey.delete(entry.key)
  }

  get size (): number { return this.#byKey.size }

  /** Target topics the ranges point into. */
  targetTopics (): string[] {
    return [...new Set([...this.#byKey.values()].map(range => range.targetTopic))]
  }

  entries (): IterableIterator<[string, OffsetRange]> { return this.#byKey.entries() }
}

/**
 * Keys of the ranges translation can do without: every target offset the range maps to is below
 * the target partition's log start (retention or deleteRecords removed those records), and it is
 * not the newest range of its partition (the one a running mirror may still be growing under the
 * same key). A source offset such a range covered then translates to the next range, which is the
 * first copy still on the target: what the removed range would have led to after an
 * out-of-range reset anyway. Topics without log start offsets (deleted, unknown) keep every range.
 */
export function prunableRangeKeys (ranges: LiveRanges, logStarts: ReadonlyMap<string, ReadonlyMap<number, bigint>>): string[] {
  const newest = new Map<string, bigint>()
  for (const [, range] of ranges.entries()) {
    const partition = partitionKey(range.targetTopic, range.partition)
    const current = newest.get(partition)
    if (current === undefined || range.targetStart > current) newest.set(partition, range.targetStart)
  }
  const keys: string[] = []
  for (const [key, range] of ranges.entries()) {
    const logStart = logStarts.get(range.targetTopic)?.get(range.partition)
    if (logStart === undefined) continue
    if (newest.get(partitionKey(range.targetTopic, range.partition)) === range.targetStart) continue
    if (range.targetStart + range.length <= logStart) keys.push(key)
  }
  return keys
}
