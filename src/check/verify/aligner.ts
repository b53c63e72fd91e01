import type { RecordDigest } from '../../mirror-topics/record-digest.js'

/** Where the comparison of one partition starts on each side. */
export interface AlignmentPoint {
  readonly sourceOffset: number
  readonly targetPartition: number
  /** Target offset holding (or that should hold) the copy of the source record at `sourceOffset`. */
  readonly targetOffset: number
  /** How the point was found, for the report (`first common record`, `offset sync`, ...). */
  readonly method: string
  /**
   * Lowest target offset below `targetOffset` that may hold an earlier copy of the compared source
   * records (a mirror that copied them again after a crash: the offset syncs point at the newest
   * copy). Target records from here up to `targetOffset` are read as earlier copies. Absent: none.
   */
  readonly earliestCopyOffset?: number
}

export interface AlignmentRequest {
  readonly sourcePartition: number
  /** First source offset to compare (already clamped to the source's earliest offset). */
  readonly sourceOffset: number
  /** Source offsets from here on are not compared (in flight or past `--to-offset`); default: none. */
  readonly sourceUntilOffset?: number
}

/**
 * Maps a source offset to the target offset where comparison starts. The order aligner below
 * finds it by content; an aligner reading the sidecar's offset-sync records can replace it.
 */
export interface Aligner {
  align: (request: AlignmentRequest) => Promise<AlignmentPoint>
}

/** `AlignmentPoint.method` of a point the order aligner found by content (a copy of one of the first source records). */
export const FIRST_COMMON_RECORD_METHOD = 'first common record'

/** What the order aligner needs to read; implemented over Kafka by `src/mirror-topics/partition-reader.ts`. */
export interface AlignmentLookup {
  /** Up to `count` source records of `partition` at or after `fromOffset`. */
  readonly sourceRecords: (partition: number, fromOffset: number, count: number) => Promise<RecordDigest[]>
  /** Up to `count` target records at or after `fromOffset`. */
  readonly targetRecords: (partition: number, fromOffset: number, count: number) => Promise<RecordDigest[]>
  /** First target offset whose record timestamp is at or after `timestampMs`; the log end offset when none. */
  readonly targetOffsetForTimestamp: (partition: number, timestampMs: number) => Promise<number>
  readonly targetEarliestOffset: (partition: number) => Promise<number>
}

export interface OrderAlignerOptions {
  /** Source records whose copies are looked for (the earliest copy found wins); default 16. */
  readonly probeRecords?: number
  /** Target records scanned from the timestamp position; default 5000. */
  readonly scanRecords?: number
}

/**
 * Aligns by content: copies keep their timestamps, so the target's time index points near the
 * copy of the first source records; the earliest target offset holding any of the first
 * `probeRecords` source records is where comparison starts. When none is found, comparison starts
 * at the timestamp position and the comparator reports what differs from there.
 */
export class OrderAligner implements Aligner {
  readonly #probe: number
  readonly #scan: number

  constructor (readonly lookup: AlignmentLookup, options: OrderAlignerOptions = {}) {
    this.#probe = options.probeRecords ?? 16
    this.#scan = options.scanRecords ?? 5000
  }

  async align ({ sourcePartition, sourceOffset }: AlignmentRequest): Promise<AlignmentPoint> {
    const partition = sourcePartition
    const probes = await this.lookup.sourceRecords(partition, sourceOffset, this.#probe)
    if (probes.length === 0) {
      return { sourceOffset, targetPartition: partition, targetOffset: await this.lookup.targetEarliestOffset(partition), method: 'source range empty' }
    }
    const wanted = new Set(probes.map(p => p.hash))
    const earliestTimestamp = Math.min(...probes.map(p => p.timestamp))
    const from = await this.lookup.targetOffsetForTimestamp(partition, earliestTimestamp)
    let scanned = 0
    let at = from
    while (scanned < this.#scan) {
      const chunk = await this.lookup.targetRecords(partition, at, Math.min(1000, this.#scan - scanned))
      if (chunk.length === 0) break
      const hit = chunk.find(d => wanted.has(d.hash))
      if (hit !== undefined) return { sourceOffset, targetPartition: partition, targetOffset: hit.offset, method: FIRST_COMMON_RECORD_METHOD }
      scanned += chunk.length
      at = chunk[chunk.length - 1]!.offset + 1
    }
    return { sourceOffset, targetPartition: partition, targetOffset: from, method: 'timestamp (no common record found)' }
  }
}
