import type { FlowConfig } from '../../config/mirror-config.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { KafkaRecord } from '../../shared/kafka-record.js'
import type { Logger } from '../../shared/logger.js'
import type { BatchIntake } from './batch-intake.js'
import type { DeliveryMode } from './delivery-mode.js'
import type { FlowCoordinator } from './flow-coordinator.js'
import type { DeepPathReason } from '../../ports/forwarded-batch.js'
import type { MessageHandler } from './message-handler.js'
import type { PartitionProgress } from './partition-progress.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type { CorruptBatch, FetchControl, FetchedBatch, SourceListener } from '../../ports/ports.js'
import type { MirroredTopic } from './topic-sync.js'

/** A CRC-32C as 8 hex digits. */
function crcText (crc: number): string {
  return `0x${crc.toString(16).padStart(8, '0')}`
}

/** How the flow is told that it failed, and asked whether it did. */
export interface FlowFailure {
  readonly failed: boolean
  fail: (error: Error) => void
}

export interface FetchDispatchOptions {
  readonly intake: BatchIntake
  /** The flow's message handler (`--message.handler`), when it has one. */
  readonly handler: MessageHandler | undefined
  readonly progress: PartitionProgress
  readonly delivery: DeliveryMode
  readonly coordinator: FlowCoordinator
  /** The source topics mirrored now. */
  readonly topics: () => ReadonlyMap<string, MirroredTopic>
  readonly failure: FlowFailure
  /**
   * This member is about to join its group again and give its partitions up: lets what was
   * handed over be acknowledged, then commits it (see `MirrorFlow`). Never rejects.
   */
  readonly rejoining: () => Promise<unknown>
  readonly labels: FlowLabels
  readonly observer: PipelineObserver
  readonly logger: Logger
}

/**
 * What the flow does with what its source tells it (`SourceListener`): a fetched batch goes to the
 * intake, through the message handler first when the flow has one; a skip moves the committable
 * offset; a corrupt batch stops the flow or is skipped (`corrupt.batches`); a new assignment
 * reaches the progress, the delivery mode and the coordinator. After a failure nothing more is
 * admitted or skipped: no commit may pass what stopped the flow.
 */
export class FetchDispatch implements SourceListener {
  readonly #config: FlowConfig
  readonly #options: FetchDispatchOptions

  constructor (config: FlowConfig, options: FetchDispatchOptions) {
    this.#config = config
    this.#options = options
  }

  async onBatch (batch: FetchedBatch, control: FetchControl): Promise<void> {
    const { failure, handler, intake } = this.#options
    if (failure.failed) return
    await (handler === undefined ? intake.accept(batch, control) : this.#acceptHandled(handler, batch, control))
  }

  onSkipped (topic: string, partition: number, nextOffset: bigint, from?: bigint): void {
    if (!this.#options.failure.failed) this.#skipped(topic, partition, nextOffset, from)
  }

  onAssignment (owned: ReadonlySet<string>): void {
    const { progress, delivery, observer, labels, logger, coordinator } = this.#options
    progress.retain(owned)
    delivery.assigned(owned)
    observer.rebalanced?.(labels)
    logger.info('partitions assigned', { partitions: owned.size })
    coordinator.assigned()
  }

  async onRebalancing (): Promise<void> {
    await this.#options.rejoining()
  }

  onCrash (error: Error): void {
    this.#options.failure.fail(error)
  }

  onFetched (): void {
    this.#options.observer.fetched?.(this.#options.labels)
  }

  onDecoded (reason: DeepPathReason, bytes: number): void {
    this.#options.observer.batchRouted?.(this.#options.labels, 'deep', reason, bytes)
  }

  /**
   * A fetched batch through the message handler, then into the intake. A handler failure fails
   * the flow here instead of rejecting to the consumer (which would retry the batch and restart):
   * nothing of this fetch is admitted, and nothing is admitted after a failure, so no commit can
   * pass the record. When the handler dropped every record, the commit may move past them.
   */
  async #acceptHandled (handler: MessageHandler, given: FetchedBatch, control: FetchControl): Promise<void> {
    const { failure, topics, intake, progress } = this.#options
    if (failure.failed || !topics().has(given.topic)) return
    // A handler flow's source forwards nothing (`kafkaFlowPorts`); a batch from another source is decoded here, never passed by.
    const fetched = given.forwarded === undefined ? given : { ...given, forwarded: undefined, records: await given.forwarded.decode() }
    if (fetched.records.length === 0) return
    let handled: FetchedBatch
    try {
      handled = await handler.apply(fetched)
    } catch (error) {
      failure.fail(error as Error)
      return
    }
    if (failure.failed) return
    if (handled.records.length > 0) return await intake.accept(handled, control)
    progress.observeHighWatermark(fetched.topic, fetched.partition, fetched.highWatermark, BigInt((fetched.records[0] as KafkaRecord).offset))
    if (handled.nextOffset !== undefined) this.#skipped(fetched.topic, fetched.partition, handled.nextOffset, fetched.from)
  }

  /**
   * A corrupt source batch (CRC-32C mismatch): counted, then the flow stops (`corrupt.batches`
   * fail, the default; also in skip mode when the batch's range cannot be trusted or it is a
   * transaction marker, whose loss would change which records count as aborted), or the batch is
   * left out with a warning and the source moves past it (true).
   */
  onCorrupt (topic: string, partition: number, batch: CorruptBatch, rangeProblem: string | undefined): boolean {
    const { failure, observer, labels, logger } = this.#options
    if (failure.failed) return false
    observer.corruptBatch?.(labels, topic, partition)
    const where =
      `topic "${topic}" partition ${partition}: the record batch at offsets ${batch.baseOffset}..${batch.endOffset - 1n} (${batch.sizeBytes} bytes${batch.control ? ', a transaction marker' : ''}) is corrupt on the ${this.#config.source.alias} cluster (CRC-32C of its bytes ${crcText(batch.computedCrc)}, expected ${crcText(batch.storedCrc)} as its header says)`
    const skip = (this.#config.corruptBatches ?? 'fail') === 'skip'
    if (skip && rangeProblem === undefined && !batch.control) {
      logger.warn(`${where}: skipped (corrupt.batches=skip); its offsets are committed past and its records are not on the target`, {
        topic,
        partition,
        fromOffset: batch.baseOffset.toString(),
        toOffset: (batch.endOffset - 1n).toString(),
      })
      return true
    }
    const why = !skip
      ? 'the mirror stopped; nothing of it, nor after it in the partition, was copied or committed. Repair the partition on the source (its other replicas may hold an intact copy: reassign or re-elect the leader), or set corrupt.batches to skip (--corrupt.batches skip) to leave the batch out and go on'
      : `the mirror stopped; it cannot be skipped: ${batch.control ? 'it is a transaction marker, and leaving it out would change which records count as aborted' : `its offset range cannot be trusted (${rangeProblem ?? ''})`}. Repair the partition on the source (its other replicas may hold an intact copy)`
    failure.fail(new MirrorError(ErrorCodes.CORRUPT_BATCH, `${where}: ${why}`))
    return false
  }

  /**
   * The source moved past offsets with nothing to copy; only when that continues from what was
   * handed over (the gate's guard): a skip from a fetch that is ahead (a batch fetched before a
   * seek back, kafkajs hands those over too) would pass records never written.
   */
  #skipped (topic: string, partition: number, nextOffset: bigint, from: bigint | undefined): void {
    if (!this.#options.delivery.gate.contiguous(topic, partition, from, true)) return
    this.#options.progress.skipped(topic, partition, nextOffset)
  }
}
