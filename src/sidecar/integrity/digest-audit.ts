import type { DigestConfig, FlowConfig } from '../../config/mirror-config.js'
import { AuditClient } from '../../kafka/audit-client.js'
import { flowLabels, type FlowLabels } from '../../ports/pipeline-observer.js'
import { settleWithin } from '../../shared/deadline.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import { PartitionReader } from '../../mirror-topics/partition-reader.js'
import { describeDigestRange, type RangeDigest } from '../../mirror-topics/range-digest.js'
import { combineHashes, recordHash } from '../../mirror-topics/record-digest.js'
import { partitionKey } from '../../shared/partition-key.js'

/** Digests the audit keeps to re-read, newest first out when full: about 10 million records at 1000 per digest. */
const DIGEST_AUDIT_SAMPLE = 10_000

/** Hears what the digest writer and the continuous audit do (metrics). */
export interface DigestObserver {
  written?: (flow: FlowLabels, digests: number) => void
  audited?: (flow: FlowLabels, topic: string, records: number) => void
  mismatch?: (flow: FlowLabels, digest: RangeDigest) => void
}

export interface DigestAuditOptions {
  readonly logger: Logger
  readonly observer?: DigestObserver
}

/** What the target holds where a digest says its records are. */
export type DigestAuditOutcome = 'matched' | 'mismatch' | 'gone'

/**
 * The continuous audit of one flow (`--digests.audit.interval.ms`): keeps the digests this process
 * wrote (`add`, the last `DIGEST_AUDIT_SAMPLE`), and every interval (counted from the end of the
 * last pass) re-reads the target records of the next ones in turn, at most `auditMaxRecords`
 * records per pass, and compares their hash with the digest. Every kept digest is re-read once per
 * `ceil(kept records / auditMaxRecords)` passes. A mismatch is counted
 * (`kafka_mirror_digest_mismatches_total`), logged as an error naming topic, partition and
 * offsets, and not re-read again; a digest whose records are below the target's log start
 * (retention, deleteRecords) is dropped. A failed pass is logged and the next one tries again.
 * `start()`/`stop()`, stop once-only.
 */
export class DigestAudit {
  readonly #config: DigestConfig
  readonly #labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: DigestObserver
  readonly #client: AuditClient
  /** By partition and target start, oldest first; a rewritten (grown) digest replaces its older version. */
  readonly #sample = new Map<string, RangeDigest>()
  /** Key of the digest the next pass starts at. */
  #cursor: string | undefined
  #timer: RearmingTimer | undefined
  #pass: Promise<unknown> = Promise.resolve()
  #stopping: Promise<void> | undefined

  constructor (flow: FlowConfig & { readonly digests: DigestConfig }, options: DigestAuditOptions) {
    this.#config = flow.digests
    this.#labels = flowLabels(flow)
    this.#logger = options.logger.child({ flow: flow.name, component: 'digest-audit' })
    this.#observer = options.observer ?? {}
    this.#client = new AuditClient(flow.target, { logger: this.#logger, retries: 3 })
  }

  /** Digests made durable: kept to be re-read. */
  add (digests: readonly RangeDigest[]): void {
    for (const digest of digests) {
      const key = `${partitionKey(digest.targetTopic, digest.partition)}\u0000${digest.targetStart}`
      if (this.#cursor === key && this.#sample.has(key)) this.#cursor = this.#nextKey(key)
      this.#sample.delete(key)
      this.#sample.set(key, digest)
      if (this.#sample.size > DIGEST_AUDIT_SAMPLE) {
        const oldest = this.#sample.keys().next().value as string
        if (this.#cursor === oldest) this.#cursor = this.#nextKey(oldest)
        this.#sample.delete(oldest)
      }
    }
  }

  #nextKey (key: string): string | undefined {
    let seen = false
    for (const k of this.#sample.keys()) {
      if (seen) return k
      if (k === key) seen = true
    }
    return undefined
  }

  async start (): Promise<void> {
    await this.#client.connect()
    this.#timer = new RearmingTimer(this.#config.auditIntervalMs, () => (this.#pass = this.runPass()))
    this.#timer.start()
  }

  /** The digests the next pass re-reads, in turn from the cursor, within `auditMaxRecords`. */
  #nextBatch (): RangeDigest[] {
    const keys = [...this.#sample.keys()]
    if (keys.length === 0) return []
    let at = this.#cursor === undefined ? 0 : Math.max(0, keys.indexOf(this.#cursor))
    const out: RangeDigest[] = []
    let records = 0
    for (let taken = 0; taken < keys.length; taken++) {
      const digest = this.#sample.get(keys[at] as string) as RangeDigest
      if (records + digest.count > this.#config.auditMaxRecords && out.length > 0) break
      out.push(digest)
      records += digest.count
      at = (at + 1) % keys.length
    }
    this.#cursor = keys[at]
    return out
  }

  /** One pass: re-reads the next digests in turn; resolves with what each showed. */
  async runPass (): Promise<Array<{ digest: RangeDigest, outcome: DigestAuditOutcome }>> {
    const outcomes: Array<{ digest: RangeDigest, outcome: DigestAuditOutcome }> = []
    try {
      for (const digest of this.#nextBatch()) {
        const outcome = await this.#check(digest)
        outcomes.push({ digest, outcome })
        if (outcome !== 'matched') this.#sample.delete(`${partitionKey(digest.targetTopic, digest.partition)}\u0000${digest.targetStart}`)
      }
    } catch (error) {
      this.#logger.warn('digest audit pass failed; the next pass tries again', { error: (error as Error).message })
    }
    return outcomes
  }

  async #check (digest: RangeDigest): Promise<DigestAuditOutcome> {
    const from = Number(digest.targetStart)
    const until = from + digest.count
    const starts = await this.#client.listOffsets(digest.targetTopic, [digest.partition], 'earliest')
    if ((starts.get(digest.partition) ?? 0) > from) return 'gone'
    const ends = await this.#client.listOffsets(digest.targetTopic, [digest.partition], 'latest', 'read_committed')
    const end = ends.get(digest.partition) ?? 0
    const records = end < until ? [] : await new PartitionReader(this.#client, digest.targetTopic, digest.partition).records(from, until, digest.count)
    this.#observer.audited?.(this.#labels, digest.sourceTopic, records.length)
    const consecutive = records.length === digest.count && records.every((r, i) => Number(r.offset) === from + i)
    if (consecutive && combineHashes(records.map(recordHash)) === digest.hash) return 'matched'
    const what =
      end < until
        ? `the target partition ends at offset ${end}, before the digest's last record`
        : records.length !== digest.count || !consecutive
          ? `${records.length} records are readable there where the mirror wrote ${digest.count} at consecutive offsets`
          : "at least one record's key, value, headers or timestamp differs from what the mirror wrote"
    this.#logger.error(`digest mismatch: ${describeDigestRange(digest)}: ${what}; run mirror-check verify --digests on this topic for the details`, {
      topic: digest.targetTopic,
      sourceTopic: digest.sourceTopic,
      partition: digest.partition,
      targetFromOffset: from,
      targetToOffset: until - 1,
      sourceFromOffset: String(digest.sourceFirst),
      sourceToOffset: String(digest.sourceLast),
    })
    this.#observer.mismatch?.(this.#labels, digest)
    return 'mismatch'
  }

  stop (boundMs = 5_000): Promise<void> {
    this.#stopping ??= (async () => {
      this.#timer?.stop()
      await settleWithin(this.#pass, boundMs)
      await this.#client.close()
    })()
    return this.#stopping
  }
}
