import type { FlowLabels } from '../../ports/pipeline-observer.js'
import type { ForeignRecords } from './foreign-write-detector.js'
/**
 * Silent loss: records that will never reach the target although nothing failed. Pure logic; the
 * sidecar's `LossMonitor` feeds it acknowledgements and the clusters' log offsets, and acts on
 * what it finds. Offsets are bigints (Kafka int64).
 */

/** Why records are lost. `fatal` reasons stop the flow without committing further. */
export const LossReasons = {
  /** Source retention (or deleteRecords) moved the log start offset past records the mirror had not fetched. */
  SOURCE_RETENTION: 'source_retention',
  /** The source topic was deleted and created again: its offsets started over below the mirror's position. */
  SOURCE_TOPIC_RECREATED: 'source_topic_recreated',
  /** The target topic was deleted (or recreated): records the mirror wrote and committed are gone from it. */
  TARGET_TOPIC_RECREATED: 'target_topic_recreated',
} as const
export type LossReason = typeof LossReasons[keyof typeof LossReasons]

/** Reasons after which the flow must not go on (see docs/operations.md, "Silent loss"). */
export const FATAL_LOSS_REASONS: ReadonlySet<LossReason> = new Set([LossReasons.SOURCE_TOPIC_RECREATED, LossReasons.TARGET_TOPIC_RECREATED])

/**
 * One finding. Source reasons: source offsets `fromOffset .. toOffset - 1` of `topic`-`partition`
 * were never copied. Target reason: target offsets `fromOffset .. toOffset - 1` of `targetTopic`
 * that the mirror wrote are gone. `records` is `toOffset - fromOffset` (offsets, so transaction
 * markers in the range count too).
 */
export interface LossFinding {
  readonly reason: LossReason
  readonly topic: string
  readonly partition: number
  readonly targetTopic: string
  readonly fromOffset: bigint
  readonly toOffset: bigint
  readonly records: bigint
}

/** Log start and high watermark of one partition; `undefined` for the whole topic when it does not exist. */
export interface LogOffsets {
  readonly logStartOffset: bigint
  readonly highWatermark: bigint
}

/** What one check saw, per source partition the flow handles. */
export interface PartitionObservation {
  readonly topic: string
  readonly partition: number
  /** Source log offsets read at the start of the check; undefined when the topic is gone. */
  readonly source: LogOffsets | undefined
  /** Target log offsets of the target topic's partition; undefined when the topic (or partition) is gone. */
  readonly target: LogOffsets | undefined
  /** The flow's next source offset not yet acknowledged, read after `source` (its snapshot). */
  readonly nextOffsetToMirror: bigint
  /** The same, read before `source` and `target` were (compared with their high watermarks: the mirror may move on while they are read). */
  readonly nextOffsetToMirrorBefore: bigint
  /** True when no record of the partition is in flight (fetched but not acknowledged). */
  readonly idle: boolean
  /** The source high watermark the flow's consumer last saw. */
  readonly consumerHighWatermark: bigint
  /** The mirror group's committed offset, looked up for a partition `needsCommittedOffset` named (null: the group has none); else undefined. */
  readonly committedBeforeStart?: bigint | null
  /**
   * True when a cluster's answer has the topic but not this partition (partitions were just added
   * and the leaders read were older): nothing is judged this check, what it would have looked at
   * waits for the next one.
   */
  readonly unlisted?: boolean
}

interface Gap { readonly from: bigint, readonly to: bigint }

/**
 * A check's mark (`mark`), passed back to `check` or `unmark`: what each partition's state held
 * when it was taken is kept in the state itself (`mark*` fields, tagged with `epoch`), so a mark
 * allocates nothing per partition.
 */
export interface Marks { readonly epoch: number }

interface PartitionState {
  targetTopic: string
  /** Past the last acknowledged batch (its `nextOffset`); -1n before any. */
  sourceNext: bigint
  /** First source offset of the first batch this process acknowledged, until the committed offset before it was looked at. */
  firstOffset: bigint | undefined
  gaps: Gap[]
  /** Past the highest target offset acknowledged; -1n before any. */
  targetNext: bigint
  /**
   * `targetNext` when the previous check's mark was taken: the target's high watermark must be past
   * it by now (with acks=1 it trails fresh acknowledgements).
   */
  targetNextAtPreviousMark: bigint
  /** An acknowledgement got a target offset below one acknowledged before. */
  targetWentBack: boolean
  /** Target log start offset at the previous check (for the size of a target loss). */
  targetLogStart: bigint
  /** Highest source high watermark seen while the topic was the one the mirror copied. */
  maxSourceHighWatermark: bigint
  /** Source offsets below this are already counted as lost. */
  countedUpTo: bigint
  /** A fatal reason was reported for this partition (reported once). */
  fatal: boolean
  /** The mark this state was last marked by (`Marks.epoch`; 0: none), and what it held then. */
  markEpoch: number
  markSourceNext: bigint
  markTargetNext: bigint
  markGaps: readonly Gap[]
  /** The `retain` call that last named this partition. */
  retainedAt: number
}

