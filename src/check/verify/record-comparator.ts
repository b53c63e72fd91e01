import { differingFields, RecordFields, type RecordDigest, type RecordField } from '../../mirror-topics/record-digest.js'

/** Kinds of difference between a source partition and its copy. */
export const FindingKinds = ['missing', 'duplicated', 'extra', 'changed', 'out-of-order'] as const
export type FindingKind = typeof FindingKinds[number]

/** One difference, located by the offsets it concerns (a missing record has no target offset). */
export interface Finding {
  readonly kind: FindingKind
  readonly sourceOffset?: number
  readonly targetOffset?: number
  /** For `changed`: which fields differ. */
  readonly fields?: readonly RecordField[]
  /** The record's identity hash (source side when there is one), used to find records moved to another partition. */
  readonly hash: number
}

/** Counts of one partition's comparison; `locations` holds the first findings of each kind, bounded. */
export interface ComparisonCounts {
  /** Source records within the compared range that were examined. */
  checked: number
  matched: number
  missing: number
  duplicated: number
  extra: number
  changed: number
  outOfOrder: number
  changedFields: Record<RecordField, number>
  bytes: number
}

export interface RecordComparatorOptions {
  /** How far ahead (records, each side) to look for a record's copy before calling it missing or extra; default 1000. */
  readonly lookaheadRecords?: number
  /** How many recently matched records a target record is checked against to call it a duplicate; default 100000. */
  readonly duplicateWindowRecords?: number
  /** Findings kept per kind for the report (counts are always exact); default 100. */
  readonly maxFindingsPerKind?: number
  /**
   * Compare a stretch of the target that lies before the copy compared record by record (older
   * copies, e.g. from a mirror killed before its offset syncs were durable) instead of the copy
   * itself. Source records are pushed from before `sourceFromOffset` on (none is in flight):
   * - a target record equal to a source record in `sourceFromOffset..sourceUntilOffset-1` is
   *   `duplicated` (an earlier copy of a checked record), whether in order or not;
   * - one equal to a source record outside that range is not counted (not checked);
   * - a changed copy (at most two fields differ) of a checked record is `changed`;
   * - anything else is `extra`;
   * - a source record without a copy here is not missing (its copy is compared elsewhere).
   * Complete once the target stream ended and every target record is decided. Default: off.
   */
  readonly earlierCopies?: { readonly sourceFromOffset: number, readonly sourceUntilOffset: number }
}

/**
 * A digest pushed on the source side; `inFlight` marks records past the compared range, used only
 * to recognise the end of the copy (never set with `earlierCopies`).
 */
interface SourceEntry { readonly digest: RecordDigest, readonly inFlight: boolean }

/** FIFO of digests with an index by hash, for constant-time "is it in the window" questions. */
class Window<T extends { readonly digest: RecordDigest }> {
  #items: T[] = []
  #head = 0
  #seq = 0
  readonly #positions = new Map<number, number[]>()

