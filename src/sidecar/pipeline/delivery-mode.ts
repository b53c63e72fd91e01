import type { BoundedQueue } from './bounded-queue.js'
import type { MirrorBatch } from '../../ports/mirror-batch.js'
import type { FetchControl } from '../../ports/ports.js'
import type { LaneDelivery, WorkerListener } from './producer-worker.js'

/** What the gate hands the intake for a partition's records: the lane acquisition they belong to (exactly-once). */
export type Admission = number

/** What the intake asks before it queues a partition's records. */
export interface IntakeGate {
  /** The fixed lane of a partition (exactly-once: its bucket, the same in every process); undefined: any lane takes it. */
  laneOf: (topic: string, partition: number) => number | undefined
  /**
   * The admission to `stamp` the partition's batches with, once its records may be queued (a
   * promise while that waits); undefined when this process does not own the partition.
   */
  admit: (topic: string, partition: number, control: FetchControl) => Admission | undefined | Promise<Admission | undefined>
  /**
   * False when a batch (or, `skip`, a skip) of an admitted partition continues `from` past what was
   * handed over: the source is sent back there, and the batch must not be queued.
   */
  contiguous: (topic: string, partition: number, from: bigint | undefined, skip?: boolean) => boolean
  stamp: (batch: MirrorBatch, admission: Admission) => void
}

/** A lane's part of the delivery: how its worker takes and writes, and where it reports. */
export interface LaneDeliveryParts {
  readonly delivery: LaneDelivery
  /** Where the lane's worker reports acknowledgements (exactly-once: held until the commit, then passed on). */
  readonly listener: WorkerListener
}

/**
 * The delivery guarantee of a flow, chosen once when the flow is built (`deliveryModeFor`): it
 * supplies the queue and how it is split into lanes, the intake's gate, each lane's write (plain,
 * or inside the lane's transactions) and when acknowledgements and queue room are released. The
 * intake, the workers, the queue and the flow do not ask which mode they run in.
 * - at-least-once: any lane takes any partition not in flight; a write is acknowledged when the
 *   target acknowledged it, and its queue room goes back then.
 * - exactly-once: a partition's lane is its bucket, taken with the lane's transactional id; writes
 *   run in the lane's transactions, and acknowledgements (with the queue's bytes) are released
 *   only once the transaction holding them committed.
 */
export interface DeliveryMode {
  readonly name: 'at-least-once' | 'exactly-once'
  readonly queue: BoundedQueue<MirrorBatch>
  readonly gate: IntakeGate
  /** Lane `index`'s delivery; the mode's `acks` (given when it was built, `deliveryModeFor`) hears acknowledgements once they are final. */
  lane: (index: number) => LaneDeliveryParts
  /**
   * Lanes from this index on take batches only at times (at least once: while the target's round
   * trip is long); their producers start at their first write, not with the flow.
   */
  readonly onDemandFrom: number
  /** Lanes that take batches now. */
  lanesWriting: () => number
  /** The partitions this process owns changed. */
  assigned: (owned: ReadonlySet<string>) => void
  /** Before anything is fetched (exactly-once: the positions topic exists and the target runs transactions). */
  start: () => Promise<void>
  /** After the workers ended: lanes given up, clients closed. */
  stop: () => Promise<void>
  /** What a failed final commit leaves behind, said in the error and the log line. */
  readonly uncommittedConsequence: string
}
