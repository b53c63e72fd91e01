/** The value at `fraction` (0-1] of `sorted` (ascending), nearest rank; NaN when empty. */
export function percentile (sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN
}

/** The records sent in one window of the measured phase, and how long they took. */
export interface LatencyWindow {
  /** Where the window starts, seconds after the measured phase began. */
  readonly startSeconds: number
  readonly records: number
  readonly p99Ms: number
  readonly maxMs: number
}

/**
 * Latencies grouped by send time into windows of `windowMs` from `fromMs` (epoch ms, the start of
 * the measured phase): `sentAtMs[i]` is when record i was stamped, `latenciesMs[i]` how long it took.
 * Windows without records are left out; records before `fromMs` are ignored.
 */
export function latencyWindows (sentAtMs: readonly number[], latenciesMs: readonly number[], fromMs: number, windowMs = 1_000): LatencyWindow[] {
  if (sentAtMs.length !== latenciesMs.length) throw new RangeError(`${sentAtMs.length} send times for ${latenciesMs.length} latencies`)
  const byWindow = new Map<number, number[]>()
  for (let i = 0; i < sentAtMs.length; i++) {
    const index = Math.floor((sentAtMs[i]! - fromMs) / windowMs)
    if (index < 0) continue
    let bucket = byWindow.get(index)
    if (bucket === undefined) byWindow.set(index, bucket = [])
    bucket.push(latenciesMs[i]!)
  }
  return [...byWindow.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, values]) => {
      const sorted = values.sort((a, b) => a - b)
      return { startSeconds: (index * windowMs) / 1000, records: sorted.length, p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1)! }
    })
}

/** The `count` windows with the highest maximum latency, worst first. */
export function worstWindows (windows: readonly LatencyWindow[], count = 3): LatencyWindow[] {
  return [...windows].sort((a, b) => b.maxMs - a.maxMs || a.startSeconds - b.startSeconds).slice(0, count)
}

/** One line for the log: `at 3 s max 410 ms (p99 380 ms, 20000 records); at ...`. */
export function describeWindows (windows: readonly LatencyWindow[]): string {
  if (windows.length === 0) return 'no records'
  return windows.map(w => `at ${w.startSeconds} s max ${Math.round(w.maxMs)} ms (p99 ${Math.round(w.p99Ms)} ms, ${w.records} records)`).join('; ')
}

/** A mirror's p99 as a multiple of the direct producer's p99 in the same run; NaN when either is missing or the floor is 0. */
export function p99Ratio (mirrorP99Ms: number, directP99Ms: number | undefined): number {
  if (directP99Ms === undefined || !Number.isFinite(mirrorP99Ms) || !Number.isFinite(directP99Ms) || directP99Ms <= 0) return Number.NaN
  return mirrorP99Ms / directP99Ms
}
