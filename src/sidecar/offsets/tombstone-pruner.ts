import type { FlowConfig } from '../../config/mirror-config.js'
import { InternalTopicWriter } from '../../kafka/internal-topic.js'
import { settleWithin } from '../../shared/deadline.js'
import { errorLabel } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'

/** How long `stop()` waits for a running prune, then for the client to disconnect. */
const STOP_BOUND_MS = 5_000

/** What one read of a compacted internal topic found: how many entries, the target topics they map, and which keys are gone. */
export interface PruneScan {
  readonly entries: number
  readonly targetTopics: Iterable<string>
  /** Keys whose target records are all below the log start offsets given (per target topic and partition). */
  readonly prunable: (logStarts: ReadonlyMap<string, ReadonlyMap<number, bigint>>) => string[]
}

export interface TombstonePrunerOptions {
  readonly logger: Logger
  /** What the topic holds, for log lines: `offset syncs`, `digests`. */
  readonly what: string
  /** The log field naming how many entries were read: `ranges`, `digests`. */
  readonly entriesField: string
  readonly topic: string
  /** Reads the topic; undefined when it does not exist or holds nothing. */
  readonly scan: () => Promise<PruneScan | undefined>
  /** Told how many keys each prune tombstoned. */
  readonly pruned?: (tombstoned: number) => void
  /** Time between prunes; default 10 minutes. The first runs one interval after start. */
  readonly intervalMs?: number
  /** Whether this process coordinates the flow now; timed prunes run only then (default: always). */
  readonly isCoordinator?: () => boolean
}

/**
 * Keeps a compacted internal topic on the target to what the target still holds: every interval
 * (in the coordinating process) it reads the topic (`scan`), asks the target for the log start
 * offsets of the target topics it maps, and writes tombstones for the keys whose records are all
 * gone; compaction then drops them. Re-armed after each prune, so a slow one never overlaps the
 * next. A failed prune is logged and tried again at the next interval. `start()`/`stop()`, stop
 * once-only. Serves the offset syncs (`OffsetSyncPruner`) and the digests (`DigestPruner`).
 */
export class TombstonePruner {
  readonly #options: TombstonePrunerOptions
  readonly #writer: InternalTopicWriter
  #timer: RearmingTimer | undefined
  #pruning: Promise<number> | undefined
  #stopping: Promise<void> | undefined
  /** The writer, connected on first use (and again after a failed connection). */
  #connected: Promise<void> | undefined

  constructor (flow: FlowConfig, options: TombstonePrunerOptions) {
    this.#options = options
    this.#writer = new InternalTopicWriter(flow.target, options.logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  /**
   * Arms the timer; the target is first reached by the first prune, so a target that is down while
   * the mirror starts (it starts after the flow) delays prunes instead of stopping the process.
   */
  async start (): Promise<void> {
    const isCoordinator = this.#options.isCoordinator ?? (() => true)
    this.#timer = new RearmingTimer(this.#options.intervalMs ?? 600_000, () => isCoordinator() ? this.prune() : Promise.resolve())
    this.#timer.start()
  }

  /** One prune now (or the one running); resolves with the number of keys tombstoned. */
  prune (): Promise<number> {
    this.#pruning ??= this.#pruneOnce().catch(error => {
      this.#options.logger.warn(`pruning ${this.#options.what} failed; trying again at the next interval`, { code: errorLabel(error), error })
      throw error
    }).finally(() => { this.#pruning = undefined })
    return this.#pruning
  }

  async #pruneOnce (): Promise<number> {
    const { topic, scan, what, entriesField, pruned, logger } = this.#options
    this.#connected ??= this.#writer.start().catch(error => {
      this.#connected = undefined
      throw error
    })
    await this.#connected
    const found = await scan()
    if (found === undefined || found.entries === 0) return 0
    const logStarts = new Map<string, Map<number, bigint>>()
    for (const targetTopic of new Set(found.targetTopics)) {
      const starts = await this.#writer.logStartOffsets(targetTopic)
      if (starts !== undefined) logStarts.set(targetTopic, starts)
    }
    const keys = found.prunable(logStarts)
    if (keys.length > 0) await this.#writer.write(topic, keys.map(key => ({ key, value: null })))
    pruned?.(keys.length)
    logger.info(`${what} pruned`, { topic, [entriesField]: found.entries, tombstoned: keys.length })
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
