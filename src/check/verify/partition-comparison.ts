import { RecordComparator, type ComparisonCounts, type Finding, type RecordComparatorOptions } from './record-comparator.js'
import { combineHashes, type RecordDigest } from '../../mirror-topics/record-digest.js'

/** Ordered chunks of digests from one partition; `null` once the stream has nothing more. */
export interface DigestStream {
  next: () => Promise<RecordDigest[] | null>
  /** Releases what the stream reads from (a stream not read to its end); optional. */
  close?: () => Promise<void>
}

/** A digest stream over an in-memory list, in chunks of `chunkSize` (for tests and small inputs). */
export function digestStreamOf (digests: readonly RecordDigest[], chunkSize = 500): DigestStream {
  let at = 0
  return {
    next: async () => {
      if (at >= digests.length) return null
      const chunk = digests.slice(at, at + chunkSize)
      at += chunkSize
      return chunk
    },
  }
}

export interface PartitionComparisonOptions extends RecordComparatorOptions {
  readonly source: DigestStream
  readonly target: DigestStream
  /** Source records at or after this offset are in flight: not checked, only used to see where the copy ends. Default: none. */
  readonly sourceUntilOffset?: number
  /** With a value, compare ranges of this many records by one hash first and go record by record only where ranges differ. */
  readonly digestRangeRecords?: number
  /** Called after each chunk with the last source offset taken. */
  readonly onProgress?: (sourceOffset: number, bytes: number) => void
}

export interface PartitionComparisonResult {
  readonly counts: ComparisonCounts
  readonly findings: readonly Finding[]
  /** Ranges compared by hash only (digest mode) and ranges that had to be compared record by record. */
  readonly rangesEqual: number
  readonly rangesDiffering: number
  /** `RecordComparator.targetStopOffset`: where the target's records beyond the compared range begin, when it has any. */
  readonly targetStopOffset?: number
  /** `RecordComparator.matchedRecently`. */
  readonly matchedRecently?: (hash: number) => boolean
}

/** Pull-based reader over a digest stream that hands out single records or exact-size runs. */
class Feed {
  #chunk: RecordDigest[] = []
  #at = 0
  #ended = false

  constructor (readonly stream: DigestStream) {}

