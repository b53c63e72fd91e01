import type { FlowConfig } from '../../config/mirror-config.js'
import { BoundedQueue } from './bounded-queue.js'
import { LinkRoundTrip } from './link-round-trip.js'
import type { DeliveryMode, IntakeGate, LaneDeliveryParts } from './delivery-mode.js'
import type { MirrorBatch } from '../../ports/mirror-batch.js'
import { partitionKey } from '../../shared/partition-key.js'
import type { LaneDelivery, WorkerListener } from './producer-worker.js'

/** Every partition's records are queued at once, into no fixed lane. */
const OPEN_GATE: IntakeGate = {
  laneOf: () => undefined,
  admit: () => 0,
  contiguous: () => true,
  stamp: () => { /* no tickets: any lane takes any partition */ },
}

/**
 * A lane that writes what it takes as it is and gives its queue room back once the target
 * acknowledged it. With `link`, it takes only while the target's round trip is long (and ends when
 * the queue closes while it is not).
 */
export function plainLane (queue: BoundedQueue<MirrorBatch>, lane: number, link?: LinkRoundTrip): LaneDelivery {
  return {
    take: async maxBytes => {
      while (link !== undefined && !link.long) {
        if (queue.closed) return []
        await Promise.race([link.whenLong(), queue.whenClosed()])
      }
      return await queue.take(lane, maxBytes)
    },
    write: (batches, write) => write(batches),
    settled: batches => { for (const batch of batches) queue.release(batch) },
    idle: async () => { /* nothing held between requests */ },
  }
}

/**
 * At-least-once (the default): any lane takes any partition not in flight, so the batches fetched
 * together share a request; a batch is acknowledged as soon as the target acknowledged it, and its
 * queue room goes back then. A record may be written twice (a restart copies again from the last
 * commit), never lost. Lanes from `numProducers` on (the ports' extra sinks: `producerLaneCount`)
 * take batches only while the target's round trip is long (`LinkRoundTrip`): across a long link
 * they add requests in flight, near the target they stay idle and the requests stay full.
 */
export class AtLeastOnceDelivery implements DeliveryMode {
  readonly name = 'at-least-once'
  readonly queue: BoundedQueue<MirrorBatch>
  readonly gate = OPEN_GATE
  readonly uncommittedConsequence = 'records acknowledged since the last commit will be copied again at the next start'

  readonly onDemandFrom: number
  readonly #lanes: number
  readonly #acks: WorkerListener
  readonly #link = new LinkRoundTrip()

  /**
   * `lanes`: how many lanes the flow runs (one per sink); those from `numProducers` on take batches only across a long link.
   * `acks`: where each lane's acknowledgements go (the flow's `AckRecorder`).
   */
  constructor (config: Pick<FlowConfig, 'queueMaxRecords' | 'queueMaxBytes' | 'numProducers'>, lanes: number, acks: WorkerListener) {
    const keyOf = (batch: MirrorBatch): string => partitionKey(batch.targetTopic, batch.partition)
    this.queue = new BoundedQueue<MirrorBatch>(config.queueMaxRecords, config.queueMaxBytes, { keyOf })
    this.onDemandFrom = Math.min(config.numProducers, lanes)
    this.#lanes = lanes
    this.#acks = acks
  }

  lanesWriting (): number {
    return this.#link.long ? this.#lanes : this.onDemandFrom
  }

  lane (index: number): LaneDeliveryParts {
    const acks = this.#acks
    const link = this.#link
    const queue = this.queue
    const listener: WorkerListener = {
      acknowledged: (batch, segments, ackTimeMs, recordsAcked) => {
        acks.acknowledged(batch, segments, ackTimeMs, recordsAcked)
        // A digest that reads the batch after its acknowledgement keeps its bytes counted (Invariant A of BoundedQueue).
        const until = acks.heldUntil?.(batch)
        if (until !== undefined) queue.hold(batch, until)
      },
      skipped: (batch, recordIndex, error) => acks.skipped(batch, recordIndex, error),
      produceRequest: (durationSeconds, ok) => {
        if (ok) link.record(durationSeconds * 1000)
        acks.produceRequest(durationSeconds, ok)
      },
      retry: (operation, error) => acks.retry(operation, error),
      ...(acks.routed === undefined ? {} : { routed: (batch, reason) => acks.routed?.(batch, reason) }),
    }
    return { delivery: plainLane(this.queue, index, index < this.onDemandFrom ? undefined : link), listener }
  }

  // Nothing to set up or take down: the lanes write plainly, with no transaction or fencing.
  assigned (): void { /* no lanes to fence */ }
  async start (): Promise<void> { /* nothing to start */ }
  async stop (): Promise<void> { /* nothing to stop */ }
}
