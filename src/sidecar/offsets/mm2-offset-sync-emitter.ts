import type { ClusterConnection } from '../../config/cluster-connection.js'
import { hasMessageHandler } from '../../config/message-handler-config.js'
import type { FlowConfig, Mm2OffsetSyncConfig } from '../../config/mirror-config.js'
import { InternalTopicWriter } from '../../kafka/internal-topic.js'
import { sourceOffsetAt, type MirrorBatch } from '../../ports/mirror-batch.js'
import type { AckSegment, TransactionAck, TransactionRecord } from '../../ports/ports.js'
import { flowLabels, type FlowLabels } from '../../ports/pipeline-observer.js'
import { stopFlushingWriter } from '../../shared/deadline.js'
import { errorLabel, ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import type { SyncListener } from '../pipeline/flow-ack-listener.js'
import { Mm2OffsetSyncRules } from '../../mirror-topics/mm2-offset-sync-rules.js'
import { encodeMm2OffsetSync, type Mm2OffsetSyncRecord } from '../../mirror-topics/mm2-records.js'
import type { OffsetsObserver } from './offsets-observer.js'
import { WriteChain } from './write-chain.js'

/** How long `stop()` waits for a write in flight, and then for the client to disconnect. */
const STOP_BOUND_MS = 2_000

/**
 * Least time between two writes as records are acknowledged, in ms: the rules bound how many
 * syncs there are (one per `offset.lag.max` records and gaps); this only gathers them into fewer
 * requests, at most ten a second, each sync at most this much after its record's acknowledgement.
 */
const ACKNOWLEDGED_WRITE_INTERVAL_MS = 100

export interface Mm2OffsetSyncEmitterOptions {
  readonly logger: Logger
  readonly observer?: OffsetsObserver
}

/**
 * Calls `run(upstreamStart, downstreamStart, count)` for each run of `segments` whose source and
 * target offsets both follow on. With a message handler (`fanOut`) only a source record's first
 * output counts (as in the exact ranges): its further outputs carry the same source offset.
 */
function forEachRun (
  batch: MirrorBatch,
  segments: readonly AckSegment[],
  fanOut: boolean,
  run: (upstream: bigint, downstream: bigint, count: number) => void
): void {
  for (const segment of segments) {
    if (batch.forwarded !== undefined) {
      run(batch.forwarded.baseOffset + BigInt(segment.from), segment.targetBaseOffset, segment.count)
      continue
    }
    let start = 0
    let startUp = 0n
    let previousUp = -1n
    let count = 0
    for (let i = 0; i < segment.count; i++) {
      const up = sourceOffsetAt(batch, segment.from + i)
      if (fanOut && up === previousUp) {
        if (count > 0) run(startUp, segment.targetBaseOffset + BigInt(start), count)
        count = 0
        continue
      }
      if (count > 0 && (up !== previousUp + 1n || i !== start + count)) {
        run(startUp, segment.targetBaseOffset + BigInt(start), count)
        count = 0
      }
      if (count === 0) {
        start = i
        startUp = up
      }
      count++
      previousUp = up
    }
    if (count > 0) run(startUp, segment.targetBaseOffset + BigInt(start), count)
  }
}

/**
 * MirrorMaker 2's own offset syncs for an mm2.properties flow (`flow.offsetSyncs.mm2`): `OffsetSync`
 * records {source topic, partition} -> {upstream offset, downstream offset} in MirrorMaker 2's
 * binary format, written by its rules (`Mm2OffsetSyncRules`: first record, `offset.lag.max`, gaps,
 * the delayed sync at each flush) to `mm2-offset-syncs.<alias>.internal` on the cluster
 * `offset-syncs.topic.location` names (created with one partition, compacted, as MirrorMaker 2
 * creates it). MirrorMaker 2's checkpoint task, `mirror-check translate --mm2` and any tool reading
 * the topic find what MirrorMaker 2 would have written; the exact translation stays in the
 * sidecar's own ranges (`OffsetSyncWriter`).
 * When syncs are written is MirrorMaker 2's rule (`OffsetSyncWriter`): a sync the rules ask for
 * (first record, `offset.lag.max`, gaps) is written as soon as the target acknowledged its record
 * (its `firePendingOffsetSyncs` after each `commitRecord`), batched: one write in flight, the next
 * holding every sync asked for meanwhile (`WriteChain.soon`); the delayed sync of a partition's
 * last record is written only at the flush before each source commit (its `commit()` promotes
 * delayed syncs, KAFKA-14610). Writing delayed syncs more often would write more syncs than
 * MirrorMaker 2 does, and its `OffsetSyncStore` (KAFKA-14666) keeps a bounded number per
 * partition, spaced by powers of two from the newest: more syncs would push the older ones out
 * sooner and translate a group far behind less precisely. The exact translation the checkpoints
 * use comes from the sidecar's own ranges, written as acknowledged (`OffsetSyncWriter`).
 * Guarantees: a sync describes only records the target acknowledged (exactly-once: committed);
 * the syncs of a partition are written in upstream-offset order, each write taking them from
 * the oldest not yet written, so one is never written again after a later one unless a write
 * failed part way (`OffsetSyncStore` clears a partition's syncs when one goes back: its invariant
 * `syncs[0]` is the newest sync, KAFKA-14666); when `flush()` resolves every sync asked for before the
 * call is durable (acks=all): the flow awaits it before each source commit. Exactly-once with the
 * topic on the target, the syncs the rules ask for are written in the lane transaction of their
 * records (`transactionRecords`); with the topic on the source they cannot be, and are written as
 * soon as that transaction committed (its records reach `acknowledged` then).
 * `start()` before the flow starts, `stop()` after it stopped; `stop()` is once-only.
 */
export class Mm2OffsetSyncEmitter implements SyncListener {
  readonly #config: Mm2OffsetSyncConfig
  readonly #connection: ClusterConnection
  readonly #labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: OffsetsObserver
  readonly #writer: InternalTopicWriter
  readonly #rules: Mm2OffsetSyncRules
  readonly #fanOut: boolean
  /** Exactly-once with the topic on the target: the rules run on each transaction's records, inside it. */
  readonly #inTransactions: boolean
  readonly #writes = new WriteChain(ACKNOWLEDGED_WRITE_INTERVAL_MS)
  #stopping: Promise<void> | undefined
  readonly #abort = new AbortController()

  constructor (flow: FlowConfig & { readonly offsetSyncs: { readonly mm2: Mm2OffsetSyncConfig } }, options: Mm2OffsetSyncEmitterOptions) {
    this.#config = flow.offsetSyncs.mm2
    this.#connection = this.#config.location === 'source' ? flow.source : flow.target
    this.#labels = flowLabels(flow)
    this.#logger = options.logger.child({ flow: flow.name, component: 'mm2-offset-syncs' })
    this.#observer = options.observer ?? {}
    this.#fanOut = hasMessageHandler(flow)
    this.#inTransactions = flow.exactlyOnce !== undefined && this.#config.location === 'target'
    this.#rules = new Mm2OffsetSyncRules(this.#config.maxOffsetLagRecords)
    this.#writer = new InternalTopicWriter(this.#connection, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  /** Creates the flow's emitter when its config asks for MirrorMaker 2's offset syncs. */
  static of (flow: FlowConfig, options: Mm2OffsetSyncEmitterOptions): Mm2OffsetSyncEmitter | undefined {
    const mm2 = flow.offsetSyncs.enabled ? flow.offsetSyncs.mm2 : undefined
    return mm2 === undefined ? undefined : new Mm2OffsetSyncEmitter({ ...flow, offsetSyncs: { ...flow.offsetSyncs, mm2 } }, options)
  }

  get topic (): string { return this.#config.topic }

  async start (): Promise<void> {
    await this.#writer.start()
    try {
      await this.#writer.ensureCompactedTopic(this.topic, { replicationFactor: this.#config.replicationFactor, key: 'offset-syncs.topic.replication.factor' })
    } catch (error) {
      if (!(error instanceof MirrorError) || error.kafkaCode === undefined || !/AUTHORIZATION/.test(error.kafkaCode)) throw error
      throw new MirrorError(
        ErrorCodes.CONFIG,
        `offset-syncs.topic.location ${this.#config.location}: the mirror may not create or describe ${this.topic} on the ${this.#connection.alias} cluster (${error.kafkaCode}); allow it, or set offset-syncs.topic.location = ${this.#config.location === 'source' ? 'target' : 'source'}, or emit.offset-syncs.enabled = false`,
        { cause: error }
      )
    }
    this.#logger.info('writing MirrorMaker 2 offset syncs', {
      topic: this.topic,
      cluster: this.#connection.alias,
      offsetLagMax: this.#config.maxOffsetLagRecords,
    })
  }

  acknowledged (batch: MirrorBatch, segments: readonly AckSegment[]): void {
    if (this.#inTransactions) {
      // The transaction that held these records already wrote the syncs the rules asked for; the last record waits for the next flush.
      let last: [bigint, bigint] | undefined
      forEachRun(batch, segments, this.#fanOut, (up, down, count) => { last = [up + BigInt(count - 1), down + BigInt(count - 1)] })
      if (last !== undefined) this.#rules.delayedAfterCommit(batch.sourceTopic, batch.partition, last[0], last[1])
      return
    }
    forEachRun(batch, segments, this.#fanOut, (up, down, count) =>
      this.#rules.acknowledgedRun(batch.sourceTopic, batch.partition, up, down, count, this.#fanOut)
    )
    // The syncs the rules asked for, without the delayed ones (those wait for the flush, KAFKA-14610).
    this.#writes.soon(() => this.#write(false), error => {
      this.#logger.warn('writing MirrorMaker 2 offset syncs as acknowledged failed; the next write or the commit writes them', { error })
    })
  }

  /** Exactly-once with the topic on the target: the syncs the rules ask for in a lane's transaction, written in it. */
  transactionRecords (acks: readonly TransactionAck[]): TransactionRecord[] {
    if (!this.#inTransactions) return []
    const syncs: Mm2OffsetSyncRecord[] = []
    for (const { batch, segments } of acks) {
      forEachRun(batch, segments, this.#fanOut, (up, down, count) =>
        this.#rules.acknowledgedRun(batch.sourceTopic, batch.partition, up, down, count, this.#fanOut, syncs)
      )
    }
    this.#rules.handedOut(syncs)
    return syncs.map(sync => ({ topic: this.topic, ...encodeMm2OffsetSync(sync) }))
  }

  /** Writes the syncs asked for and the delayed ones (MirrorMaker 2's commit), after the writes asked for before it. */
  flush (): Promise<void> {
    return this.#writes.run(() => this.#write(true).catch(error => {
      // Counted here only: the failure metric counts the writes a source commit waited for (that commit is skipped).
      this.#observer.syncWriteFailed?.(this.#labels, errorLabel(error))
      throw error
    }))
  }

  /**
   * Writes the syncs waiting when the write starts (taken then: writes run one at a time, so the
   * syncs of a partition go out in the order the rules asked for them), and with `withDelayed` the delayed ones.
   */
  async #write (withDelayed: boolean): Promise<void> {
    const toWrite = this.#rules.toWrite(withDelayed)
    if (toWrite.syncs.length === 0) return
    await this.#writer.write(
      this.topic,
      toWrite.syncs.map(sync => encodeMm2OffsetSync(sync)),
      { maxAttempts: 3, initialBackoffMs: 200, signal: this.#abort.signal }
    )
    this.#rules.written(toWrite)
    this.#logger.debug('MirrorMaker 2 offset syncs written', { syncs: toWrite.syncs.length })
  }

  /** Lets a running write finish within `boundMs`, then disconnects (as `OffsetSyncWriter.stop`). */
  stop (boundMs = STOP_BOUND_MS): Promise<void> {
    this.#writes.close()
    const writing = { abort: this.#abort, flushing: this.#writes.settled, writer: this.#writer }
    this.#stopping ??= stopFlushingWriter({ ...writing, what: 'MirrorMaker 2 offset syncs', logger: this.#logger }, boundMs)
    return this.#stopping
  }
}
