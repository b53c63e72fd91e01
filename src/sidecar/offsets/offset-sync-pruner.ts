import type { FlowConfig } from '../../config/mirror-config.js'
import { readInternalTopic } from '../../kafka/internal-topic.js'
import { flowLabels } from '../../ports/pipeline-observer.js'
import type { Logger } from '../../shared/logger.js'
import { decodeOffsetSync } from '../../mirror-topics/offset-sync-record.js'
import { LiveRanges, prunableRangeKeys } from './offset-sync-pruning.js'
import type { OffsetsObserver } from './offsets-observer.js'
import { TombstonePruner } from './tombstone-pruner.js'

export interface OffsetSyncPrunerOptions {
  readonly logger: Logger
  readonly observer?: OffsetsObserver
  /** Time between prunes; default 10 minutes. The first runs one interval after start. */
  readonly intervalMs?: number
  /** Whether this process coordinates the flow now; timed prunes run only then (default: always). */
  readonly isCoordinator?: () => boolean
}

/**
 * Keeps the offset-syncs topic from growing for ever: every interval it reads the topic, asks the
 * target for each mirrored partition's log start offset, and writes tombstones for the ranges
 * whose target records are all gone (`prunableRangeKeys`); compaction then drops them. Without
 * it the topic keeps one range per gap in the source offsets (one per transaction on a
 * transactional topic) for as long as the topic lives. A failed prune is logged and tried again
 * at the next interval; translation never depends on it. `start()`/`stop()`, stop once-only.
 */
export class OffsetSyncPruner {
  readonly #pruner: TombstonePruner

  constructor (flow: FlowConfig, options: OffsetSyncPrunerOptions) {
    const labels = flowLabels(flow)
    const observer = options.observer ?? {}
    const logger = options.logger.child({ flow: flow.name, component: 'offset-sync-pruner' })
    const topic = flow.offsetSyncs.topic
    this.#pruner = new TombstonePruner(flow, {
      logger,
      what: 'offset syncs',
      entriesField: 'ranges',
      topic,
      scan: async () => {
        const ranges = new LiveRanges()
        const found = await readInternalTopic(flow.target, topic, (key, value) => {
          const entry = decodeOffsetSync(key, value)
          if (entry !== undefined) ranges.apply(entry)
        }, logger)
        return found ? { entries: ranges.size, targetTopics: ranges.targetTopics(), prunable: logStarts => prunableRangeKeys(ranges, logStarts) } : undefined
      },
      pruned: tombstoned => observer.syncsPruned?.(labels, tombstoned),
      ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
      ...(options.isCoordinator === undefined ? {} : { isCoordinator: options.isCoordinator }),
    })
  }

  start (): Promise<void> { return this.#pruner.start() }

  /** One prune now (or the one running); resolves with the number of ranges tombstoned. */
  prune (): Promise<number> { return this.#pruner.prune() }

  stop (): Promise<void> { return this.#pruner.stop() }
}
