import type { DigestConfig, FlowConfig } from '../config/mirror-config.js'
import { InternalTopicWriter } from '../kafka/internal-topic.js'
import { settleWithin } from '../shared/deadline.js'
import { errorLabel } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { RearmingTimer } from '../shared/rearming-timer.js'
import { loadRangeDigests } from './digest-verification.js'
import { digestKey, type RangeDigest } from './range-digest.js'

/** How long `stop()` waits for a running prune, then for the client to disconnect. */
const STOP_BOUND_MS = 5_000

/**
 * Keys of the digests nothing can be checked against any more: every target record they cover is
 * below the target partition's log start (retention or deleteRecords removed them), and they are
 * not the newest digest of their partition (the one a running mirror may still be growing under
 * the same key). Topics without log start offsets (deleted, unknown) keep every digest. Pure.
 */
export function prunableDigestKeys (digests: readonly RangeDigest[], logStarts: ReadonlyMap<string, ReadonlyMap<number, bigint>>): string[] {
  const newest = new Map<string, bigint>()
  for (const d of digests) {
    const partition = `${d.targetTopic}\u0000${d.partition}`
    const current = newest.get(partition)
    if (current === undefined || d.targetStart > current) newest.set(partition, d.targetStart)
  }
  return digests.filter(d => {
    const logStart = logStarts.get(d.targetTopic)?.get(d.partition)
    return logStart !== undefined && newest.get(`${d.targetTopic}\u0000${d.partition}`) !== d.targetStart && d.targetStart + BigInt(d.count) <= logStart
  }).map(d => digestKey(d.sourceTopic, d.partition, d.targetStart))
}

export interface DigestPrunerOptions {
  readonly logger: Logger
  /** Time between prunes; default 10 minutes (as the offset syncs'). The first runs one interval after start. */
  readonly intervalMs?: number
  /** Whether this process coordinates the flow now; prunes run only then (default: always). */
  readonly isCoordinator?: () => boolean
}

/**
 * Keeps the digests topic to what the target still holds: every interval (coordinator only) it
 * reads the topic, asks the target for the log start offsets, and tombstones the digests whose
 * records are all gone (`prunableDigestKeys`); compaction drops them. A failed prune is logged
 * and tried again at the next interval. `start()`/`stop()`, stop once-only.
 */
export class DigestPruner {
  readonly #flow: FlowConfig & { readonly digests: DigestConfig }
  readonly #logger: Logger
  readonly #intervalMs: number
  readonly #isCoordinator: () => boolean
  readonly #writer: InternalTopicWriter
  #timer: RearmingTimer | undefined
  #pruning: Promise<number> | undefined
  #stopping: Promise<void> | undefined

  constructor (flow: FlowConfig & { readonly digests: DigestConfig }, options: DigestPrunerOptions) {
    this.#flow = flow
    this.#logger = options.logger.child({ flow: flow.name, component: 'digest-pruner' })
    this.#intervalMs = options.intervalMs ?? 600_000
    this.#isCoordinator = options.isCoordinator ?? (() => true)
    this.#writer = new InternalTopicWriter(flow.target, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  async start (): Promise<void> {
    await this.#writer.start()
    this.#timer = new RearmingTimer(this.#intervalMs, () => this.#isCoordinator() ? this.prune() : Promise.resolve())
    this.#timer.start()
  }

  /** One prune now (or the one running); resolves with the number of digests tombstoned. */
  prune (): Promise<number> {
    this.#pruning ??= this.#pruneOnce().catch(error => {
      this.#logger.warn('pruning digests failed; trying again at the next interval', { code: errorLabel(error), error })
      throw error
    }).finally(() => { this.#pruning = undefined })
    return this.#pruning
  }

  async #pruneOnce (): Promise<number> {
    const topic = this.#flow.digests.topic
    const { exists, digests } = await loadRangeDigests(this.#flow.target, topic, this.#logger)
    if (!exists || digests.length === 0) return 0
    const logStarts = new Map<string, Map<number, bigint>>()
    for (const targetTopic of new Set(digests.map(d => d.targetTopic))) {
      const starts = await this.#writer.logStartOffsets(targetTopic)
      if (starts !== undefined) logStarts.set(targetTopic, starts)
    }
    const keys = prunableDigestKeys(digests, logStarts)
    if (keys.length > 0) await this.#writer.write(topic, keys.map(key => ({ key, value: null })))
    this.#logger.info('digests pruned', { topic, digests: digests.length, tombstoned: keys.length })
    return keys.length
  }

  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#timer?.stop()
      await settleWithin(this.#pruning ?? Promise.resolve(), STOP_BOUND_MS)
      await settleWithin(this.#writer.stop(), STOP_BOUND_MS)
    })()
    return this.#stopping
  }
}
