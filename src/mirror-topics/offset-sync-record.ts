/**
 * The records of the offset-syncs topic (`mirror-offset-syncs.<alias>.internal` on the target,
 * one partition, compacted). Keys and values are JSON; offsets are decimal strings (64-bit).
 * See docs/offset-syncs.md for the format and how compaction and overlaps resolve.
 */

/** Version written in every value; readers skip values with a higher major version. */
const OFFSET_SYNC_FORMAT_VERSION = 1

/**
 * Source records `sourceStart .. sourceStart + length - 1` of a partition are on the target at
 * `targetStart .. targetStart + length - 1`, one for one, in order. A range never spans a gap in
 * source offsets (control records, compaction, aborted data) nor a jump in target offsets.
 * Identified by its target start offset: a target offset holds one record, so no two different
 * ranges share a key, and a range that grows is rewritten under the same key.
 */
export interface OffsetRange {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly sourceStart: bigint
  readonly targetStart: bigint
  readonly length: bigint
}

/**
 * The mirror's position in a partition when it was about to commit: every source offset below
 * `sourceNext` is on the target (covered by a range) or holds no record; `targetNext` is the
 * target offset after the last record the mirror wrote.
 */
export interface MirrorPosition {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly sourceNext: bigint
  readonly targetNext: bigint
}

export type OffsetSyncEntry =
  | { readonly kind: 'range', readonly range: OffsetRange }
  | { readonly kind: 'position', readonly position: MirrorPosition }
  /** A tombstone (null value) for a range or position key: forget it. */
  | { readonly kind: 'deleted', readonly key: string }

export interface EncodedRecord {
  readonly key: string
  readonly value: string | null
}

export function rangeKey (sourceTopic: string, partition: number, targetStart: bigint): string {
  return JSON.stringify(['range', sourceTopic, partition, targetStart.toString()])
}

export function positionKey (sourceTopic: string, partition: number): string {
  return JSON.stringify(['position', sourceTopic, partition])
}

export function encodeRange (range: OffsetRange, writtenAtMs = Date.now()): EncodedRecord {
  return {
    key: rangeKey(range.sourceTopic, range.partition, range.targetStart),
    value: JSON.stringify({
      v: OFFSET_SYNC_FORMAT_VERSION,
      sourceTopic: range.sourceTopic,
      targetTopic: range.targetTopic,
      partition: range.partition,
      sourceStart: range.sourceStart.toString(),
      targetStart: range.targetStart.toString(),
      length: range.length.toString(),
      writtenAtMs,
    }),
  }
}

export function encodePosition (position: MirrorPosition, writtenAtMs = Date.now()): EncodedRecord {
  return {
    key: positionKey(position.sourceTopic, position.partition),
    value: JSON.stringify({
      v: OFFSET_SYNC_FORMAT_VERSION,
      sourceTopic: position.sourceTopic,
      targetTopic: position.targetTopic,
      partition: position.partition,
      sourceNext: position.sourceNext.toString(),
      targetNext: position.targetNext.toString(),
      writtenAtMs,
    }),
  }
}

function offset (value: unknown): bigint | undefined {
  if (typeof value !== 'string' || !/^\d{1,19}$/.test(value)) return undefined
  return BigInt(value)
}

/** Reads one record of the syncs topic; undefined for anything it does not understand (skipped). */
export function decodeOffsetSync (key: string | null, value: string | null): OffsetSyncEntry | undefined {
  if (key === null) return undefined
  let parsedKey: unknown
  try { parsedKey = JSON.parse(key) } catch { return undefined }
  if (!Array.isArray(parsedKey) || (parsedKey[0] !== 'range' && parsedKey[0] !== 'position')) return undefined
  if (value === null) return { kind: 'deleted', key }
  let v: Record<string, unknown>
  try { v = JSON.parse(value) as Record<string, unknown> } catch { return undefined }
  if (typeof v !== 'object' || v === null || typeof v.v !== 'number' || v.v > OFFSET_SYNC_FORMAT_VERSION) return undefined
  const { sourceTopic, targetTopic, partition } = v
  if (typeof sourceTopic !== 'string' || typeof targetTopic !== 'string' || typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0) {
    return undefined
  }
  if (parsedKey[0] === 'range') {
    const sourceStart = offset(v.sourceStart)
    const targetStart = offset(v.targetStart)
    const length = offset(v.length)
    if (sourceStart === undefined || targetStart === undefined || length === undefined || length === 0n) return undefined
    return { kind: 'range', range: { sourceTopic, targetTopic, partition, sourceStart, targetStart, length } }
  }
  const sourceNext = offset(v.sourceNext)
  const targetNext = offset(v.targetNext)
  if (sourceNext === undefined || targetNext === undefined) return undefined
  return { kind: 'position', position: { sourceTopic, targetTopic, partition, sourceNext, targetNext } }
}

/**
 * A producer id the mirror's producer got on the target cluster, published in the offset-syncs
 * topic before the producer writes: the flow of the opposite direction, which reads this topic on
 * its source, skips the batches these producers wrote (active-active over same-named topics).
 */
function mirrorProducerKey (producerId: bigint): string {
  return JSON.stringify(['producer', producerId.toString()])
}

export function encodeMirrorProducer (producerId: bigint, flow: string, writtenAtMs = Date.now()): EncodedRecord {
  return { key: mirrorProducerKey(producerId), value: JSON.stringify({ v: OFFSET_SYNC_FORMAT_VERSION, flow, producerId: producerId.toString(), writtenAtMs }) }
}

/** The producer id a `mirrorProducerKey` record names, or undefined for any other record. */
export function decodeMirrorProducer (key: string | null, value: string | null): bigint | undefined {
  if (key === null || value === null) return undefined
  let parsed: unknown
  try { parsed = JSON.parse(key) } catch { return undefined }
  if (!Array.isArray(parsed) || parsed[0] !== 'producer' || typeof parsed[1] !== 'string' || !/^\d+$/.test(parsed[1])) return undefined
  return BigInt(parsed[1])
}
