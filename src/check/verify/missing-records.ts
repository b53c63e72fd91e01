import type { AuditClient } from '../../kafka/audit-client.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { KafkaRecord } from '../../shared/kafka-record.js'
import type { Aligner, AlignmentLookup } from './aligner.js'
import { alignedBy, type AlignedBy } from './alignment-choice.js'
import { verifyCopy } from './copy-verification.js'

/**
 * Consecutive source records of one partition that are not on the target: `fromOffset` and
 * `toOffset` are the first and last of them (inclusive); offsets between them hold no record that
 * is on the target (a gap of control records or compacted offsets stays inside a range).
 */
export interface MissingRange {
  readonly fromOffset: number
  readonly toOffset: number
  readonly records: number
  readonly firstTimestampMs: number
  readonly lastTimestampMs: number
  /** Each missing record's offset, timestamp and key, when asked for (`keys`). */
  readonly list?: ReadonlyArray<{ readonly offset: number, readonly timestampMs: number, readonly key: string | null }>
}

/** What one source partition has that its target partition lacks, at the moment of the check. */
export interface PartitionMissing {
  readonly partition: number
  readonly targetPartition: number
  /** First source offset compared (the source's log start, or `fromOffset`). */
  readonly sourceFromOffset: number
  /** The source's end offset (read_committed) when the check started: everything below it was compared. */
  readonly sourceEndOffset: number
  readonly alignedBy: AlignedBy
  /** Source records compared. */
  readonly checked: number
  readonly missing: number
  readonly ranges: readonly MissingRange[]
  readonly notes: readonly string[]
}

export interface MissingRecordsOptions {
  readonly source: AuditClient
  readonly target: AuditClient
  readonly topic: string
  readonly targetTopic: string
  /** The mirror's consumer group on the source (its committed position is not a bound here: everything up to the end offset is compared). */
  readonly group: string
  readonly partitions?: readonly number[]
  readonly fromOffset?: number
  /** List every missing record's offset, timestamp and key. */
  readonly keys: boolean
  readonly lookaheadRecords?: number
  readonly aligner?: (lookup: AlignmentLookup) => Aligner
}

/** A key as text: UTF-8 when it is valid UTF-8, else `base64:` and its bytes in base64. */
function keyText (key: Buffer | null): string | null {
  if (key === null) return null
  const text = key.toString('utf8')
  return Buffer.from(text, 'utf8').equals(key) ? text : `base64:${key.toString('base64')}`
}

/**
 * Walks the source partition over `missing` (sorted offsets) and groups them into ranges: a
 * range ends at the first source record after it that is not missing.
 */
async function rangesOf (
  source: AuditClient,
  topic: string,
  partition: number,
  missing: readonly number[],
  keys: boolean
): Promise<MissingRange[]> {
  const ranges: MissingRange[] = []
  if (missing.length === 0) return ranges
  const wanted = new Set(missing)
  const last = missing[missing.length - 1]!
  type Entry = NonNullable<MissingRange['list']>[number]
  let open: { fromOffset: number, toOffset: number, records: number, firstTimestampMs: number, lastTimestampMs: number, list?: Entry[] } | undefined
  const close = (): void => {
    if (open !== undefined) ranges.push(open)
    open = undefined
  }
  let offset = missing[0]!
  while (offset <= last) {
    const fetched = await source.fetch(topic, partition, offset, { isolation: 'read_committed' })
    const records: readonly KafkaRecord[] = fetched.records
    for (const record of records) {
      const at = Number(record.offset)
      if (at > last) break
      if (!wanted.has(at)) {
        close()
        continue
      }
      const timestampMs = Number(record.timestamp)
      const entry = { offset: at, timestampMs, key: keyText(record.key) }
      if (open === undefined) {
        open = { fromOffset: at, toOffset: at, records: 1, firstTimestampMs: timestampMs, lastTimestampMs: timestampMs, ...(keys ? { list: [entry] } : {}) }
      } else {
        open.toOffset = at
        open.records++
        open.lastTimestampMs = timestampMs
        open.list?.push(entry)
      }
    }
    // An empty answer below the end would loop: the comparison saw these offsets, so the source must still hold them.
    if (fetched.nextOffset <= offset) {
      throw new MirrorError(
        ErrorCodes.KAFKA,
        `${topic}-${partition}: the source holds no record at offset ${offset} any more (deleted since the comparison?); run the check again`
      )
    }
    offset = fetched.nextOffset
  }
  close()
  return ranges
}

/**
 * The source records not on the target, per partition, found by the record-by-record comparison
 * of `verifyCopy` (aligned by the mirror's offset syncs when `aligner` reads them) over every
 * source offset up to the end offset: a source record counts as on the target when its copy is
 * there (matched, or changed in at most two fields, or out of order), and as missing otherwise.
 * Records the comparison calls missing are read back from the source for their timestamps (and
 * keys). Invariant: `missing` of a partition is the sum of its ranges' `records`.
 */
export async function collectMissingRecords (options: MissingRecordsOptions): Promise<{ partitions: PartitionMissing[], notes: string[] }> {
  const result = await verifyCopy({
    source: options.source,
    target: options.target,
    topic: options.topic,
    targetTopic: options.targetTopic,
    ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
    ...(options.fromOffset === undefined ? {} : { from: { offset: options.fromOffset } }),
    // Up to the source end offset, past the mirror's committed position: what is in flight counts as missing until it is on the target.
    until: { offset: Number.MAX_SAFE_INTEGER },
    group: options.group,
    ...(options.lookaheadRecords === undefined ? {} : { lookaheadRecords: options.lookaheadRecords }),
    // Every missing record is listed: the report is the list.
    maxFindingsPerKind: Number.MAX_SAFE_INTEGER,
    ...(options.aligner === undefined ? {} : { aligner: options.aligner }),
  })
  const partitions: PartitionMissing[] = []
  for (const p of result.partitions) {
    const missing = p.findings.filter(f => f.kind === 'missing' && f.sourceOffset !== undefined).map(f => f.sourceOffset!).sort((a, b) => a - b)
    const ranges = await rangesOf(options.source, options.topic, p.partition, missing, options.keys)
    partitions.push({
      partition: p.partition,
      targetPartition: p.alignment.targetPartition,
      sourceFromOffset: p.sourceFromOffset,
      sourceEndOffset: p.sourceUntilOffset,
      alignedBy: alignedBy(p.alignment),
      checked: p.counts.checked,
      missing: p.counts.missing,
      ranges,
      notes: p.notes,
    })
  }
  return { partitions, notes: result.notes }
}
