import type { ClusterConnection } from '../config/cluster-connection.js'
import type { AuditClient } from '../kafka/audit-client.js'
import { readInternalTopic } from '../kafka/internal-topic.js'
import type { Logger } from '../shared/logger.js'
import { PartitionReader } from './partition-reader.js'
import { decodeDigest, type RangeDigest } from './range-digest.js'
import { HashAccumulator, recordHash } from './record-digest.js'

/** Every digest of the digests topic still standing (the newest version of each key), in no order. */
export async function loadRangeDigests (
  connection: ClusterConnection,
  topic: string,
  logger: Logger,
  timeoutMs = 30_000
): Promise<{ exists: boolean, digests: RangeDigest[] }> {
  const byKey = new Map<string, RangeDigest>()
  const exists = await readInternalTopic(
    connection,
    topic,
    (key, value) => {
      const entry = decodeDigest(key, value)
      if (entry?.kind === 'digest') byKey.set(entry.key, entry.digest)
      else if (entry?.kind === 'deleted') byKey.delete(entry.key)
    },
    logger,
    timeoutMs
  )
  return { exists, digests: [...byKey.values()] }
}

/** Kinds of difference a digest check finds. */
export type DigestFindingKind = 'missing' | 'duplicated' | 'extra' | 'changed'

/**
 * One difference between a digest and the target. `changed`: the records at the digest's place
 * hash otherwise, with the count the digest says (at least one record differs; a digest cannot
 * say which). `missing`: `records` fewer records than the digest covers are there.
 * `extra` / `duplicated`: `records` more (duplicated when the one more is equal to its neighbour,
 * or when the digest's source offsets were copied before: a re-copy after a restart).
 */
export interface DigestFinding {
  readonly kind: DigestFindingKind
  readonly digest: RangeDigest
  readonly records: number
  /** Target offset where the difference is, when it could be placed (one extra or duplicated record). */
  readonly targetOffset?: number
  /** Target offsets where the digest's records were looked for: `targetFrom .. targetUntil - 1`. */
  readonly targetFrom: number
  readonly targetUntil: number
}

export interface DigestPartitionCheck {
  readonly partition: number
  /** Digests compared with the target. */
  ranges: number
  /** Records the compared digests cover. */
  checked: number
  matched: number
  missing: number
  duplicated: number
  extra: number
  /** Digests whose records differ at the same count. */
  changedRanges: number
  /** Records of digests not compared: their target records are gone (below the log start: retention, deleteRecords). */
  notChecked: number
  /**
   * Target offsets between compared digests that no digest covers: records someone else wrote, or
   * copies the mirror wrote before a crash without recording their digests (not judged).
   */
  uncovered: number
  readonly findings: DigestFinding[]
  readonly notes: string[]
}

export interface DigestCheckOptions {
  readonly target: AuditClient
  readonly targetTopic: string
  /** The digests of one target partition (any order). */
  readonly digests: readonly RangeDigest[]
  readonly partition: number
  /** How far (records, each way) a digest's records are looked for when they are not where the digest says; default 1000. */
  readonly lookaheadRecords?: number
  /** Findings kept per partition (counts are always complete); default 100. */
  readonly maxFindings?: number
  readonly fetchMaxBytes?: number
}

/** Target record hashes in offset order, read on demand and forgotten behind the check: absolute record indices. */
class TargetWindow {
  readonly #offsets: number[] = []
  readonly #hashes: number[] = []
  #base = 0
  #iterator: AsyncGenerator<import('../shared/kafka-record.js').KafkaRecord[]>
  #ended = false

  constructor (reader: PartitionReader, from: number, until: number) {
    this.#iterator = reader.chunks(from, until)
  }