const NO_GAPS: readonly Gap[] = Object.freeze([])

function max (a: bigint, b: bigint): bigint { return a > b ? a : b }
function min (a: bigint, b: bigint): bigint { return a < b ? a : b }

/**
 * Finds silent loss per partition from what the flow acknowledged and what the clusters say:
 *
 * - source retention: the source log start offset passed an offset the mirror had not fetched:
 *   the flow is idle at a position below the log start, or an acknowledged batch begins after a
 *   gap (within this process, or after the group's committed offset when the partition is first
 *   seen) whose start is below the log start by the time of the check;
 * - source topic recreated: the source high watermark is below the mirror's position (offsets
 *   went backwards); the records of the old topic past the position that the consumer had seen
 *   are counted;
 * - target topic deleted or recreated: the target topic is gone, its high watermark is below the
 *   offsets the mirror wrote before the previous check (a high watermark may trail the newest
 *   acknowledgements with acks=1), or an acknowledgement got a lower target offset than an earlier one.
 *
 * Each source offset is counted once; a fatal reason is reported once per partition.
 */
export class LossDetector {
  /** By topic, then partition (no string key per partition per lookup: a check looks up every partition). */
  readonly #states = new Map<string, Map<number, PartitionState>>()
  #epoch = 0
  #retains = 0

