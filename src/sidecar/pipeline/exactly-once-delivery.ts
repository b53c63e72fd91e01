import type { FlowConfig } from '../../config/mirror-config.js'
import { BoundedQueue } from './bounded-queue.js'
import type { DeliveryMode, LaneDeliveryParts } from './delivery-mode.js'
import { ExactlyOnceLanes, type ExactlyOnceLanesOptions } from './exactly-once-lanes.js'
import type { MirrorBatch } from '../../ports/mirror-batch.js'
import type { PositionStore } from '../../ports/ports.js'

/**
 * Exactly-once (`--exactly.once true`): lane `b` is the bucket of partitions `b` with its own
 * transactional id (`ExactlyOnceLanes`); the intake's gate waits until a partition's lane is
 * taken; each lane writes inside its transactions, which also hold the positions, and releases
 * acknowledgements and the queue's bytes of what a transaction wrote only once it committed. A
 * worker with nothing to take for `exactly.once.commit.interval.ms` commits what is open.
 */
export class ExactlyOnceDelivery implements DeliveryMode {
  readonly name = 'exactly-once'
  readonly queue: BoundedQueue<MirrorBatch>
  readonly gate: ExactlyOnceLanes
  readonly uncommittedConsequence = 'the group\'s offsets stay behind what was copied ' +
    '(exactly-once resumes from the positions on the target: nothing is copied twice)'

  /** Every lane is a bucket: all start with the flow and all write. */
  readonly onDemandFrom: number
  readonly #positions: PositionStore

  /** `options.acks`: where acknowledgements go once their transaction committed (the flow's `AckRecorder`). */
  constructor (config: Pick<FlowConfig, 'queueMaxRecords' | 'queueMaxBytes'>, options: Omit<ExactlyOnceLanesOptions, 'held'>) {
    const queue = new BoundedQueue<MirrorBatch>(config.queueMaxRecords, config.queueMaxBytes, options.sinks.length)
    this.queue = queue
    const { acks } = options
    const releaseBytes = (batch: MirrorBatch): void => {
      // A digest that reads the batch after its transaction committed keeps its bytes counted (Invariant A of BoundedQueue).
      const until = acks.heldUntil?.(batch)
      if (until !== undefined) queue.hold(batch, until)
      queue.release(batch, 'bytes')
    }
    this.gate = new ExactlyOnceLanes({ ...options, held: { capacityBytes: queue.capacityBytes, releaseBytes } })
    this.#positions = options.positions
    this.onDemandFrom = options.sinks.length
  }

  lanesWriting (): number {
    return this.onDemandFrom
  }

  lane (index: number): LaneDeliveryParts {
    const queue = this.queue
    const { transaction, listener } = this.gate.lane(index)
    return {
      listener,
      delivery: {
        take: maxBytes => queue.takeWithin(index, maxBytes, transaction.idleCommitMs),
        write: (batches, write) => transaction.write(batches, write),
        // The lane gives their bytes back once their transaction ended (`LaneTransaction.write`).
        settled: batches => { for (const batch of batches) queue.release(batch, 'records') },
        idle: () => transaction.idle(),
      },
    }
  }

  assigned (owned: ReadonlySet<string>): void {
    this.gate.assign(owned)
  }

  start (): Promise<void> {
    return this.#positions.start()
  }

  /** Gives every lane up (what is open was committed by the drain, or is aborted by the next owner), then closes the position store. */
  async stop (): Promise<void> {
    await this.gate.stop()
    await this.#positions.stop()
  }
}