  get end (): number { return this.#base + this.#offsets.length }

  async ensure (index: number): Promise<void> {
    while (!this.#ended && this.end <= index) {
      const next = await this.#iterator.next()
      if (next.done === true) { this.#ended = true; break }
      for (const record of next.value) {
        this.#offsets.push(Number(record.offset))
        this.#hashes.push(recordHash(record))
      }
    }
  }

  /** Index of the first record at or after `offset` (reads as far as needed). */
  async indexOf (offset: number): Promise<number> {
    for (;;) {
      let lo = 0
      let hi = this.#offsets.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if ((this.#offsets[mid] as number) < offset) lo = mid + 1
        else hi = mid
      }
      if (lo < this.#offsets.length || this.#ended) return this.#base + lo
      await this.ensure(this.end)
    }
  }

  hash (index: number): number | undefined { return this.#hashes[index - this.#base] }
  offset (index: number): number | undefined { return this.#offsets[index - this.#base] }

  /** Combined hash of `count` records from `index`, or undefined when fewer are there. */
  rangeHash (index: number, count: number): number | undefined {
    const from = index - this.#base
    if (from < 0 || from + count > this.#hashes.length) return undefined
    const accumulator = new HashAccumulator()
    for (let i = from; i < from + count; i++) accumulator.add(this.#hashes[i] as number)
    return accumulator.value
  }

  hashesFrom (index: number, count: number): number[] {
    const from = Math.max(0, index - this.#base)
    return this.#hashes.slice(from, Math.max(from, index - this.#base + count))
  }

  /** Forgets records before `index`. */
  trim (index: number): void {
    const drop = Math.min(this.#offsets.length, index - this.#base)
    if (drop < 4096) return
    this.#offsets.splice(0, drop)
    this.#hashes.splice(0, drop)
    this.#base += drop
  }

  async close (): Promise<void> { await this.#iterator.return(undefined) }
}

/**
 * `digests` in target order, where two cover the same target offsets only the newer (a target
 * topic recreated and copied again, with other digest boundaries): one target offset holds one record.
 */
function newestOverTargetOffsets (digests: readonly RangeDigest[], notes: string[], partition: number): RangeDigest[] {
  const sorted = [...digests].sort((a, b) => (a.targetStart < b.targetStart ? -1 : a.targetStart > b.targetStart ? 1 : 0))
  const kept: RangeDigest[] = []
  let replaced = 0
  for (const digest of sorted) {
    const last = kept[kept.length - 1]
    if (last === undefined || digest.targetStart >= last.targetStart + BigInt(last.count)) {
      kept.push(digest)
      continue
    }
    replaced++
    if ((digest.writtenAtMs ?? 0) > (last.writtenAtMs ?? 0)) {
      kept.pop()
      // The newer one may overlap earlier kept digests too.
      while (kept.length > 0 && kept[kept.length - 1]!.targetStart + BigInt(kept[kept.length - 1]!.count) > digest.targetStart) { kept.pop(); replaced++ }
      kept.push(digest)
    }
  }
  if (replaced > 0) {
    notes.push(
      `target partition ${partition}: ${replaced} older digest(s) over the same target offsets as newer ones left out (the target topic was copied again)`
    )
  }
  return kept
}

/** The index in `hashes` whose removal makes them hash to `hash`, or -1 (from the prefix state on: about n²/2 additions). */
function oneTooMany (hashes: readonly number[], hash: number): number {
  const prefix = new HashAccumulator()
  for (let j = 0; j < hashes.length; j++) {
    const without = prefix.clone()
    for (let k = j + 1; k < hashes.length; k++) without.add(hashes[k] as number)
    if (without.value === hash) return j
    prefix.add(hashes[j] as number)
  }
  return -1
}

/** After this many digests in a row that matched nowhere, look only this far either way (a target unlike its digests costs little to check). */
const NARROW_AFTER_MISSES = 2
const NARROW_RADIUS = 16

/** A digest that matched nowhere: resolved by where the next one matches. */
interface PendingDigest {
  readonly digest: RangeDigest
  /** Record index where it was expected. */
  readonly at: number
  /** Record index of the first target offset after the ones it names. */
  readonly afterBase: number
}

/**
 * The walk of one target partition along its digests, in target order (`checkPartitionDigests`):
 * each digest is compared where it says its records are, shifted by `#drift` (what earlier
 * findings moved); counts and findings go into `result`.
 */
class DigestWalk {
  readonly #window: TargetWindow
  readonly #result: DigestPartitionCheck
  readonly #lookahead: number
  readonly #maxFindings: number
  #drift = 0
  /** Digests in a row that matched nowhere. */
  #misses = 0
  #uncoveredNotes = 0
  /** Index of the first target record after the last digest's records. */
  #tail = 0
  #maxSourceLast = -1n
  #previousEnd: bigint | undefined
  #previousAfterBase: number | undefined
  #pending: PendingDigest | undefined

  constructor (window: TargetWindow, result: DigestPartitionCheck, limits: { lookahead: number, maxFindings: number }) {
    this.#window = window
    this.#result = result
    this.#lookahead = limits.lookahead
    this.#maxFindings = limits.maxFindings
  }

  #add (finding: DigestFinding): void {
    const result = this.#result
    result[finding.kind === 'changed' ? 'changedRanges' : finding.kind] += finding.kind === 'changed' ? 1 : finding.records
    if (result.findings.length < this.#maxFindings) result.findings.push(finding)
  }

  /** Judges a digest that matched nowhere by the stretch of records up to `stretchEnd`: missing, changed, or one record too many. */
  #resolve (p: PendingDigest, stretchEnd: number): void {
    const window = this.#window
    const n = p.digest.count
    const m = stretchEnd - p.at
    const targetFrom = window.offset(p.at) ?? Number(p.digest.targetStart)
    const targetUntil = targetFrom + Math.max(m, 0)
    if (m < n) { this.#add({ kind: 'missing', digest: p.digest, records: n - m, targetFrom, targetUntil }); return }
    if (m === n) { this.#add({ kind: 'changed', digest: p.digest, records: n, targetFrom, targetUntil }); return }
    const stretch = window.hashesFrom(p.at, m)
    const j = m === n + 1 ? oneTooMany(stretch, p.digest.hash) : -1
    if (j < 0) {
      this.#add({ kind: 'changed', digest: p.digest, records: n, targetFrom, targetUntil })
      this.#add({ kind: 'extra', digest: p.digest, records: m - n, targetFrom, targetUntil })
      return
    }
    const twin = stretch[j] === stretch[j - 1] || stretch[j] === stretch[j + 1]
    this.#add({
      kind: twin ? 'duplicated' : 'extra',
      digest: p.digest,
      records: 1,
      targetOffset: window.offset(p.at + j) ?? targetFrom + j,
      targetFrom,
      targetUntil,
    })
  }

  /** Source offsets copied before: a re-copy (a restart before the commit), whatever the target holds. */
  #recopied (digest: RangeDigest): void {
    const result = this.#result
    const continuation = this.#previousEnd === digest.targetStart && digest.sourceFirst === this.#maxSourceLast
    if (digest.sourceFirst <= this.#maxSourceLast && !continuation) {
      const overlap = Number(this.#maxSourceLast - digest.sourceFirst + 1n)
      const records = Math.min(digest.count, overlap)
      result.duplicated += records
      if (result.findings.length < this.#maxFindings) {
        result.findings.push({
          kind: 'duplicated',
          digest,
          records,
          targetFrom: Number(digest.targetStart),
          targetUntil: Number(digest.targetStart) + records,
        })
      }
    }
    if (digest.sourceLast > this.#maxSourceLast) this.#maxSourceLast = digest.sourceLast
  }

  /** Records (not offsets: transaction markers hold none) at offsets between the previous digest and this one: uncovered. */
  #between (digest: RangeDigest, base: number): void {
    const between = this.#previousAfterBase === undefined ? 0 : base - this.#previousAfterBase
    if (between > 0 && this.#previousEnd !== undefined) {
      this.#result.uncovered += between
      if (this.#uncoveredNotes++ < 5) {
        this.#result.notes.push(
          `target partition ${this.#result.partition}: ${between} record(s) at offsets ${this.#previousEnd}-${digest.targetStart - 1n} lie between digests: written by someone else, or copies the mirror made before a crash without recording them; not judged`
        )
      }
    }
  }

  /** How far from `from` (either way, within `radius`) the digest's records hash as it says; undefined when nowhere. */
  #locate (digest: RangeDigest, from: number, radius: number): number | undefined {
    for (let s = 0; s <= radius; s++) {
      if (this.#window.rangeHash(from + s, digest.count) === digest.hash) return s
      if (s > 0 && this.#window.rangeHash(from - s, digest.count) === digest.hash) return -s
    }
    return undefined
  }

  /** Compares one digest (the next in target order). */
  async step (digest: RangeDigest): Promise<void> {
    const window = this.#window
    const lookahead = this.#lookahead
    this.#result.ranges++
    this.#result.checked += digest.count
    this.#recopied(digest)
    const base = await window.indexOf(Number(digest.targetStart))
    this.#between(digest, base)
    const gapBefore = this.#pending === undefined ? 0 : base - this.#pending.afterBase
    this.#previousEnd = digest.targetStart + BigInt(digest.count)
    const afterBase = await window.indexOf(Number(this.#previousEnd))
    this.#previousAfterBase = afterBase
    let at = base + this.#drift
    await window.ensure(at + digest.count + lookahead)
    window.trim(Math.min(at - lookahead, this.#pending?.at ?? Number.MAX_SAFE_INTEGER))
    const radius = this.#misses >= NARROW_AFTER_MISSES ? Math.min(lookahead, NARROW_RADIUS) : lookahead
    let shift = this.#locate(digest, at, radius)
    if (shift === undefined) {
      const pending = this.#pending
      if (pending !== undefined) {
        // Two digests in a row match nowhere: the first one gained a record if dropping one makes it match, else it counts as changed.
        const gained = oneTooMany(window.hashesFrom(pending.at, pending.digest.count + 1), pending.digest.hash) >= 0
        this.#resolve(pending, pending.at + pending.digest.count + (gained ? 1 : 0))
        this.#pending = undefined
        if (gained) {
          this.#drift += 1
          at += 1
          shift = this.#locate(digest, at, radius)
        }
      }
      if (shift === undefined) {
        this.#pending = { digest, at, afterBase }
        this.#misses++
        return
      }
    }
    this.#misses = 0
    this.#matched(digest, at, shift, gapBefore)
  }

  /** The digest's records were found `shift` records from where they were expected (`at`). */
  #matched (digest: RangeDigest, at: number, shift: number, gapBefore: number): void {
    const window = this.#window
    const matchedAt = at + shift
    if (this.#pending !== undefined) {
      this.#resolve(this.#pending, matchedAt - gapBefore)
      this.#pending = undefined
    } else if (shift > 0) {
      // Records before this digest's copy that no digest covers, where none were expected.
      const hashes = window.hashesFrom(at, shift)
      const before = window.hashesFrom(at - 1, 1)[0]
      const first = window.hash(matchedAt)
      for (const [k, h] of hashes.entries()) {
        const twin = h === before || h === first || h === hashes[k - 1] || h === hashes[k + 1]
        this.#add({
          kind: twin ? 'duplicated' : 'extra',
          digest,
          records: 1,
          targetOffset: window.offset(at + k) ?? 0,
          targetFrom: window.offset(at) ?? 0,
          targetUntil: window.offset(matchedAt) ?? 0,
        })
      }
    } else if (shift < 0) {
      this.#add({ kind: 'missing', digest, records: -shift, targetFrom: window.offset(matchedAt) ?? 0, targetUntil: window.offset(at) ?? 0 })
    }
    this.#drift += shift
    this.#result.matched += digest.count
    this.#tail = matchedAt + digest.count
  }

  /** After the last digest: resolves one that matched nowhere, and counts the records after the last digest's as uncovered. */
  finish (end: number): void {
    const window = this.#window
    const result = this.#result
    if (this.#pending !== undefined) {
      // The last digest matched nowhere: what follows it on the target is not covered by any digest.
      const { digest, at } = this.#pending
      const available = Math.max(0, window.end - at)
      const oneMore = available > digest.count && oneTooMany(window.hashesFrom(at, digest.count + 1), digest.hash) >= 0
      this.#tail = at + (available < digest.count ? available : oneMore ? digest.count + 1 : digest.count)
      this.#resolve(this.#pending, this.#tail)
    }
    const tailOffset = window.offset(this.#tail) ?? end
    if (end > tailOffset) {
      result.uncovered += end - tailOffset
      result.notes.push(`target partition ${result.partition}: offsets ${tailOffset}-${end - 1} (${end - tailOffset}) lie after the last digest: written since the mirror's last commit, or by someone else; not judged`)
    }
  }
}

/** The digests compared: those whose records are still on the target (at or above its log start); the others counted as not checked, with a note. */
function checkableDigests (digests: readonly RangeDigest[], logStart: number, result: DigestPartitionCheck): RangeDigest[] {
  // A digest past the end is compared (its records are missing: the mirror wrote them before it recorded the digest).
  const checkable = digests.filter(d => {
    if (Number(d.targetStart) >= logStart) return true
    result.notChecked += d.count
    return false
  })
  const deleted = digests.length - checkable.length
  if (deleted > 0) {
    result.notes.push(
      `target partition ${result.partition}: ${deleted} digest(s) not compared: their records are (partly) below the log start offset ${logStart} (retention, deleteRecords)`
    )
  }
  return checkable
}

/**
 * Checks one target partition against the digests the mirror recorded for it, without the
 * source. Digests are taken in target order; each is compared where it says its records are
 * (shifted by what earlier findings moved). A digest that does not match there is looked for up
 * to `lookaheadRecords` either way; where the next digest matches tells how many records the
 * unmatched one lost or gained; after two digests in a row that matched nowhere, only 16 either
 * way. Memory: the hashes of one digest plus twice the lookahead.
 */
export async function checkPartitionDigests (options: DigestCheckOptions): Promise<DigestPartitionCheck> {
  const { target, targetTopic, partition } = options
  const lookahead = options.lookaheadRecords ?? 1000
  const maxFindings = options.maxFindings ?? 100
  const result: DigestPartitionCheck = {
    partition,
    ranges: 0,
    checked: 0,
    matched: 0,
    missing: 0,
    duplicated: 0,
    extra: 0,
    changedRanges: 0,
    notChecked: 0,
    uncovered: 0,
    findings: [],
    notes: [],
  }
  const digests = newestOverTargetOffsets(options.digests, result.notes, partition)
  if (digests.length === 0) return result
  const starts = await target.listOffsets(targetTopic, [partition], 'earliest')
  const ends = await target.listOffsets(targetTopic, [partition], 'latest', 'read_committed')
  const logStart = starts.get(partition) ?? 0
  const end = ends.get(partition) ?? 0
  const checkable = checkableDigests(digests, logStart, result)
  if (checkable.length === 0) return result

  const first = Number(checkable[0]!.targetStart)
  if (first > logStart) {
    result.uncovered += first - logStart
    result.notes.push(`target partition ${partition}: offsets ${logStart}-${first - 1} (${first - logStart}) lie before the first digest: written before digests were on, by someone else, or copies the mirror made before a crash without recording them; not judged`)
  }
  const readFrom = Math.max(logStart, first - lookahead)
  const window = new TargetWindow(new PartitionReader(target, targetTopic, partition, { fetchMaxBytes: options.fetchMaxBytes }), readFrom, end)
  try {
    const walk = new DigestWalk(window, result, { lookahead, maxFindings })
    for (const digest of checkable) await walk.step(digest)
    walk.finish(end)
  } finally {
    await window.close()
  }
  return result
}

/** A check passes when no digest differs; duplicates fail it unless allowed. */
export function digestCheckPassed (partitions: readonly DigestPartitionCheck[], allowDuplicates: boolean): boolean {
  return partitions.every(p => p.missing === 0 && p.extra === 0 && p.changedRanges === 0 && (allowDuplicates || p.duplicated === 0))
}

/** One line per finding, e.g. `changed: target orders-0 offsets 1000-1999 (source 1000-1999) hash to something else than their digest`. */
export function describeDigestFinding (finding: DigestFinding): string {
  const d = finding.digest
  const digestLast = d.targetStart + BigInt(d.count) - 1n
  const where =
    `digest of target ${d.targetTopic}-${d.partition} offsets ${d.targetStart}-${digestLast} (source ${d.sourceTopic}-${d.partition} offsets ${d.sourceFirst}-${d.sourceLast})`
  const looked =
    finding.targetUntil > finding.targetFrom ? `target offsets ${finding.targetFrom}-${finding.targetUntil - 1}` : `target offset ${finding.targetFrom}`
  switch (finding.kind) {
    case 'changed': return `changed: ${looked} hold ${d.count} records that differ from the ${where} (at least one record's key, value, headers or timestamp)`
    case 'missing': return `missing: ${finding.records} record(s) of the ${where} are not on the target (${looked} hold the rest)`
    case 'extra': return finding.targetOffset === undefined
      ? `extra: ${finding.records} record(s) more than the ${where} in ${looked}`
      : `extra: target ${d.targetTopic}-${d.partition}@${finding.targetOffset} is not in the ${where}`
    case 'duplicated': return finding.targetOffset === undefined
      ? `duplicated: the ${where} copies ${finding.records} source record(s) copied before (a re-copy, e.g. after a restart)`
      : `duplicated: target ${d.targetTopic}-${d.partition}@${finding.targetOffset} is one more copy of its neighbour, not in the ${where}`
  }
}
