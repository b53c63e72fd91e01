import type { FlowConfig } from '../config/mirror-config.js'
import { errorLabel } from '../shared/errors.js'
import { InternalTopicWriter, readInternalTopic } from '../kafka/internal-topic.js'
import { flowLabels, type FlowLabels } from '../pipeline/pipeline-observer.js'
import { settleWithin } from '../shared/deadline.js'
import type { Logger } from '../shared/logger.js'
import { RearmingTimer } from '../shared/rearming-timer.js'
import { decodeOffsetSync } from './offset-sync-record.js'
import { LiveRanges, prunableRangeKeys } from './offset-sync-pruning.js'
import type { OffsetsObserver } from './offsets-observer.js'

export interface OffsetSyncPrunerOptions {
  readonly logger: Logger
  readonly observer?: OffsetsObserver
  /** Time between prunes; default 10 minutes. The first runs one interval after start. */
  readonly intervalMs?: number
  /** Whether this process coordinates the flow now; timed prunes run only then (default: always). */
  readonly isCoordinator?: () => boolean
}

/** How long `stop()` waits for a running prune, then for the client to disconnect. */
const STOP_BOUND_MS = 5_000

/**
 * Keeps the offset-syncs topic from growing for ever: every interval it reads the topic, asks the
 * target for each mirrored partition's log start offset, and writes tombstones for the ranges
 * whose target records are all gone (`prunableRangeKeys`); compaction then drops them. Without
 * it the topic keeps one range per gap in the source offsets (one per transaction on a
 * transactional topic) for as long as the topic lives. A failed prune is logged and tried again
 * at the next interval; translation never depends on it. `start()`/`stop()`, stop once-only.
 */
export class OffsetSyncPruner {
  readonly #flow: FlowConfig
  readonly #labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: OffsetsObserver
  readonly #intervalMs: number
  readonly #isCoordinator: () => boolean
  readonly #writer: InternalTopicWriter
  #timer: RearmingTimer | undefined
  #pruning: Promise<number> | undefined
  #stopping: Promise<void> | undefined

  constructor (flow: FlowConfig, options: OffsetSyncPrunerOptions) {
    this.#flow = flow
    this.#labels = flowLabels(flow)
    this.#logger = options.logger.child({ flow: flow.name, component: 'offset-sync-pruner' })
    this.#observer = options.observer ?? {}
    this.#intervalMs = options.intervalMs ?? 600_000
    this.#isCoordinator = options.isCoordinator ?? (() => true)
    this.#writer = new InternalTopicWriter(flow.target, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  async start (): Promise<void> {
    await this.#writer.start()
    // Re-armed after each prune: a slow one never overlaps the next.
    this.#timer = new RearmingTimer(this.#intervalMs, () => this.#isCoordinator() ? this.prune() : Promise.resolve())
    this.#timer.start()
  }

  /** One prune now (or the one running); resolves with the number of ranges tombstoned. */
  prune (): Promise<number> {
    this.#pruning ??= this.#pruneOnce().catch(error => {
      this.#logger.warn('pruning offset syncs failed; trying again at the next interval', { code: errorLabel(error), error })
      throw error
    }).finally(() => { this.#pruning = undefined })
    return this.#pruning
  }

  async #pruneOnce (): Promise<number> {
    const topic = this.#flow.offsetSyncs.topic
    const ranges = new LiveRanges()
    const found = await readInternalTopic(this.#flow.target, topic, (key, value) => {
      const entry = decodeOffsetSync(key, value)
      if (entry !== undefined) ranges.apply(entry)
    }, this.#logger)
    if (!found || ranges.size === 0) return 0
    const logStarts = new Map<string, Map<number, bigint>>()
    for (const targetTopic of ranges.targetTopics()) {
      const starts = await this.#writer.logStartOffsets(targetTopic)
      if (starts !== undefined) logStarts.set(targetTopic, starts)
    }
    const keys = prunableRangeKeys(ranges, logStarts)
    if (keys.length > 0) await this.#writer.write(topic, keys.map(key => ({ key, value: null })))
    this.#observer.syncsPruned?.(this.#labels, keys.length)
    this.#logger.info('offset syncs pruned', { topic, ranges: ranges.size, tombstoned: keys.length })
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
