import { errorLabel } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import { retry } from '../../shared/retry.js'
import type { PartitionProgress } from './partition-progress.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type { AckListener, RecordSource } from '../../ports/ports.js'

/** Consecutive failed commits after which each further failure is logged as an error (the first are warnings). */
const COMMIT_FAILURES_BEFORE_ERROR = 3

export interface OffsetCommitterOptions {
  readonly labels: FlowLabels
  readonly progress: PartitionProgress
  /** The current source (it is replaced when the subscription changes). */
  readonly source: () => RecordSource
  readonly ackListener: AckListener | undefined
  readonly observer: PipelineObserver
  readonly logger: Logger
  /** Time between interval commits (`offset.commit.interval.ms`). */
  readonly intervalMs: number
}

/**
 * Commits, on the source, the offsets of records the target acknowledged, never further: the
 * committable offset of a partition only moves over acknowledged batches in offset order, and the
 * offset syncs covering them are made durable (`AckListener.flush`) before the commit is sent.
 * Concurrent calls share one commit; interval commits never overlap (the timer re-arms after each).
 * A failed commit is retried by the next one; from the `COMMIT_FAILURES_BEFORE_ERROR`th failure
 * in a row each is logged as an error.
 */
export class OffsetCommitter {
  readonly #options: OffsetCommitterOptions
  readonly #timer: RearmingTimer
  #committing: Promise<boolean> | undefined
  #failuresInRow = 0
  #lastCommitMs: number | undefined

  constructor (options: OffsetCommitterOptions) {
    this.#options = options
    this.#timer = new RearmingTimer(options.intervalMs, () => this.commit())
  }

  /** Starts the interval commits. */
  start (): void { this.#timer.start() }

  /** Stops the interval commits; `commit()` still works (the final commit at shutdown). */
  stop (): void { this.#timer.stop() }

  /** Resolves true when everything acknowledged is committed (or nothing was due), false when the commit failed. */
  commit (): Promise<boolean> {
    this.#committing ??= this.#commitOnce().finally(() => { this.#committing = undefined })
    return this.#committing
  }

  async #commitOnce (): Promise<boolean> {
    const { progress, source, ackListener, observer, labels, logger } = this.#options
    const current = source()
    let candidates = progress.commitCandidates(current.owned())
    if (candidates.length === 0) return true
    try {
      await ackListener?.flush(candidates)
      // A rebalance during the flush: partitions given away (or given away and back) keep the group's offset.
      candidates = progress.stillCommittable(candidates, current.owned())
      if (candidates.length === 0) return true
      // Offsets are committed on the source only after the target acknowledged every record below them.
      await retry(() => current.commit(candidates), {
        maxAttempts: 3,
        initialBackoffMs: 200,
        onRetry: error => observer.retry?.(labels, 'commit', errorLabel(error)),
      })
    } catch (error) {
      this.#failuresInRow++
      observer.commitFailed?.(labels, errorLabel(error))
      const fields = {
        error,
        failuresInRow: this.#failuresInRow,
        lastCommitAgeSeconds: this.#lastCommitMs === undefined ? null : Math.round((Date.now() - this.#lastCommitMs) / 1000),
      }
      if (this.#failuresInRow >= COMMIT_FAILURES_BEFORE_ERROR) {
        logger.error('commits keep failing: source offsets do not move, and a restart would copy again what was mirrored since the last commit', fields)
      } else logger.warn('commit failed; the next commit retries', fields)
      return false
    }
    const now = Date.now()
    if (this.#failuresInRow >= COMMIT_FAILURES_BEFORE_ERROR) logger.info('commits succeed again', { failuresInRow: this.#failuresInRow })
    this.#failuresInRow = 0
    this.#lastCommitMs = now
    progress.committed(candidates)
    observer.committed?.(labels, candidates, now)
    return true
  }
}