  #state (topic: string, partition: number): PartitionState | undefined {
    return this.#states.get(topic)?.get(partition)
  }

  /** An acknowledged batch: source offsets `firstOffset ..< nextOffset`, written at target offsets (`targetRuns`). */
  acknowledged (
    topic: string,
    partition: number,
    targetTopic: string,
    firstOffset: bigint,
    nextOffset: bigint,
    targetRuns: ReadonlyArray<{ readonly targetBaseOffset: bigint, readonly count: number }>
  ): void {
    let ofTopic = this.#states.get(topic)
    if (ofTopic === undefined) this.#states.set(topic, (ofTopic = new Map()))
    let state = ofTopic.get(partition)
    if (state === undefined) {
      state = {
        targetTopic,
        sourceNext: -1n,
        firstOffset,
        gaps: [],
        targetNext: -1n,
        targetNextAtPreviousMark: -1n,
        targetWentBack: false,
        targetLogStart: 0n,
        maxSourceHighWatermark: -1n,
        countedUpTo: -1n,
        fatal: false,
        markEpoch: 0,
        markSourceNext: -1n,
        markTargetNext: -1n,
        markGaps: NO_GAPS,
        retainedAt: this.#retains,
      }
      ofTopic.set(partition, state)
    } else if (state.sourceNext >= 0n && firstOffset > state.sourceNext) {
      state.gaps.push({ from: state.sourceNext, to: firstOffset })
    }
    state.sourceNext = max(state.sourceNext, nextOffset)
    for (const run of targetRuns) {
      if (run.count <= 0) continue
      if (state.targetNext >= 0n && run.targetBaseOffset < state.targetNext) state.targetWentBack = true
      state.targetNext = max(state.targetNext, run.targetBaseOffset + BigInt(run.count))
    }
  }

  /** Partitions seen for the first time whose committed offset the next check needs (`committedBeforeStart`). */
  needsCommittedOffset (): Array<{ topic: string, partition: number }> {
    const out: Array<{ topic: string, partition: number }> = []
    for (const [topic, ofTopic] of this.#states) {
      for (const [partition, state] of ofTopic) if (state.firstOffset !== undefined) out.push({ topic, partition })
    }
    return out
  }

  /**
   * True when a commit now could erase evidence: a partition's committed offset before this
   * process is still to be looked at, or an acknowledgement got a lower target offset. Check first.
   */
  needsCheckBeforeCommit (): boolean {
    for (const ofTopic of this.#states.values()) {
      for (const state of ofTopic.values()) if (!state.fatal && (state.firstOffset !== undefined || state.targetWentBack)) return true
    }
    return false
  }

  /** Forgets partitions this process no longer handles (a later reassignment starts afresh). */
  retain (partitions: ReadonlyArray<{ readonly topic: string, readonly partition: number }>): void {
    const at = ++this.#retains
    for (const p of partitions) {
      const state = this.#state(p.topic, p.partition)
      if (state !== undefined) state.retainedAt = at
    }
    for (const [topic, ofTopic] of this.#states) {
      for (const [partition, state] of ofTopic) if (state.retainedAt !== at) ofTopic.delete(partition)
      if (ofTopic.size === 0) this.#states.delete(topic)
    }
  }

  /**
   * Call right before reading the log offsets of a check, and pass the result to `check`: positions
   * acknowledged while they are read must not be compared with them (a busy mirror would look
   * recreated), and gaps that appear meanwhile wait for the next check (the log start read may be
   * older than the reset that made them).
   */
  mark (): Marks {
    const epoch = ++this.#epoch
    for (const ofTopic of this.#states.values()) {
      for (const state of ofTopic.values()) {
        state.markEpoch = epoch
        state.markSourceNext = state.sourceNext
        state.markTargetNext = state.targetNext
        if (state.gaps.length === 0) {
          state.markGaps = NO_GAPS
        } else {
          state.markGaps = state.gaps
          state.gaps = []
        }
      }
    }
    return { epoch }
  }

  /** Gives back the gaps of `marks` when the check they were taken for failed (judged at the next one). */
  unmark (marks: Marks): void {
    for (const ofTopic of this.#states.values()) {
      for (const state of ofTopic.values()) {
        if (state.markEpoch !== marks.epoch) continue
        if (state.markGaps.length > 0) state.gaps.unshift(...state.markGaps)
        state.markGaps = NO_GAPS
        state.markEpoch = 0
      }
    }
  }

  /** One check over `observations` against the `marks` taken before their log offsets were read; returns what is newly lost. */
  check (observations: readonly PartitionObservation[], marks: Marks): LossFinding[] {
    const findings: LossFinding[] = []
    for (const o of observations) {
      const state = this.#state(o.topic, o.partition)
      // A partition first acknowledged after the mark has nothing to compare yet.
      if (state === undefined || state.markEpoch !== marks.epoch || state.fatal) continue
      const markGaps = state.markGaps
      state.markGaps = NO_GAPS
      if (o.unlisted === true) {
        if (markGaps.length > 0) state.gaps.unshift(...markGaps)
        continue
      }
      const position = max(state.sourceNext, o.nextOffsetToMirror)
      const positionBefore = max(state.markSourceNext, o.nextOffsetToMirrorBefore)

      const writtenBefore = state.targetNextAtPreviousMark
      state.targetNextAtPreviousMark = state.markTargetNext
      if (o.target === undefined || state.targetWentBack || (writtenBefore >= 0n && o.target.highWatermark < writtenBefore)) {
        state.fatal = true
        const from = state.targetLogStart
        const to = max(state.markTargetNext, from)
        findings.push({
          reason: LossReasons.TARGET_TOPIC_RECREATED,
          topic: o.topic,
          partition: o.partition,
          targetTopic: state.targetTopic,
          fromOffset: from,
          toOffset: to,
          records: to > from ? to - from : 0n,
        })
        continue
      }
      // Kept unless changed: a value replaced every check outlives young collections and becomes old-generation garbage.
      if (state.targetLogStart !== o.target.logStartOffset) state.targetLogStart = o.target.logStartOffset

      if (o.source === undefined || o.source.highWatermark < positionBefore) {
        state.fatal = true
        // Records of the old topic past the mirror's position that the consumer had seen: never copied.
        const to = max(state.maxSourceHighWatermark, positionBefore)
        findings.push({
          reason: LossReasons.SOURCE_TOPIC_RECREATED,
          topic: o.topic,
          partition: o.partition,
          targetTopic: state.targetTopic,
          fromOffset: positionBefore,
          toOffset: to,
          records: to - positionBefore,
        })
        continue
      }
      const seenHighWatermark = max(o.source.highWatermark, o.consumerHighWatermark)
      if (seenHighWatermark > state.maxSourceHighWatermark) state.maxSourceHighWatermark = seenHighWatermark

      const logStart = o.source.logStartOffset
      // Gaps that may hold lost records (most checks of most partitions have none: no array then).
      let candidates: Gap[] | undefined = markGaps.length === 0 ? undefined : [...markGaps]
      if (state.firstOffset !== undefined && o.committedBeforeStart !== undefined) {
        if (o.committedBeforeStart !== null && o.committedBeforeStart < state.firstOffset) {
          (candidates ??= []).push({ from: o.committedBeforeStart, to: state.firstOffset })
        }
        state.firstOffset = undefined
      }
      // In flight records were fetched before retention took them: only an idle position is a loss.
      if (o.idle && position < logStart) (candidates ??= []).push({ from: position, to: logStart })
      if (candidates === undefined) continue
      for (const gap of candidates.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))) {
        const from = max(gap.from, state.countedUpTo)
        const to = min(gap.to, logStart)
        if (to > from) {
          findings.push({
            reason: LossReasons.SOURCE_RETENTION,
            topic: o.topic,
            partition: o.partition,
            targetTopic: state.targetTopic,
            fromOffset: from,
            toOffset: to,
            records: to - from,
          })
          state.countedUpTo = to
        }
      }
    }
    return findings
  }
}

/** What the loss monitor reports (the metrics implement it); implementations must be cheap and must not throw. */
export interface LossObserver {
  lost?: (flow: FlowLabels, finding: LossFinding) => void
  /** Target records the mirror did not write (`foreign-write-detector.ts`). */
  foreign?: (flow: FlowLabels, records: ForeignRecords) => void
}