  get length (): number { return this.#items.length - this.#head }
  get first (): T | undefined { return this.#items[this.#head] }

  push (item: T): void {
    const at = this.#seq + this.length
    const list = this.#positions.get(item.digest.hash)
    if (list === undefined) this.#positions.set(item.digest.hash, [at])
    else list.push(at)
    this.#items.push(item)
  }

  shift (): T | undefined {
    const item = this.#items[this.#head]
    if (item === undefined) return undefined
    const list = this.#positions.get(item.digest.hash)
    list?.shift()
    if (list !== undefined && list.length === 0) this.#positions.delete(item.digest.hash)
    this.#head++
    this.#seq++
    if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }

  /** Distance from the head to the first item with `hash`, or -1. */
  indexOf (hash: number): number {
    const at = this.#positions.get(hash)?.[0]
    return at === undefined ? -1 : at - this.#seq
  }

  at (index: number): T | undefined { return this.#items[this.#head + index] }

  drain (): T[] {
    const rest = this.#items.slice(this.#head)
    this.#items = []
    this.#head = 0
    this.#seq += rest.length
    this.#positions.clear()
    return rest
  }
}

/** Records set aside because their copy appears elsewhere in the window; resolved as out of order or, once too old, as missing/extra. */
class SetAside {
  readonly #byHash = new Map<number, Array<{ digest: RecordDigest, since: number }>>()
  #size = 0

  get size (): number { return this.#size }

  add (digest: RecordDigest, since: number): void {
    const list = this.#byHash.get(digest.hash)
    if (list === undefined) this.#byHash.set(digest.hash, [{ digest, since }])
    else list.push({ digest, since })
    this.#size++
  }

  take (hash: number): RecordDigest | undefined {
    const list = this.#byHash.get(hash)
    const entry = list?.shift()
    if (list !== undefined && list.length === 0) this.#byHash.delete(hash)
    if (entry !== undefined) this.#size--
    return entry?.digest
  }

  /** Removes and returns entries set aside before `before` (all when undefined). */
  expire (before?: number): RecordDigest[] {
    const out: RecordDigest[] = []
    for (const [hash, list] of this.#byHash) {
      while (list.length > 0 && (before === undefined || list[0]!.since < before)) {
        out.push(list.shift()!.digest)
        this.#size--
      }
      if (list.length === 0) this.#byHash.delete(hash)
    }
    return out.sort((a, b) => a.offset - b.offset)
  }
}

/** Hashes of the last N matched records, to recognise at-least-once re-deliveries. */
class RecentMatches {
  readonly #ring: Float64Array
  #added = 0
  /** Each hash in the ring with the sequence number of its latest add. */
  readonly #latest = new Map<number, number>()

  constructor (readonly capacity: number) { this.#ring = new Float64Array(capacity) }

  add (hash: number): void {
    if (this.capacity === 0) return
    const slot = this.#added % this.capacity
    if (this.#added >= this.capacity) {
      // The hash leaving the window stays only when it was added again since.
      const old = this.#ring[slot]!
      if (this.#latest.get(old) === this.#added - this.capacity) this.#latest.delete(old)
    }
    this.#ring[slot] = hash
    this.#latest.set(hash, this.#added)
    this.#added++
  }

  has (hash: number): boolean { return this.#latest.has(hash) }
}

export function emptyCounts (): ComparisonCounts {
  return {
    checked: 0,
    matched: 0,
    missing: 0,
    duplicated: 0,
    extra: 0,
    changed: 0,
    outOfOrder: 0,
    changedFields: Object.fromEntries(RecordFields.map(f => [f, 0])) as Record<RecordField, number>,
    bytes: 0,
  }
}

/**
 * Streaming comparison of one source partition with its copy, fed two ordered digest streams
 * (`pushSource`/`pushTarget`, then `endSource`/`endTarget`). Records are matched by identity
 * (key, value, headers and timestamp) in order; when the heads differ, it looks up to
 * `lookaheadRecords` ahead on both sides to tell a missing record (its copy is nowhere ahead),
 * an extra or duplicated one (the target record is nowhere ahead in the source), a changed one
 * (neither is found and at least two fields agree) and an out-of-order one (both are found
 * ahead). Memory is bounded by the two windows plus the duplicate window, never by topic size.
 *
 * Source records pushed with `inFlight` lie past the compared range: the comparison is
 * `complete` as soon as the target reaches one of them, and they are never reported missing.
 * With `earlierCopies` the same machinery classifies the target records before that copy.
 */
export class RecordComparator {
  readonly counts: ComparisonCounts = emptyCounts()
  readonly findings: Finding[] = []
  readonly #perKind = new Map<FindingKind, number>()
  readonly #source = new Window<SourceEntry>()
  readonly #target = new Window<{ digest: RecordDigest }>()
  readonly #sourceAside = new SetAside()
  readonly #targetAside = new SetAside()
  readonly #recent: RecentMatches
  /** With `earlierCopies`: hashes of source records outside the checked range, passed recently. */
  readonly #recentOutside: RecentMatches
  readonly #earlier: { readonly sourceFromOffset: number, readonly sourceUntilOffset: number } | undefined
  readonly #lookahead: number
  readonly #maxFindings: number
  #sourceEnded = false
  #targetEnded = false
  #complete = false
  #sourceTaken = 0
  #targetTaken = 0
  #targetStopOffset: number | undefined

  constructor (options: RecordComparatorOptions = {}) {
    this.#lookahead = Math.max(1, options.lookaheadRecords ?? 1000)
    this.#recent = new RecentMatches(options.duplicateWindowRecords ?? 100_000)
    this.#earlier = options.earlierCopies
    this.#recentOutside = new RecentMatches(this.#earlier === undefined ? 0 : options.duplicateWindowRecords ?? 100_000)
    this.#maxFindings = options.maxFindingsPerKind ?? 100
  }

  /** True once every in-range source record is accounted for and the target reached the in-flight part (or both streams ended). */
  get complete (): boolean { return this.#complete }

  /**
   * The target offset where the copy reached the in-flight source part (the first target record
   * not judged: it and the records after it lie beyond the compared range); undefined when the
   * comparison ended because a stream did.
   */
  get targetStopOffset (): number | undefined { return this.#targetStopOffset }

  /** Whether a record with this identity hash was matched recently (within the duplicate window). */
  matchedRecently (hash: number): boolean { return this.#recent.has(hash) }

  /** Records buffered per side and not yet decided. */
  get buffered (): { source: number, target: number } { return { source: this.#source.length, target: this.#target.length } }

  /** How many more records each side needs before a decision can be made (0 when it can proceed). */
  get wants (): { source: number, target: number } {
    return {
      source: this.#sourceEnded ? 0 : Math.max(0, this.#lookahead + 1 - this.#source.length),
      target: this.#targetEnded ? 0 : Math.max(0, this.#lookahead + 1 - this.#target.length),
    }
  }

  /** No record set aside, no pending mismatch, and at most one side buffered: safe to compare by range hashes again. */
  get settled (): boolean {
    return this.#sourceAside.size === 0 && this.#targetAside.size === 0 && (this.#source.length === 0 || this.#target.length === 0)
  }

  pushSource (digest: RecordDigest, inFlight = false): void {
    this.#source.push({ digest, inFlight: inFlight && this.#earlier === undefined })
    this.#process()
  }

  pushTarget (digest: RecordDigest): void {
    this.#target.push({ digest })
    this.#process()
  }

  endSource (): void { this.#sourceEnded = true; this.#process() }
  endTarget (): void { this.#targetEnded = true; this.#process() }

  /** Takes what is buffered (only when `settled`), to be compared again by range. */
  takeBuffered (): { source: RecordDigest[], target: RecordDigest[] } {
    return { source: this.#source.drain().map(e => e.digest), target: this.#target.drain().map(e => e.digest) }
  }

  /** `acceptMatchedRange([source], [target])` without the lists: the in-step fast path, once per record. */
  acceptMatch (source: RecordDigest, target: RecordDigest): void {
    if (this.#earlier === undefined) {
      this.counts.checked++
      this.counts.bytes += source.sizeBytes
    }
    this.#matched(source, target)
    this.#sourceTaken++
    this.#targetTaken++
  }

  /** Accounts for records known equal by a range hash, in order: `source[i]` is copied at `target[i]`. */
  acceptMatchedRange (source: readonly RecordDigest[], target: readonly RecordDigest[] = source): void {
    for (let i = 0; i < source.length; i++) {
      const digest = source[i]!
      if (this.#earlier === undefined) {
        this.counts.checked++
        this.counts.bytes += digest.sizeBytes
      }
      this.#matched(digest, target[i]!)
    }
    this.#sourceTaken += source.length
    this.#targetTaken += source.length
  }

  /** With `earlierCopies`: the source record is outside the checked range. */
  #outside (digest: RecordDigest): boolean {
    return this.#earlier !== undefined && (digest.offset < this.#earlier.sourceFromOffset || digest.offset >= this.#earlier.sourceUntilOffset)
  }

  /** With `earlierCopies`: a source record taken, remembered so that a later copy of it is recognised. */
  #passed (digest: RecordDigest): void {
    if (this.#outside(digest)) this.#recentOutside.add(digest.hash)
    else this.#recent.add(digest.hash)
  }

  /** `source` is copied at `target`: the match, or (earlier copies) a duplicate of a checked record. */
  #matched (source: RecordDigest, target: RecordDigest): void {
    if (this.#earlier === undefined) {
      this.counts.matched++
      this.#recent.add(target.hash)
      return
    }
    const outside = this.#outside(source)
    this.#passed(source)
    if (!outside) this.#duplicate(target)
  }

  #duplicate (digest: RecordDigest): void {
    this.counts.duplicated++
    this.#report({ kind: 'duplicated', targetOffset: digest.offset, hash: digest.hash })
  }

  #report (finding: Finding): void {
    const seen = this.#perKind.get(finding.kind) ?? 0
    this.#perKind.set(finding.kind, seen + 1)
    if (seen < this.#maxFindings) this.findings.push(finding)
  }

  #takeSource (): SourceEntry {
    this.#sourceTaken++
    const entry = this.#source.shift()!
    if (!entry.inFlight && this.#earlier === undefined) {
      this.counts.checked++
      this.counts.bytes += entry.digest.sizeBytes
    }
    return entry
  }

  #takeTarget (): RecordDigest {
    this.#targetTaken++
    return this.#target.shift()!.digest
  }

  #missing (digest: RecordDigest): void {
    if (this.#earlier !== undefined) { this.#passed(digest); return }
    this.counts.missing++
    this.#report({ kind: 'missing', sourceOffset: digest.offset, hash: digest.hash })
  }

  /** A target record with no source counterpart: a re-delivery of a recent record, or extra. */
  #unmatchedTarget (digest: RecordDigest): void {
    if (this.#recent.has(digest.hash)) {
      this.#duplicate(digest)
    } else if (this.#recentOutside.has(digest.hash)) {
      // An earlier copy of a source record outside the checked range: not checked.
    } else {
      this.counts.extra++
      this.#report({ kind: 'extra', targetOffset: digest.offset, hash: digest.hash })
    }
  }

  #outOfOrder (source: RecordDigest, target: RecordDigest): void {
    if (this.#earlier !== undefined) { this.#matched(source, target); return }
    this.counts.outOfOrder++
    this.#recent.add(source.hash)
    this.#report({ kind: 'out-of-order', sourceOffset: source.offset, targetOffset: target.offset, hash: source.hash })
  }

  #expireAside (): void {
    for (const digest of this.#sourceAside.expire(this.#targetTaken - 2 * this.#lookahead)) this.#missing(digest)
    for (const digest of this.#targetAside.expire(this.#sourceTaken - 2 * this.#lookahead)) this.#unmatchedTarget(digest)
  }

  #canLookAhead (): boolean {
    return (this.#sourceEnded || this.#source.length > this.#lookahead) && (this.#targetEnded || this.#target.length > this.#lookahead)
  }

  #process (): void {
    while (!this.#complete && this.#step());
    if (this.#complete) return
    if (this.#sourceEnded && this.#targetEnded && this.#source.length === 0 && this.#target.length === 0) this.#finish()
    // Earlier copies: once every target record is decided, the rest of the source does not matter.
    else if (this.#earlier !== undefined && this.#targetEnded && this.#target.length === 0 && this.#targetAside.size === 0) this.#finish()
  }

  #finish (): void {
    for (const digest of this.#sourceAside.expire()) this.#missing(digest)
    for (const digest of this.#targetAside.expire()) this.#unmatchedTarget(digest)
    this.#complete = true
  }

  /** One decision; false when more input is needed. */
  #step (): boolean {
    const s = this.#source.first
    const t = this.#target.first?.digest
    if (s !== undefined && t !== undefined && s.digest.hash === t.hash) {
      if (s.inFlight) { this.#targetStopOffset = t.offset; this.#finish(); return false }
      this.#takeSource()
      this.#takeTarget()
      this.#matched(s.digest, t)
      return true
    }
    if (t !== undefined) {
      const early = this.#sourceAside.take(t.hash)
      if (early !== undefined) {
        this.#takeTarget()
        this.#outOfOrder(early, t)
        return true
      }
    }
    if (s !== undefined && !s.inFlight) {
      const early = this.#targetAside.take(s.digest.hash)
      if (early !== undefined) {
        this.#takeSource()
        this.#outOfOrder(s.digest, early)
        return true
      }
    }
    if (s === undefined && t === undefined) return false
    if (!this.#canLookAhead()) return false
    this.#expireAside()

    if (s === undefined) {
      if (!this.#sourceEnded) return false
      this.#unmatchedTarget(this.#takeTarget())
      return true
    }
    if (t === undefined) {
      if (!this.#targetEnded) return false
      if (s.inFlight) { this.#finish(); return false }
      this.#missing(this.#takeSource().digest)
      return true
    }
    if (s.inFlight) {
      // Past the compared range: a target record that is somewhere in the in-flight source part means the copy reached it.
      if (this.#source.indexOf(t.hash) >= 0) { this.#targetStopOffset = t.offset; this.#finish(); return false }
      this.#unmatchedTarget(this.#takeTarget())
      return true
    }
    const inSource = this.#source.indexOf(t.hash)
    if (
      this.#earlier !== undefined &&
      s.digest.offset < this.#earlier.sourceFromOffset &&
      inSource < 0 &&
      !this.#recent.has(t.hash) &&
      !this.#recentOutside.has(t.hash)
    ) {
      // Earlier copies: the source is read from before the checked range; catch up to the copies before judging a target record.
      this.#passed(this.#takeSource().digest)
      return true
    }
    const inTarget = this.#target.indexOf(s.digest.hash)
    if (inSource < 0 && inTarget < 0) {
      if (this.#recent.has(t.hash) || this.#recentOutside.has(t.hash)) {
        this.#unmatchedTarget(this.#takeTarget())
        return true
      }
      const fields = differingFields(s.digest, t)
      this.#takeSource()
      this.#takeTarget()
      if (fields.length <= 2 && this.#outside(s.digest)) {
        this.#passed(s.digest)
      } else if (fields.length <= 2) {
        if (this.#earlier !== undefined) this.#passed(s.digest)
        this.counts.changed++
        for (const field of fields) this.counts.changedFields[field]++
        this.#report({ kind: 'changed', sourceOffset: s.digest.offset, targetOffset: t.offset, fields, hash: s.digest.hash })
      } else {
        this.#missing(s.digest)
        this.#unmatchedTarget(t)
      }
      return true
    }
    if (inTarget < 0) {
      this.#missing(this.#takeSource().digest)
      return true
    }
    if (inSource < 0) {
      this.#unmatchedTarget(this.#takeTarget())
      return true
    }
    // Both are found further on: set aside the one displaced less far; it resolves as out of order when its counterpart arrives.
    if (inSource <= inTarget) this.#sourceAside.add(this.#takeSource().digest, this.#targetTaken)
    else this.#targetAside.add(this.#takeTarget(), this.#sourceTaken)
    return true
  }
}