  get ended (): boolean { return this.#ended && this.#at >= this.#chunk.length }

  /** Records available without waiting. */
  get available (): number { return this.#chunk.length - this.#at }

  async fill (): Promise<boolean> {
    if (this.#at < this.#chunk.length) return true
    if (this.#ended) return false
    const chunk = await this.stream.next()
    if (chunk === null) { this.#ended = true; return false }
    this.#chunk = chunk
    this.#at = 0
    return chunk.length > 0 || await this.fill()
  }

  take (): RecordDigest { return this.#chunk[this.#at++]! }

  peek (): RecordDigest | undefined { return this.#chunk[this.#at] }

  /** Puts records back in front (records handed back by a settled comparator). */
  prepend (digests: readonly RecordDigest[]): void {
    if (digests.length === 0) return
    this.#chunk = [...digests, ...this.#chunk.slice(this.#at)]
    this.#at = 0
  }

  takeAll (): RecordDigest[] {
    const rest = this.#at === 0 ? this.#chunk : this.#chunk.slice(this.#at)
    this.#at = this.#chunk.length
    return rest
  }

  async takeUpTo (count: number, into: RecordDigest[]): Promise<void> {
    while (into.length < count && await this.fill()) {
      const n = Math.min(count - into.length, this.available)
      for (let i = 0; i < n; i++) into.push(this.take())
    }
  }
}

/**
 * Compares one source partition with its copy by streaming both sides through a `RecordComparator`.
 * Reads pull one chunk at a time from the side with less buffered, so memory stays bounded by
 * chunk size plus the comparator's windows. In digest mode, ranges whose order-sensitive hash is
 * equal on both sides are counted as matched without record-by-record work.
 */
export async function comparePartition (options: PartitionComparisonOptions): Promise<PartitionComparisonResult> {
  const comparator = new RecordComparator(options)
  const source = new Feed(options.source)
  const target = new Feed(options.target)
  const until = options.sourceUntilOffset ?? Number.POSITIVE_INFINITY
  const lookahead = Math.max(1, options.lookaheadRecords ?? 1000)
  const range = options.digestRangeRecords
  let inFlightPushed = 0
  let sourceEnded = false
  let targetEnded = false
  let lastSourceOffset = -1
  let rangesEqual = 0
  let rangesDiffering = 0

  const pushSource = (digest: RecordDigest): void => {
    lastSourceOffset = digest.offset
    const inFlight = digest.offset >= until
    if (inFlight) inFlightPushed++
    comparator.pushSource(digest, inFlight)
  }
  const endSource = (): void => { if (!sourceEnded) { sourceEnded = true; comparator.endSource() } }
  const endTarget = (): void => { if (!targetEnded) { targetEnded = true; comparator.endTarget() } }
  const progress = (): void => options.onProgress?.(lastSourceOffset, comparator.counts.bytes)

  const pullSource = async (): Promise<void> => {
    if (inFlightPushed > lookahead || !await source.fill()) { endSource(); return }
    for (const digest of source.takeAll()) {
      pushSource(digest)
      if (inFlightPushed > lookahead) break
    }
  }
  const pullTarget = async (): Promise<void> => {
    if (!await target.fill()) { endTarget(); return }
    for (const digest of target.takeAll()) comparator.pushTarget(digest)
  }

  while (!comparator.complete) {
    if (range !== undefined && range > 0 && comparator.settled && lastSourceOffset + 1 < until) {
      const leftover = comparator.takeBuffered()
      const sourceRun = leftover.source
      const targetRun = leftover.target
      await Promise.all([source.takeUpTo(range, sourceRun), target.takeUpTo(range, targetRun)])
      const full = sourceRun.length === range && targetRun.length === range && sourceRun[range - 1]!.offset < until
      if (full && combineHashes(sourceRun.map(d => d.hash)) === combineHashes(targetRun.map(d => d.hash))) {
        comparator.acceptMatchedRange(sourceRun, targetRun)
        lastSourceOffset = sourceRun[range - 1]!.offset
        rangesEqual++
        progress()
        continue
      }
      if (full) rangesDiffering++
      for (const digest of sourceRun) pushSource(digest)
      for (const digest of targetRun) comparator.pushTarget(digest)
      if (sourceRun.length < range && source.ended) endSource()
      if (targetRun.length < range && target.ended) endTarget()
      progress()
      continue
    }
    if ((range === undefined || range <= 0) && comparator.settled && !sourceEnded && !targetEnded) {
      // Fast path while the copy is in step: equal heads are counted as matched without entering the comparator's windows.
      const leftover = comparator.takeBuffered()
      source.prepend(leftover.source)
      target.prepend(leftover.target)
      const [hasSource, hasTarget] = await Promise.all([source.fill(), target.fill()])
      if (hasSource && hasTarget) {
        let s = source.peek()
        let t = target.peek()
        while (s !== undefined && t !== undefined && s.hash === t.hash && s.offset < until) {
          source.take()
          target.take()
          comparator.acceptMatch(s, t)
          lastSourceOffset = s.offset
          s = source.peek()
          t = target.peek()
        }
        if (s !== undefined && t !== undefined) {
          pushSource(source.take())
          comparator.pushTarget(target.take())
        }
        progress()
        continue
      }
      if (!hasSource) endSource()
      if (!hasTarget) endTarget()
      continue
    }
    const { source: bufferedSource, target: bufferedTarget } = comparator.buffered
    const wants = comparator.wants
    if (!sourceEnded && (bufferedSource <= bufferedTarget || targetEnded || (wants.source > 0 && wants.target === 0))) await pullSource()
    else if (!targetEnded) await pullTarget()
    else break
    progress()
  }
  const stop = comparator.targetStopOffset
  return {
    counts: comparator.counts,
    findings: comparator.findings,
    rangesEqual,
    rangesDiffering,
    ...(stop === undefined ? {} : { targetStopOffset: stop }),
    matchedRecently: hash => comparator.matchedRecently(hash),
  }
}

/** A digest stream over chunks of digests (`PartitionReader.digestChunks`). */
export function digestStreamOfChunks (chunks: AsyncIterator<RecordDigest[]>): DigestStream {
  return {
    next: async () => {
      const step = await chunks.next()
      return step.done === true ? null : step.value
    },
    close: async () => { await chunks.return?.(undefined) },
  }
}
