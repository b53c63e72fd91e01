/**
 * The records of the digests topic (`mirror-digests.<source alias>.internal` on the target, one
 * partition, compacted): what the mirror wrote, hashed per run of records, so a copy can be
 * checked without reading the source. Keys and values are JSON; offsets are decimal strings.
 * See docs/digests.md for what a digest proves.
 */

/** Version written in every value; readers skip values with a higher version. */
const DIGEST_FORMAT_VERSION = 1

/** The digests topic of a flow whose source cluster has `alias`. */
export function digestsTopicName (alias: string): string {
  return `mirror-digests.${alias}.internal`
}

/**
 * Target records `targetStart .. targetStart + count - 1` of `targetTopic` partition `partition`
 * are what the mirror wrote there, copies of source records `sourceFirst .. sourceLast` (every
 * source offset between them that holds a record, once; with a message handler, the handler's
 * outputs). `hash` is `combineHashes` of the records' `digestRecord(...).hash` (key, value,
 * headers in order, timestamp), in target-offset order. A digest never spans a jump in target
 * offsets, so the records it covers are consecutive on the target. Identified by its target start
 * (one record per target offset): a digest that grows is rewritten under the same key.
 */
export interface RangeDigest {
  readonly sourceTopic: string
  readonly targetTopic: string
  readonly partition: number
  readonly sourceFirst: bigint
  readonly sourceLast: bigint
  readonly targetStart: bigint
  readonly count: number
  readonly hash: number
  /** When it was written (ms since the epoch), as read from the topic: the newer of two digests over the same target offsets wins. */
  readonly writtenAtMs?: number
}

export type DigestEntry =
  | { readonly kind: 'digest', readonly key: string, readonly digest: RangeDigest }
  | { readonly kind: 'deleted', readonly key: string }

export function digestKey (sourceTopic: string, partition: number, targetStart: bigint): string {
  return JSON.stringify(['digest', sourceTopic, partition, targetStart.toString()])
}

export function encodeDigest (digest: RangeDigest, writtenAtMs = Date.now()): { key: string, value: string } {
  return {
    key: digestKey(digest.sourceTopic, digest.partition, digest.targetStart),
    value: JSON.stringify({
      v: DIGEST_FORMAT_VERSION,
      sourceTopic: digest.sourceTopic,
      targetTopic: digest.targetTopic,
      partition: digest.partition,
      sourceFirst: digest.sourceFirst.toString(),
      sourceLast: digest.sourceLast.toString(),
      targetStart: digest.targetStart.toString(),
      count: digest.count,
      hash: digest.hash.toString(),
      writtenAtMs,
    }),
  }
}

function offset (value: unknown): bigint | undefined {
  return typeof value === 'string' && /^\d{1,19}$/.test(value) ? BigInt(value) : undefined
}

/** A record of the digests topic, or undefined when it is not one this version reads (skipped). */
export function decodeDigest (key: string | null, value: string | null): DigestEntry | undefined {
  if (key === null) return undefined
  let parsedKey: unknown
  try { parsedKey = JSON.parse(key) } catch { return undefined }
  if (!Array.isArray(parsedKey) || parsedKey[0] !== 'digest') return undefined
  if (value === null) return { kind: 'deleted', key }
  let v: Record<string, unknown>
  try { v = JSON.parse(value) as Record<string, unknown> } catch { return undefined }
  if (typeof v !== 'object' || v === null || v.v !== DIGEST_FORMAT_VERSION) return undefined
  const sourceFirst = offset(v.sourceFirst)
  const sourceLast = offset(v.sourceLast)
  const targetStart = offset(v.targetStart)
  const hash = typeof v.hash === 'string' && /^\d{1,16}$/.test(v.hash) ? Number(v.hash) : undefined
  if (
    typeof v.sourceTopic !== 'string' ||
    typeof v.targetTopic !== 'string' ||
    typeof v.partition !== 'number' ||
    !Number.isInteger(v.partition) ||
    sourceFirst === undefined ||
    sourceLast === undefined ||
    targetStart === undefined ||
    typeof v.count !== 'number' ||
    !Number.isInteger(v.count) ||
    v.count <= 0 ||
    hash === undefined ||
    !Number.isSafeInteger(hash)
  ) { return undefined }
  const writtenAtMs = typeof v.writtenAtMs === 'number' && Number.isFinite(v.writtenAtMs) ? { writtenAtMs: v.writtenAtMs } : {}
  return {
    kind: 'digest',
    key,
    digest: {
      sourceTopic: v.sourceTopic,
      targetTopic: v.targetTopic,
      partition: v.partition,
      sourceFirst,
      sourceLast,
      targetStart,
      count: v.count,
      hash,
      ...writtenAtMs,
    },
  }
}

/** Where a digest lies, for log lines and findings: `orders partition 3 target offsets 1000-1999 (source 1000-1999)`. */
export function describeDigestRange (digest: RangeDigest): string {
  const targetLast = digest.targetStart + BigInt(digest.count) - 1n
  return `${digest.targetTopic} partition ${digest.partition} target offsets ${digest.targetStart}-${targetLast} (source ${digest.sourceTopic} offsets ${digest.sourceFirst}-${digest.sourceLast}, ${digest.count} records)`
}
