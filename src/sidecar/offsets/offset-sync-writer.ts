import { hasMessageHandler } from '../../config/message-handler-config.js'
import type { FlowConfig } from '../../config/mirror-config.js'
import { errorLabel } from '../../shared/errors.js'
import { InternalTopicWriter, type InternalRecord, type ReplicationFactorSetting } from '../../kafka/internal-topic.js'
import { sourceOffsetAt, type MirrorBatch } from '../../ports/mirror-batch.js'
import type { AckSegment, CommitCandidate, SourcePosition, TransactionAck, TransactionRecord } from '../../ports/ports.js'
import { flowLabels, type FlowLabels } from '../../ports/pipeline-observer.js'
import { stopFlushingWriter } from '../../shared/deadline.js'
import type { Logger } from '../../shared/logger.js'
import { encodePosition, encodeRange, positionKey, type MirrorPosition } from '../../mirror-topics/offset-sync-record.js'
import type { SyncListener } from '../pipeline/flow-ack-listener.js'
import type { OffsetsObserver } from './offsets-observer.js'
import { RangeTracker } from './range-tracker.js'
import { WriteChain } from './write-chain.js'

/** How long `stop()` waits for a write in flight, and then for the client to disconnect. */
const STOP_BOUND_MS = 2_000

/**
 * Least time between two writes as records are acknowledged, in ms. A write holds a range and a
 * position for every partition that moved since the one before, so its size follows the number of
 * partitions flowing: at most one a second keeps the topic's growth near two records (a range and a
 * position) per flowing partition a second (MirrorMaker 2 writes one per `offset.lag.max` records),
 * and a translation at most this much behind the copy.
 */
const ACKNOWLEDGED_WRITE_INTERVAL_MS = 1_000

function recordSegments (tracker: RangeTracker, batch: MirrorBatch, segments: readonly AckSegment[], fanOut: boolean, durable: boolean): void {
  for (const segment of segments) {
    if (batch.forwarded !== undefined && !fanOut) {
      // A forwarded batch's records have consecutive source offsets: one run, not one offset per record.
      const firstSourceOffset = batch.forwarded.baseOffset + BigInt(segment.from)
      tracker.recordRun(batch.sourceTopic, batch.targetTopic, batch.partition, firstSourceOffset, segment.count, segment.targetBaseOffset, durable)
      continue
    }
    const offsets: bigint[] = new Array(segment.count)
    for (let i = 0; i < segment.count; i++) offsets[i] = sourceOffsetAt(batch, segment.from + i)
    tracker.record(batch.sourceTopic, batch.targetTopic, batch.partition, offsets, segment.targetBaseOffset, fanOut, durable)
  }
}

/** The replication factor the offset-syncs topic is created with, and the key that sets it. */
export function offsetSyncsReplication (flow: FlowConfig): ReplicationFactorSetting {
  return { replicationFactor: flow.offsetSyncs.replicationFactor, key: 'offset-syncs.topic.replication.factor' }
}

export interface OffsetSyncWriterOptions {
  readonly logger: Logger
  readonly observer?: OffsetsObserver
}

/**
 * Records where every acknowledged record went and writes it to the offset-syncs topic on the
 * target (`flow.offsetSyncs.topic`, created compacted with one partition if missing).
 * At least once, the ranges of acknowledged records and the mirror's position after them are
 * written as the target acknowledges them, not at the source commit: one write in flight, at
 * most one a second, the next one holding everything acknowledged meanwhile (`WriteChain.soon`), so the checkpoints
 * (every `emit.checkpoints.interval.seconds`) translate a group as soon as its records are copied,
 * whatever `offset.commit.interval.ms` is. A failed write of that kind leaves its ranges to the
 * next write (logged; `syncWriteFailed` counts only the writes a source commit waits for).
 * Each write is sent in as many requests as the target's limits need (`max.request.size`, the
 * topic's `max.message.bytes`), in order, so it fits at any partition count.
 * Guarantees: a range or position describes only records the target acknowledged (no sync claims
 * a target offset the target has not acknowledged); a partition's position is written only when it
 * moves forward, so a translation never falls back behind one written before; when
 * `flush(committing)` resolves, the ranges of every record acknowledged before the call and the
 * mirror's position for each offset in `committing` are durable (acks=all): the flow awaits it
 * before each source commit, so a committed source offset is always translatable.
 * Exactly-once, the ranges (and a position per partition) of each lane transaction are written in
 * that transaction (`transactionRecords`): they are on the target whenever its records are, as
 * soon as the transaction commits, even when the process dies before the next source commit;
 * `flush` then writes only positions.
 * `start()` before the flow starts, `stop()` after it stopped; `stop()` is once-only.
 */
export class OffsetSyncWriter implements SyncListener {
  readonly #flow: FlowConfig
  readonly #labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: OffsetsObserver
  readonly #writer: InternalTopicWriter
  readonly #tracker = new RangeTracker()
  /** A message handler may turn one source record into several target records (`RangeTracker.record`). */
  readonly #fanOut: boolean
  /** Exactly-once: ranges are written in the transactions (`transactionRecords`), not by `flush`. */
  readonly #inTransactions: boolean
  /** Last position written per partition key: a position is written only when it moves forward. */
  readonly #positions = new Map<string, MirrorPosition>()
  readonly #writes = new WriteChain(ACKNOWLEDGED_WRITE_INTERVAL_MS)
  #stopping: Promise<void> | undefined
  /** Ends the retries of a write still running at stop (the target may be unreachable). */
  readonly #abort = new AbortController()

