import type { DigestConfig, FlowConfig } from '../../config/mirror-config.js'
import type { Logger } from '../../shared/logger.js'
import { loadRangeDigests } from '../../mirror-topics/digest-verification.js'
import { digestKey, type RangeDigest } from '../../mirror-topics/range-digest.js'
import { TombstonePruner } from '../offsets/tombstone-pruner.js'
import { partitionKey } from '../../shared/partition-key.js'

/**
 * Keys of the digests nothing can be checked against any more: every target record they cover is
 * below the target partition's log start (retention or deleteRecords removed them), and they are
 * not the newest digest of their partition (the one a running mirror may still be growing under
 * the same key). Topics without log start offsets (deleted, unknown) keep every digest. Pure.
 */
export function prunableDigestKeys (digests: readonly RangeDigest[], logStarts: ReadonlyMap<string, ReadonlyMap<number, bigint>>): string[] {
  const newest = new Map<string, bigint>()
  for (const d of digests) {
    const partition = partitionKey(d.targetTopic, d.partition)
    const current = newest.get(partition)
    if (current === undefined || d.targetStart > current) newest.set(partition, d.targetStart)
  }
  return digests.filter(d => {
    const logStart = logStarts.get(d.targetTopic)?.get(d.partition)
    return logStart !== undefined && newest.get(partitionKey(d.targetTopic, d.partition)) !== d.targetStart && d.targetStart + BigInt(d.count) <= logStart
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
  readonly #pruner: TombstonePruner

  constructor (flow: FlowConfig & { readonly digests: DigestConfig }, options: DigestPrunerOptions) {
    const logger = options.logger.child({ flow: flow.name, component: 'digest-pruner' })
    const topic = flow.digests.topic
    this.#pruner = new TombstonePruner(flow, {
      logger,
      what: 'digests',
      entriesField: 'digests',
      topic,
      scan: async () => {
        const { exists, digests } = await loadRangeDigests(flow.target, topic, logger)
        return exists
          ? { entries: digests.length, targetTopics: digests.map(d => d.targetTopic), prunable: logStarts => prunableDigestKeys(digests, logStarts) }
          : undefined
      },
      ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
      ...(options.isCoordinator === undefined ? {} : { isCoordinator: options.isCoordinator }),
    })
  }

  start (): Promise<void> { return this.#pruner.start() }

  /** One prune now (or the one running); resolves with the number of digests tombstoned. */
  prune (): Promise<number> { return this.#pruner.prune() }

  stop (): Promise<void> { return this.#pruner.stop() }
}
