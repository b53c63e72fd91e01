import type { FlowConfig } from '../../config/mirror-config.js'
import { errorLabel, type MirrorError } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { recordBytes, recordCount, recordTimestampsMs, sourceOffsetAt, type MirrorBatch } from '../../ports/mirror-batch.js'
import type { PartitionProgress } from './partition-progress.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type { AckListener, AckSegment } from '../../ports/ports.js'
import type { WorkerListener } from './producer-worker.js'
import type { DeepPathReason } from '../../ports/forwarded-batch.js'

/**
 * Where the producer lanes report: an acknowledged batch moves the partition's committable offset
 * (`PartitionProgress`), reaches the offset-sync writer (`AckListener`) and the metrics; a
 * refused record is counted and logged.
 */
export class AckRecorder implements WorkerListener {
  readonly #labels: FlowLabels
  readonly #progress: PartitionProgress
  readonly #observer: PipelineObserver
  readonly #ackListener: AckListener | undefined
  readonly #logger: Logger
  readonly #abortOnSendFailure: boolean

  constructor (
    flow: Pick<FlowConfig, 'abortOnSendFailure'>,
    labels: FlowLabels,
    progress: PartitionProgress,
    observer: PipelineObserver,
    ackListener: AckListener | undefined,
    logger: Logger
  ) {
    this.#labels = labels
    this.#progress = progress
    this.#observer = observer
    this.#ackListener = ackListener
    this.#logger = logger
    this.#abortOnSendFailure = flow.abortOnSendFailure
  }

  acknowledged (batch: MirrorBatch, segments: readonly AckSegment[], ackTimeMs: number, recordsAcked: number): void {
    const count = recordCount(batch)
    if (recordsAcked === count) this.#progress.acknowledged(batch, ackTimeMs)
    else this.#progress.acknowledgedPrefix(batch, sourceOffsetAt(batch, recordsAcked), ackTimeMs)
    this.#ackListener?.acknowledged(batch, segments)
    if (this.#observer.produced === undefined || segments.length === 0) return
    const timestampsMs = recordTimestampsMs(batch, recordsAcked)
    this.#observer.produced(this.#labels, {
      sourceTopic: batch.sourceTopic,
      targetTopic: batch.targetTopic,
      partition: batch.partition,
      records: recordsAcked,
      bytes: recordsAcked === count ? batch.bytes : batch.records.slice(0, recordsAcked).reduce((sum, r) => sum + recordBytes(r), 0),
      timestampsMs,
      ackTimeMs,
      firstSourceOffset: batch.firstOffset,
      lastSourceOffset: sourceOffsetAt(batch, recordsAcked - 1),
      targetBaseOffset: (segments[0] as AckSegment).targetBaseOffset,
    })
  }

  heldUntil (batch: MirrorBatch): Promise<void> | undefined {
    return this.#ackListener?.heldUntil?.(batch)
  }

  skipped (batch: MirrorBatch, index: number, error: MirrorError): void {
    this.#observer.sendFailed?.(this.#labels, batch.sourceTopic, batch.partition, error.kafkaCode ?? error.code)
    this.#logger.error(this.#abortOnSendFailure ? 'send failed; stopping the mirror' : 'send failed; record skipped (abort.on.send.failure=false)', {
      error,
      offset: sourceOffsetAt(batch, index).toString(),
    })
  }

  routed (batch: MirrorBatch, reason: DeepPathReason): void {
    this.#observer.batchRouted?.(this.#labels, 'deep', reason, batch.bytes)
  }

  produceRequest (durationSeconds: number, ok: boolean): void {
    this.#observer.produceRequest?.(this.#labels, durationSeconds, ok)
  }

  retry (operation: string, error: unknown): void {
    this.#observer.retry?.(this.#labels, operation, errorLabel(error))
  }
}
