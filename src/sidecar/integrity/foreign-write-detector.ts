import { partitionKey } from '../../shared/partition-key.js'
/**
 * Foreign writes: records on a mirrored target partition that the mirror did not write (a stray
 * producer writing to the target before cutover). Pure logic; the sidecar's `LossMonitor` feeds it
 * the target offsets of every acknowledged batch and, at each check, the target's high watermark.
 */

/** Target offsets `fromOffset .. toOffset - 1` of `targetTopic`-`partition` hold records the mirror did not write. */
export interface ForeignRecords {
  readonly topic: string
  readonly partition: number
  readonly targetTopic: string
  readonly fromOffset: bigint
  readonly toOffset: bigint
  readonly records: bigint
}

/** What one check saw of one partition the flow handles. */
export interface ForeignWriteObservation {
  readonly topic: string
  readonly partition: number
  readonly targetTopic: string
  /** The target partition's high watermark, read before `idle` was. */
  readonly targetHighWatermark: bigint | undefined
  /** No record of the partition in flight when the check looked, after reading the high watermark. */
  readonly idle: boolean
}

interface Run { from: bigint, to: bigint }

function stretch (o: ForeignWriteObservation, state: PartitionState, fromOffset: bigint, toOffset: bigint): ForeignRecords {
  return { topic: o.topic, partition: o.partition, targetTopic: state.targetTopic, fromOffset, toOffset, records: toOffset - fromOffset }
}

interface PartitionState {
  targetTopic: string
  /** Target offsets below this are judged; the first acknowledged offset of this process to begin with. */
  judgedUpTo: bigint
  /** Target offsets the mirror wrote at or above `judgedUpTo`, in acknowledgement order. */
  runs: Run[]
}

/**
 * Counts target offsets the mirror did not write. Invariant: a target offset at or above the first
 * one this process acknowledged in a partition, and below the high watermark read while nothing of
 * the partition was in flight, was written by this process (an acknowledged run) or by someone
 * else: every write of the mirror that reached the log before the high watermark was read has been
 * acknowledged by the time the flow is idle. Offsets are judged once each. Transaction markers take
 * target offsets too, so a flow that writes transactions (exactly-once) does not use it.
 */
export class ForeignWriteDetector {
  readonly #states = new Map<string, PartitionState>()

  /** The target runs of an acknowledged batch of `topic`-`partition`. */
  acknowledged (
    topic: string,
    partition: number,
    targetTopic: string,
    targetRuns: ReadonlyArray<{ readonly targetBaseOffset: bigint, readonly count: number }>
  ): void {
    const key = partitionKey(topic, partition)
    for (const run of targetRuns) {
      if (run.count <= 0) continue
      const from = run.targetBaseOffset
      let state = this.#states.get(key)
      if (state === undefined) this.#states.set(key, (state = { targetTopic, judgedUpTo: from, runs: [] }))
      const to = from + BigInt(run.count)
      if (to > state.judgedUpTo) state.runs.push({ from, to })
    }
  }

  /** Forgets partitions this process no longer handles (another process writes them now). */
  retain (partitions: ReadonlyArray<{ readonly topic: string, readonly partition: number }>): void {
    const kept = new Set(partitions.map(p => partitionKey(p.topic, p.partition)))
    for (const key of this.#states.keys()) if (!kept.has(key)) this.#states.delete(key)
  }

  /** Judges each idle partition's offsets up to its high watermark; returns the stretches the mirror did not write. */
  check (observations: readonly ForeignWriteObservation[]): ForeignRecords[] {
    const found: ForeignRecords[] = []
    for (const o of observations) {
      const state = this.#states.get(partitionKey(o.topic, o.partition))
      const hw = o.targetHighWatermark
      if (state === undefined || !o.idle || hw === undefined || hw <= state.judgedUpTo) continue
      const runs = state.runs.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))
      let at = state.judgedUpTo
      for (const run of runs) {
        if (run.from >= hw) break
        if (run.from > at) found.push(stretch(o, state, at, run.from))
        if (run.to > at) at = run.to
      }
      if (hw > at) found.push(stretch(o, state, at, hw))
      state.judgedUpTo = hw
      state.runs = runs.filter(r => r.to > hw)
    }
    return found
  }
}
