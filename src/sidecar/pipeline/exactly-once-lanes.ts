import type { MirrorBatch } from '../../ports/mirror-batch.js'
import { bucketOf } from '../../ports/partition-bucket.js'
import { parsePartitionKey, partitionKey } from '../../shared/partition-key.js'
import type { FetchControl, TransactionalSink } from '../../ports/ports.js'
import type { WorkerListener } from './producer-worker.js'
import { Lane, type LaneOptions, type LaneTransaction } from './exactly-once-lane.js'
import type { Admission, IntakeGate } from './delivery-mode.js'

export type { HeldBytes } from './exactly-once-lane.js'

/**
 * A lane keeps the queue's bytes of what its open transaction wrote (`held`) and commits early once
 * that reaches its share, half the queue's bytes over all lanes: what waits for a commit stays within `queue.bytes`.
 */
export interface ExactlyOnceLanesOptions extends LaneOptions {
  readonly sinks: readonly TransactionalSink[]
}

/**
 * The producer lanes of an exactly-once flow. Lane `b` writes the partitions of bucket `b`
 * (`bucketOf`), all owned by one member of the source group (the bucket assignor), under one
 * transactional id. A lane is taken when its bucket is assigned here: the sink's `acquire` fences
 * any previous owner (its open transaction is aborted), then the bucket's positions are read as
 * committed and each partition resumes from its position. Acknowledgements are held while the
 * transaction is open and passed on (to the commit bookkeeping and the offset syncs) only after
 * it committed with the positions of what it holds. A transaction that cannot commit on a lane
 * this process still owns makes the lane be taken again (`Lane`: its partitions go back to the
 * positions, the source seeks there); on a lane given up it is dropped: the new owner copies those
 * records again, in its own transaction.
 */
export class ExactlyOnceLanes implements IntakeGate {
  readonly #lanes: Lane[]
  readonly #tickets = new WeakMap<MirrorBatch, number>()

  constructor (options: ExactlyOnceLanesOptions) {
    const { sinks, ...lanes } = options
    const commitAtBytes = Math.max(1, Math.floor(options.held.capacityBytes / (2 * sinks.length)))
    this.#lanes = sinks.map((sink, index) => new Lane({ index, sink, tickets: this.#tickets, commitAtBytes }, lanes))
  }

  laneOf (topic: string, partition: number): number {
    return bucketOf(topic, partition, this.#lanes.length)
  }

  /** The transaction hooks of lane `index` for its worker, and the listener that holds acknowledgements until commit. */
  lane (index: number): { transaction: LaneTransaction, listener: WorkerListener } {
    const lane = this.#lanes[index]
    if (lane === undefined) throw new RangeError(`lane ${index} of ${this.#lanes.length}`)
    return { transaction: lane, listener: lane.listener }
  }

  /** The partitions this process owns changed: lanes of new buckets are taken, lanes of lost buckets given up. */
  assign (owned: ReadonlySet<string>): void {
    const byLane = new Map<number, Map<string, { topic: string, partition: number }>>()
    for (const key of owned) {
      const parsed = parsePartitionKey(key)
      const lane = this.laneOf(parsed.topic, parsed.partition)
      let keys = byLane.get(lane)
      if (keys === undefined) byLane.set(lane, keys = new Map())
      keys.set(key, parsed)
    }
    // Not awaited: a lane takes or gives up its transactional id in the background, and admit() waits for
    // its readiness. A lane's steps never reject (taking one ends in onFatal, giving one up logs).
    for (const lane of this.#lanes) void lane.assign(byLane.get(lane.index))
  }

  async admit (topic: string, partition: number, control: FetchControl): Promise<Admission | undefined> {
    return await (this.#lanes[this.laneOf(topic, partition)] as Lane).admit(partitionKey(topic, partition), control)
  }

  contiguous (topic: string, partition: number, from: bigint | undefined, skip = false): boolean {
    return (this.#lanes[this.laneOf(topic, partition)] as Lane).contiguous(topic, partition, from, skip)
  }

  stamp (batch: MirrorBatch, ticket: Admission): void {
    this.#tickets.set(batch, ticket)
  }

  /** Throws an Error naming the first invariant (of `Lane`) a lane breaks. For tests: they call it after every step. */
  checkInvariants (): void {
    for (const lane of this.#lanes) lane.checkInvariants()
  }

  /** Lanes this process holds now. */
  get held (): number {
    return this.#lanes.filter(lane => lane.owned).length
  }

  /** Gives every lane up (the flow stops): what is open was committed by the drain, or is aborted by the next owner. */
  async stop (): Promise<void> {
    await Promise.all(this.#lanes.map(lane => lane.assign(undefined)))
  }
}
