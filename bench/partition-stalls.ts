/**
 * One successful poll of a mirrored topic's end offsets on both clusters: the source's high
 * watermark and the target's end (last stable offset when read with read_committed) of every
 * partition, by partition number.
 */
export interface PartitionPoll {
  /** `performance.now()` when the target's answer arrived, ms. */
  readonly atMs: number
  readonly source: readonly number[]
  readonly target: readonly number[]
}

/**
 * A stretch in which one partition's copy did not advance while its source held records the
 * target did not: from the last poll that saw the target's end grow (or the partition caught
 * up) to the next poll that saw it grow. Its resolution is the poll spacing: a stall measured as
 * S lasted between S minus one poll gap and S.
 */
export interface PartitionStall {
  readonly partition: number
  readonly fromMs: number
  readonly toMs: number
  readonly seconds: number
  /** The last poll still saw no progress: the stall had not ended when polling stopped. */
  readonly open: boolean
}

/**
 * Every stall of every partition over `polls` (in poll order), short ones included: for a
 * partition copying steadily each gap between two polls is one. Invariants: a partition whose
 * target end equals or passes its source end at a poll has nothing to copy, so no stall runs
 * through that poll; a target end that reads lower than one seen before (a poll answered by a
 * lagging replica) is no progress; stalls of one partition never overlap.
 */
export function partitionStalls (polls: readonly PartitionPoll[], partitions: number): PartitionStall[] {
  const stalls: PartitionStall[] = []
  for (let partition = 0; partition < partitions; partition++) {
    let highest: number | undefined
    let anchorMs = 0
    let behind = false
    let lastMs = 0
    for (const poll of polls) {
      const target = poll.target[partition] ?? 0
      const source = poll.source[partition] ?? 0
      lastMs = poll.atMs
      if (highest === undefined) {
        highest = target
        anchorMs = poll.atMs
        behind = source > target
        continue
      }
      if (target > highest) {
        stalls.push({ partition, fromMs: anchorMs, toMs: poll.atMs, seconds: (poll.atMs - anchorMs) / 1000, open: false })
        highest = target
        anchorMs = poll.atMs
      } else if (source <= highest) {
        // Caught up: a stall can only begin after this poll.
        anchorMs = poll.atMs
      }
      behind = source > highest
    }
    if (highest !== undefined && behind && lastMs > anchorMs) {
      stalls.push({ partition, fromMs: anchorMs, toMs: lastMs, seconds: (lastMs - anchorMs) / 1000, open: true })
    }
  }
  return stalls
}

/** A span of the run a stall is charged to: the steady copy before any restart, or one restart up to the next. */
export interface StallWindow {
  readonly label: string
  readonly startMs: number
  readonly endMs: number
}

/**
 * The windows a run's stalls are charged to: `steady` from `steadyAtMs` to the first signal,
 * then one per signal up to the next signal (the last up to `endMs`), each opened `leadMs`
 * before its signal: a partition's last poll with progress comes up to one poll gap before the
 * signal that stalled it. Signals in time order.
 */
export function stallWindows (
  steadyAtMs: number,
  signals: ReadonlyArray<{ readonly label: string, readonly atMs: number }>,
  endMs: number,
  leadMs: number
): StallWindow[] {
  const starts = signals.map(signal => signal.atMs - leadMs)
  const windows: StallWindow[] = [{ label: 'steady', startMs: steadyAtMs, endMs: starts[0] ?? endMs }]
  signals.forEach((signal, i) => windows.push({ label: signal.label, startMs: starts[i]!, endMs: starts[i + 1] ?? endMs }))
  return windows
}

/** What the stalls charged to one window add up to. */
export interface WindowStalls {
  readonly label: string
  readonly seconds: number
  /** Partitions with at least one stall longer than the threshold starting in the window. */
  readonly partitionsStalled: number
  /** Partitions whose stall longer than the threshold started before the window and was still running when it opened. */
  readonly partitionsStalledBefore: number
  /** The longest stall of any partition starting in the window, in seconds; 0 with none. */
  readonly longestStallSeconds: number
  /** Of those stalls, the ones still open when polling stopped. */
  readonly openStalls: number
  /** The longest gap between two polls in the window: the resolution of its stalls. */
  readonly longestPollGapSeconds: number
}

/**
 * Charges every stall to the window its start (`fromMs`) falls in; stalls starting outside every
 * window are left out. Invariants: a partition counts at most once per window, however many
 * stalls it had there; a stall running through a window's start counts in that window's
 * `partitionsStalledBefore`, never in its `partitionsStalled`.
 */
export function windowStalls (
  windows: readonly StallWindow[],
  stalls: readonly PartitionStall[],
  polls: readonly PartitionPoll[],
  thresholdSeconds: number
): WindowStalls[] {
  return windows.map(window => {
    const inside = stalls.filter(stall => stall.fromMs >= window.startMs && stall.fromMs < window.endMs)
    const stalled = new Set(inside.filter(stall => stall.seconds > thresholdSeconds).map(stall => stall.partition))
    const before = new Set(
      stalls.filter(stall => stall.fromMs < window.startMs && stall.toMs > window.startMs && stall.seconds > thresholdSeconds).map(stall => stall.partition)
    )
    let longestPollGapMs = 0
    for (let i = 1; i < polls.length; i++) {
      const [before, after] = [polls[i - 1]!, polls[i]!]
      if (after.atMs > window.startMs && before.atMs < window.endMs) longestPollGapMs = Math.max(longestPollGapMs, after.atMs - before.atMs)
    }
    return {
      label: window.label,
      seconds: (window.endMs - window.startMs) / 1000,
      partitionsStalled: stalled.size,
      partitionsStalledBefore: before.size,
      longestStallSeconds: inside.reduce((longest, stall) => Math.max(longest, stall.seconds), 0),
      openStalls: inside.filter(stall => stall.open && stall.seconds > thresholdSeconds).length,
      longestPollGapSeconds: longestPollGapMs / 1000,
    }
  })
}

/**
 * The window in which a target record at `offset` of `partition` was written: the window holding
 * the first poll whose target end passed the offset; undefined when no poll did or the poll
 * falls in no window.
 */
export function windowOfTargetOffset (
  windows: readonly StallWindow[],
  polls: readonly PartitionPoll[],
  partition: number,
  offset: number
): string | undefined {
  const seen = polls.find(poll => (poll.target[partition] ?? 0) > offset)
  if (seen === undefined) return undefined
  return windows.find(window => seen.atMs >= window.startMs && seen.atMs < window.endMs)?.label
}

/** The longest any partition has waited without progress at the last poll (0 when all are caught up or advancing), ms. */
export function longestOpenStallMs (polls: readonly PartitionPoll[], partitions: number): number {
  return partitionStalls(polls, partitions).filter(stall => stall.open).reduce((longest, stall) => Math.max(longest, stall.toMs - stall.fromMs), 0)
}
