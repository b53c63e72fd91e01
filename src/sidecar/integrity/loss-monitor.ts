import { targetTopicName, type FlowConfig } from '../../config/mirror-config.js'
import { GroupAdmin, type GroupOffset } from '../../kafka/group-admin.js'
import type { MirrorBatch } from '../../ports/mirror-batch.js'
import { flowLabels, type FlowLabels, type FlowSnapshot } from '../../ports/pipeline-observer.js'
import type { AckSegment } from '../../ports/ports.js'
import { errorLabel, ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { KafkaRecord } from '../../shared/kafka-record.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import type { AckGuard } from '../pipeline/flow-ack-listener.js'
import { ForeignWriteDetector, type ForeignRecords } from './foreign-write-detector.js'
import { FATAL_LOSS_REASONS, LossDetector, LossReasons, type LossFinding, type Marks, type LossObserver, type PartitionObservation } from './loss-detector.js'

export interface LossMonitorOptions {
  readonly logger: Logger
  readonly observer?: LossObserver
  /** The flow's state, read at each check (`MirrorFlow.snapshot`). */
  readonly snapshot: () => FlowSnapshot
  /** Milliseconds between checks, counted from the end of the last; default `lossCheckIntervalMs` of the flow's partitions. */
  readonly intervalMs?: number
}

/** The shortest wait between two checks, and the longest. */
export const LOSS_CHECK_MIN_INTERVAL_MS = 5_000
export const LOSS_CHECK_MAX_INTERVAL_MS = 30_000
/** Milliseconds added to the wait per partition above 3,333. */
const LOSS_CHECK_MS_PER_PARTITION = 1.5

/**
 * The wait between two checks for a flow of `partitions` partitions: 5 s up to 3,333 partitions,
 * then 1.5 ms per partition (15 s at 10,000), at most 30 s. A check reads the log offsets of every
 * partition on both clusters and the group's committed offsets (five answers of every partition):
 * at 10,000 partitions each check took some 70-90 ms of CPU (profiled), 1.4-1.8 % of a core every 5 s, over a
 * quarter of what the caught-up mirror used. So the cost per second stays what it is at 3,333.
 */
export function lossCheckIntervalMs (partitions: number): number {
  return Math.min(LOSS_CHECK_MAX_INTERVAL_MS, Math.max(LOSS_CHECK_MIN_INTERVAL_MS, Math.round(partitions * LOSS_CHECK_MS_PER_PARTITION)))
}

const describe: Record<LossFinding['reason'], string> = {
  [LossReasons.SOURCE_RETENTION]:
    'deleted on the source (retention or deleteRecords) before the mirror copied them; the mirror goes on from the log start offset',
  [LossReasons.SOURCE_TOPIC_RECREATED]:
    "the source topic was deleted, or deleted and created again (its high watermark is below the mirror's position); stopping without committing: restart the sidecar to copy the new topic from its start",
  [LossReasons.TARGET_TOPIC_RECREATED]:
    'the target topic was deleted or recreated (records the mirror wrote are gone); stopping without committing: re-copy from the source (reset the mirror group, e.g. kafka-consumer-groups --reset-offsets --to-earliest) before restarting',
}

/** One line naming the records, for the log and for the error that stops the flow. */
function lossLine (flow: string, finding: LossFinding): string {
  const range = finding.toOffset > finding.fromOffset ? `offsets ${finding.fromOffset}-${finding.toOffset - 1n}` : 'no offsets'
  const where = finding.reason === LossReasons.TARGET_TOPIC_RECREATED
    ? `target ${finding.targetTopic} partition ${finding.partition} ${range} (${finding.records} records, copies of source ${finding.topic})`
    : `source ${finding.topic} partition ${finding.partition} ${range} (${finding.records} records)`
  return `flow ${flow}: lost records: ${where}: ${describe[finding.reason]}`
}

/**
 * Watches one flow for silent loss (`LossDetector`): hears every acknowledged batch as the guard
 * of the flow's ack listener (`AckGuard`, `flowAckListener`), and every `intervalMs` (`lossCheckIntervalMs`) reads the log offsets of the
 * flow's source and target partitions. Each loss is counted (`kafka_mirror_lost_records_total`)
 * and logged as an error naming topic, partition and offsets. Source retention: the mirror goes
 * on from the log start offset (the records are gone; stopping would not bring them back). A
 * recreated source or target topic: from then on `beforeFlush` throws, so no commit of the
 * flow goes through, and `done` rejects with the loss line (the sidecar stops and exits 2).
 * A failed check is logged and tried again at the next interval. `start()`/`stop()`, stop once-only.
 */
export class LossMonitor implements AckGuard {
  readonly #flow: FlowConfig
  readonly #labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: LossObserver
  readonly #snapshot: () => FlowSnapshot
  readonly #intervalMs: number | undefined
  /** Partitions of the flow at the last check (the scaled interval's input). */
  #partitions = 0
  readonly #detector = new LossDetector()
  /** Records on the target the mirror did not write; none for an exactly-once flow (its transaction markers take target offsets). */
  readonly #foreign: ForeignWriteDetector | undefined
  readonly #source: GroupAdmin
  readonly #target: GroupAdmin
  #timer: RearmingTimer | undefined
  /** The mirror group's last non-negative committed offset seen, by topic then partition. */
  readonly #lastCommitted = new Map<string, Map<number, bigint>>()
  #checking: Promise<LossFinding[]> | undefined
  #fatal: MirrorError | undefined
  #rejectDone: (error: MirrorError) => void = () => { /* replaced in the constructor */ }
  #resolveDone: () => void = () => { /* replaced in the constructor */ }
  #stopping: Promise<void> | undefined
  /** Settles when the monitor stopped: rejects when it found a loss that stops the flow. */
  readonly done: Promise<void>

  constructor (flow: FlowConfig, options: LossMonitorOptions) {
    this.#flow = flow
    this.#labels = flowLabels(flow)
    this.#logger = options.logger.child({ flow: flow.name, component: 'loss-monitor' })
    this.#observer = options.observer ?? {}
    this.#snapshot = options.snapshot
    this.#intervalMs = options.intervalMs
    this.#foreign = flow.exactlyOnce === undefined ? new ForeignWriteDetector() : undefined
    this.#source = new GroupAdmin(flow.source, this.#logger)
    this.#target = new GroupAdmin(flow.target, this.#logger)
    this.done = new Promise((resolve, reject) => {
      this.#resolveDone = resolve
      this.#rejectDone = reject
    })
    // Marks the rejection handled here: whoever awaits `done` (the sidecar) still sees it.
    this.done.catch(() => { /* seen by whoever awaits done */ })
  }

  /** The error that stopped the flow, once a fatal loss was found. */
  get fatal (): MirrorError | undefined {
    return this.#fatal
  }

  /** Tells the detector about each acknowledged batch (the guard of the flow's ack listener, `flowAckListener`). */
  acknowledged (batch: MirrorBatch, segments: readonly AckSegment[]): void {
    if (segments.length === 0) return
    let ackedRecords = 0
    for (const s of segments) ackedRecords = Math.max(ackedRecords, s.from + s.count)
    const next = ackedRecords >= batch.records.length ? batch.nextOffset : BigInt((batch.records[ackedRecords] as KafkaRecord).offset)
    this.#detector.acknowledged(batch.sourceTopic, batch.partition, batch.targetTopic, batch.firstOffset, next, segments)
    this.#foreign?.acknowledged(batch.sourceTopic, batch.partition, batch.targetTopic, segments)
  }

  /** Runs before every flush of the flow's ack listener, so before every source commit: rejects once a fatal loss was found. */
  async beforeFlush (): Promise<void> {
    // The commit would overwrite the committed offset a first batch is compared with: check first.
    if (this.#detector.needsCheckBeforeCommit()) await this.check().catch(() => { /* check() logged it; a fatal loss it found is in #fatal */ })
    // No commit after a fatal loss: the committed offsets would claim records the target does not hold.
    if (this.#fatal !== undefined) throw this.#fatal
  }

  /** Counts and logs the target records of each idle partition that the mirror did not write (high watermarks read before `snapshot`). */
  #judgeForeign (
    detector: ForeignWriteDetector,
    snapshot: FlowSnapshot,
    targetTopics: ReadonlyMap<string, string>,
    targetOffsets: ReadonlyMap<string, ReadonlyMap<number, { readonly highWatermark: bigint }>>
  ): void {
    detector.retain(snapshot.partitions)
    const found: ForeignRecords[] = detector.check(snapshot.partitions.flatMap(p => {
      const targetTopic = targetTopics.get(p.topic)
      if (targetTopic === undefined) return []
      const targetHighWatermark = targetOffsets.get(targetTopic)?.get(p.partition)?.highWatermark
      return [{ topic: p.topic, partition: p.partition, targetTopic, targetHighWatermark, idle: p.oldestUnackedTimestampMs === undefined }]
    }))
    for (const f of found) {
      this.#logger.warn(
        `flow ${this.#flow.name}: foreign records on the target: ${f.targetTopic}-${f.partition} offsets ${f.fromOffset}..${f.toOffset - 1n} (${f.records}) were not written by the mirror`,
        {
          topic: f.topic,
          partition: f.partition,
          targetTopic: f.targetTopic,
          fromOffset: f.fromOffset.toString(),
          toOffset: f.toOffset.toString(),
          records: f.records.toString(),
        }
      )
      this.#observer.foreign?.(this.#labels, f)
    }
  }

  /** The group's stored offsets (negative ones included); non-negative ones are remembered in `#lastCommitted`. */
  async #readCommitted (): Promise<GroupOffset[]> {
    const stored = await this.#source.storedOffsets(this.#flow.consumer.groupId)
    for (const o of stored) {
      if (o.offset < 0n) continue
      let ofTopic = this.#lastCommitted.get(o.topic)
      if (ofTopic === undefined) this.#lastCommitted.set(o.topic, (ofTopic = new Map()))
      // Set only when it moved: the map lives long, a value replaced every check becomes old-generation garbage.
      if (ofTopic.get(o.partition) !== o.offset) ofTopic.set(o.partition, o.offset)
    }
    return stored
  }

  /** Call before the flow starts: its consumer may reset the committed offsets it finds out of range. */
  async start (): Promise<void> {
    await this.#source.start()
    await this.#target.start()
    // Not worth failing the start for (a fresh cluster may not have its group coordinator yet):
    // without it, a loss while the mirror was down goes uncounted when kafkajs resets the offsets.
    await this.#readCommitted().catch(error => {
      this.#logger.warn("reading the mirror group's committed offsets failed; records deleted while the mirror was down may go uncounted", {
        code: errorLabel(error),
        error,
      })
    })
    this.#timer = new RearmingTimer(
      () => this.#intervalMs ?? lossCheckIntervalMs(this.#partitions),
      () => this.check()
    )
    this.#timer.start()
  }

  /** One check now (or the one running); resolves with what it found. */
  check (): Promise<LossFinding[]> {
    this.#checking ??= this.#checkOnce()
      .catch(error => {
        this.#logger.warn('checking for lost records failed; trying again at the next interval', { code: errorLabel(error), error })
        throw error
      })
      .finally(() => {
        this.#checking = undefined
      })
    return this.#checking
  }

  async #checkOnce (): Promise<LossFinding[]> {
    if (this.#fatal !== undefined) return []
    const needed = this.#detector.needsCommittedOffset()
    // Not held in this frame through the check's requests (the group's offsets of every partition).
    const committed = this.#committedOf(needed, await this.#readCommitted())
    const marks = this.#detector.mark()
    try {
      return await this.#judge(committed, marks)
    } catch (error) {
      this.#detector.unmark(marks)
      throw error
    }
  }

  /**
   * The committed offsets of `needed` (the partitions seen for the first time; none once every
   * partition was seen), by topic then partition; null: the group has none.
   */
  #committedOf (
    needed: ReadonlyArray<{ readonly topic: string, readonly partition: number }>,
    stored: readonly GroupOffset[]
  ): Map<string, Map<number, bigint | null>> | undefined {
    let committed: Map<string, Map<number, bigint | null>> | undefined
    if (needed.length > 0) {
      const storedOf = new Map<string, Map<number, bigint>>()
      for (const o of stored) {
        let ofTopic = storedOf.get(o.topic)
        if (ofTopic === undefined) storedOf.set(o.topic, (ofTopic = new Map()))
        ofTopic.set(o.partition, o.offset)
      }
      committed = new Map()
      for (const { topic, partition } of needed) {
        const offset = storedOf.get(topic)?.get(partition)
        // A negative offset is kafkajs' reset after OFFSET_OUT_OF_RANGE: the position before it is the last one seen.
        const known = offset === undefined ? undefined : offset >= 0n ? offset : this.#lastCommitted.get(topic)?.get(partition)
        let ofTopic = committed.get(topic)
        if (ofTopic === undefined) committed.set(topic, (ofTopic = new Map()))
        ofTopic.set(partition, known ?? null)
      }
    }
    return committed
  }

  /**
   * The flow's positions by topic, then partition (no string key per partition: a check looks at
   * all of them). Made here, not in `#judge`, so the snapshot of every partition it is made from is
   * not held through the check's requests (it outlived young collections at 10,000 partitions).
   */
  #positions (): Map<string, Map<number, bigint>> {
    const positions = new Map<string, Map<number, bigint>>()
    for (const p of this.#snapshot().partitions) {
      let ofTopic = positions.get(p.topic)
      if (ofTopic === undefined) positions.set(p.topic, (ofTopic = new Map()))
      ofTopic.set(p.partition, p.nextOffsetToMirror)
    }
    return positions
  }

  async #judge (committed: ReadonlyMap<string, ReadonlyMap<number, bigint | null>> | undefined, marks: Marks): Promise<LossFinding[]> {
    const positionsBefore = this.#positions()
    const targetTopicOf = (topic: string): string => targetTopicName(this.#flow.replicationPolicy, this.#flow.source.alias, topic)
    const targetTopics = new Map<string, string>()
    for (const topic of positionsBefore.keys()) targetTopics.set(topic, targetTopicOf(topic))
    // Log offsets first, the flow's position after: a record fetched in between is in flight, never counted.
    // All topics of a cluster at once: one ListOffsets pair per leader (per topic, 1,250 topics cost 5,000 requests a check);
    // a topic the cluster does not have is absent from the answer.
    const [sourceOffsets, targetOffsets] = await Promise.all([
      this.#source.logOffsetsOf([...positionsBefore.keys()]),
      this.#target.logOffsetsOf([...new Set(targetTopics.values())]),
    ])
    const snapshot = this.#snapshot()
    this.#partitions = snapshot.partitions.length
    this.#detector.retain(snapshot.partitions)
    const observations: PartitionObservation[] = []
    let unlistedSource = false
    let unlistedTarget = false
    for (const p of snapshot.partitions) {
      const targetTopic = targetTopics.get(p.topic)
      if (targetTopic === undefined) continue
      const ofSource = sourceOffsets.get(p.topic)
      const ofTarget = targetOffsets.get(targetTopic)
      const source = ofSource?.get(p.partition)
      const target = ofTarget?.get(p.partition)
      // A topic in the answer without this partition: added partitions the kept leaders do not list yet, not a gone topic.
      if (ofSource !== undefined && source === undefined) unlistedSource = true
      if (ofTarget !== undefined && target === undefined) unlistedTarget = true
      const observation: PartitionObservation = {
        topic: p.topic,
        partition: p.partition,
        source,
        target,
        ...((ofSource !== undefined && source === undefined) || (ofTarget !== undefined && target === undefined) ? { unlisted: true } : {}),
        nextOffsetToMirror: p.nextOffsetToMirror,
        nextOffsetToMirrorBefore: positionsBefore.get(p.topic)?.get(p.partition) ?? -1n,
        idle: p.oldestUnackedTimestampMs === undefined,
        consumerHighWatermark: p.highWatermark,
      }
      const committedBeforeStart = committed?.get(p.topic)?.get(p.partition)
      observations.push(committedBeforeStart === undefined ? observation : { ...observation, committedBeforeStart })
    }
    if (unlistedSource) this.#source.forgetLeaders()
    if (unlistedTarget) this.#target.forgetLeaders()
    const findings = this.#detector.check(observations, marks)
    if (this.#foreign !== undefined) this.#judgeForeign(this.#foreign, snapshot, targetTopics, targetOffsets)
    for (const finding of findings) {
      const line = lossLine(this.#flow.name, finding)
      this.#logger.error(line, {
        reason: finding.reason,
        topic: finding.topic,
        partition: finding.partition,
        targetTopic: finding.targetTopic,
        fromOffset: finding.fromOffset.toString(),
        toOffset: finding.toOffset.toString(),
        records: finding.records.toString(),
      })
      this.#observer.lost?.(this.#labels, finding)
      if (FATAL_LOSS_REASONS.has(finding.reason) && this.#fatal === undefined) {
        this.#fatal = new MirrorError(ErrorCodes.DATA_LOSS, line)
        this.#rejectDone(this.#fatal)
      }
    }
    return findings
  }

  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#timer?.stop()
      await this.#checking?.catch(() => { /* check() logged it; stop only waits for it to end */ })
      await Promise.all([this.#source.stop(), this.#target.stop()])
      this.#resolveDone()
    })()
    return this.#stopping
  }
}
