import type { PartitionStatus } from './metric-names.js'

/** One commit of one partition as the evaluator sees it. */
export interface CommitPoint {
  /** The committed offset (the next offset to mirror). */
  readonly offset: bigint
  /** Lag in records when committed (high watermark minus `offset`). */
  readonly lagRecords: bigint
  /** When the commit happened (ms since epoch). */
  readonly atMs: number
}

/**
 * Burrow's per-partition evaluation over a window of recent commits, oldest first.
 * Pure: same inputs, same status. Rules, first match wins:
 * - fewer than 2 commits, no lag now, or some commit in the window had zero lag: `ok`;
 * - an offset went backwards within the window: `rewind`;
 * - no commit for longer than the window spans (now - last > last - first): `stop`;
 * - the offset never moved while there was lag: `stall`;
 * - offsets moved but lag never decreased: `warn`;
 * - otherwise `ok`.
 */
export function evaluatePartitionStatus (window: readonly CommitPoint[], currentLagRecords: bigint, nowMs: number): PartitionStatus {
  const first = window[0]
  const last = window[window.length - 1]
  if (first === undefined || last === undefined || window.length < 2 || currentLagRecords <= 0n) return 'ok'
  if (window.some(point => point.lagRecords <= 0n)) return 'ok'
  let rewound = false
  let moved = false
  let lagDecreased = false
  for (let i = 1; i < window.length; i++) {
    const previous = window[i - 1] as CommitPoint
    const current = window[i] as CommitPoint
    if (current.offset < previous.offset) rewound = true
    if (current.offset !== previous.offset) moved = true
    if (current.lagRecords < previous.lagRecords) lagDecreased = true
  }
  if (rewound) return 'rewind'
  if (nowMs - last.atMs > last.atMs - first.atMs) return 'stop'
  if (!moved) return 'stall'
  if (!lagDecreased) return 'warn'
  return 'ok'
}

/** Fixed-size window of the most recent commits of one partition. */
export class CommitWindow {
  readonly #points: CommitPoint[] = []

  /** @param size commits kept; Burrow's default is 10. */
  constructor (readonly size = 10) {}

  add (point: CommitPoint): void {
    this.#points.push(point)
    if (this.#points.length > this.size) this.#points.shift()
  }

  get points (): readonly CommitPoint[] { return this.#points }
}