  constructor (flow: FlowConfig, options: OffsetSyncWriterOptions) {
    this.#flow = flow
    this.#fanOut = hasMessageHandler(flow)
    this.#inTransactions = flow.exactlyOnce !== undefined
    this.#labels = flowLabels(flow)
    this.#logger = options.logger.child({ flow: flow.name, component: 'offset-syncs' })
    this.#observer = options.observer ?? {}
    this.#writer = new InternalTopicWriter(flow.target, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  get topic (): string { return this.#flow.offsetSyncs.topic }

  async start (): Promise<void> {
    await this.#writer.start()
    await this.#writer.ensureCompactedTopic(this.topic, offsetSyncsReplication(this.#flow))
  }

  acknowledged (batch: MirrorBatch, segments: readonly AckSegment[]): void {
    // Exactly-once: the ranges of a committed transaction were written in it (`transactionRecords`).
    recordSegments(this.#tracker, batch, segments, this.#fanOut, this.#inTransactions)
    if (this.#inTransactions) return
    this.#writes.soon(() => this.#write(this.#tracker.acknowledgedPositions()), error => {
      this.#logger.warn('writing offset syncs as acknowledged failed; the next write or the commit writes them', { error })
    })
  }

  /**
   * Exactly-once: the ranges of `acks` (a lane's transaction about to commit) and the mirror's
   * position in each partition of `positions`, as records of the syncs topic, to be written in that
   * transaction. Worked out from the transaction's own acknowledgements (a range per run of
   * consecutive source and target offsets in it), so an aborted transaction leaves nothing here.
   */
  transactionRecords (acks: readonly TransactionAck[], positions: readonly SourcePosition[]): TransactionRecord[] {
    const tracker = new RangeTracker()
    for (const { batch, segments } of acks) recordSegments(tracker, batch, segments, this.#fanOut, false)
    const records = tracker.unwritten().map(range => encodeRange(range))
    for (const { topic, partition, offset } of positions) {
      const position = tracker.position(topic, partition, offset)
      if (position !== undefined) records.push(encodePosition(position))
    }
    return records.map(({ key, value }) => ({ topic: this.topic, key, value: value as string }))
  }

  /** Writes what is not yet durable, with the positions of `committing`; runs after the writes asked for before it. */
  flush (committing: readonly CommitCandidate[] = []): Promise<void> {
    // Positions are taken now: the target offset after what was acknowledged before the commit.
    const positions: MirrorPosition[] = []
    for (const { topic, partition, offset } of committing) {
      const position = this.#tracker.position(topic, partition, offset)
      if (position !== undefined) positions.push(position)
    }
    return this.#writes.run(() => this.#write(positions).catch(error => {
      // Counted here only: the failure metric counts the writes a source commit waited for (that commit is skipped).
      this.#observer.syncWriteFailed?.(this.#labels, errorLabel(error))
      throw error
    }))
  }

  /** Whether `position` is past the last one written for its partition (or of another target topic). */
  #movesForward (position: MirrorPosition): boolean {
    const last = this.#positions.get(positionKey(position.sourceTopic, position.partition))
    if (last === undefined || last.targetTopic !== position.targetTopic) return true
    return position.sourceNext > last.sourceNext || (position.sourceNext === last.sourceNext && position.targetNext > last.targetNext)
  }

  /** Writes the ranges not yet written (taken when the write starts), then those of `positions` that move forward. */
  async #write (positions: readonly MirrorPosition[]): Promise<void> {
    const ranges = this.#tracker.unwritten()
    const records: InternalRecord[] = ranges.map(range => encodeRange(range))
    const moved = positions.filter(position => this.#movesForward(position))
    for (const position of moved) records.push(encodePosition(position))
    if (records.length === 0) return
    // Split into requests the topic accepts, sent in order: ranges before the positions that rely on them.
    await this.#writer.write(this.topic, records, { maxAttempts: 3, initialBackoffMs: 200, signal: this.#abort.signal })
    this.#tracker.markWritten(ranges)
    // Writes run one at a time: nothing wrote a position of these partitions since `moved` was taken.
    for (const position of moved) this.#positions.set(positionKey(position.sourceTopic, position.partition), position)
    this.#observer.syncsWritten?.(this.#labels, ranges.length, moved.length)
    this.#logger.debug('offset syncs written', { ranges: ranges.length, positions: moved.length })
  }

  /**
   * Lets a running write finish within `boundMs`, then disconnects. The flow's final commit has
   * already waited for the last flush; a write still running here is one the target does not
   * take (unreachable), and what it held is only needed for offsets that stay uncommitted.
   */
  stop (boundMs = STOP_BOUND_MS): Promise<void> {
    this.#writes.close()
    const writing = { abort: this.#abort, flushing: this.#writes.settled, writer: this.#writer }
    this.#stopping ??= stopFlushingWriter({ ...writing, what: 'offset syncs', logger: this.#logger }, boundMs)
    return this.#stopping
  }
}
