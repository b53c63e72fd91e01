/** One successful poll of the target's end offsets: when the answer arrived and the records it added up to. */
export interface ProgressPoll {
  /** `performance.now()` when the poll's answer arrived, ms. */
  readonly atMs: number
  readonly records: number
}

/** The longest interval without progress on the target, between two polls that saw the count grow. */
export interface Stall {
  readonly seconds: number
  /** When the last poll before the stall saw the count grow, ms (same clock as the polls). */
  readonly fromMs: number
  /** When the first poll after it saw the count grow again, ms. */
  readonly toMs: number
}

/**
 * The longest stall of a copy: among the polls that saw more records than every earlier poll
 * (the first poll with records on the target included), the longest gap between two in a row.
 * Polls before the first record and polls that saw no growth only extend a gap. Its resolution
 * is the poll spacing: a stall measured as S lasted between S minus one poll gap and S.
 * Undefined with fewer than two polls that saw growth.
 */
export function longestStall (polls: readonly ProgressPoll[]): Stall | undefined {
  let previous: ProgressPoll | undefined
  let best: Stall | undefined
  let highest = 0
  for (const poll of polls) {
    if (poll.records <= highest) continue
    highest = poll.records
    if (previous !== undefined) {
      const seconds = (poll.atMs - previous.atMs) / 1000
      if (best === undefined || seconds > best.seconds) best = { seconds, fromMs: previous.atMs, toMs: poll.atMs }
    }
    previous = poll
  }
  return best
}

/** The longest time between two polls in a row, in seconds: the resolution of `longestStall` over `polls`; 0 with fewer than two. */
export function longestPollGapSeconds (polls: readonly ProgressPoll[]): number {
  let longest = 0
  for (let i = 1; i < polls.length; i++) longest = Math.max(longest, (polls[i]!.atMs - polls[i - 1]!.atMs) / 1000)
  return longest
}
