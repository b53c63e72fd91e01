import type { Logger } from '../../shared/logger.js'
import { parsePartitionKey, partitionKey } from '../../shared/partition-key.js'

/**
 * The partition whose owner coordinates a flow: partition 0 of the first mirrored source topic
 * by name. Every process of the flow subscribes to the same topics, so they agree on it without
 * talking to each other, and the source group's assignment decides who owns it: one process at a
 * time, and another one after a rebalance when it leaves or dies (within the session timeout).
 * The coordinator runs the flow-wide jobs that must not run in every process: group offset sync
 * and checkpoints, and offset-sync pruning. Undefined while no topic is mirrored.
 */
export function coordinatorPartition (sourceTopics: Iterable<string>): string | undefined {
  let first: string | undefined
  for (const topic of sourceTopics) if (first === undefined || topic < first) first = topic
  return first === undefined ? undefined : partitionKey(first, 0)
}

/**
 * Whether this process coordinates its flow now: it owns the flow's `coordinatorPartition`. Read
 * by the coordinator-only work at each run; `assigned()` logs when this process starts or stops
 * coordinating.
 */
export class FlowCoordinator {
  readonly #topics: () => Iterable<string>
  readonly #owned: () => ReadonlySet<string>
  readonly #logger: Logger
  /** Whether this process coordinated the flow at the last assignment (for the log line on a change). */
  #coordinating = false

  /** `topics`: the source topics mirrored now; `owned`: the partitions this process owns now (keys from `partitionKey`). */
  constructor (topics: () => Iterable<string>, owned: () => ReadonlySet<string>, logger: Logger) {
    this.#topics = topics
    this.#owned = owned
    this.#logger = logger
  }

  /** True while this process owns the flow's `coordinatorPartition`. */
  coordinates (): boolean {
    const key = coordinatorPartition(this.#topics())
    return key !== undefined && this.#owned().has(key)
  }

  /** The partitions owned here changed: logs when that made this process start or stop coordinating. */
  assigned (): void {
    const now = this.coordinates()
    if (now === this.#coordinating) return
    this.#coordinating = now
    const key = coordinatorPartition(this.#topics())
    const where = key === undefined ? {} : parsePartitionKey(key)
    if (now) this.#logger.info('this process coordinates the flow: group offset sync, checkpoints and offset-sync pruning run here', where)
    else this.#logger.info('another process coordinates the flow', where)
  }
}
