/**
 * A token bucket over fetched bytes (`throughput.limit.bytes`): `limitBytesPerSecond` tokens a
 * second, at most one second's worth saved up (the burst). `reserve(bytes)` takes the tokens at
 * once, going into debt when there are not enough, and says how long the caller must wait before
 * it hands the bytes on; later reservations wait behind that debt, in the order they were made.
 * So whatever is handed on by time t, counted from the bucket's creation, is at most
 * `limitBytesPerSecond * (1 + t / 1000 ms)` bytes, however large one reservation is, and nothing
 * is ever refused: a batch larger than the burst only waits longer.
 *
 * Pure logic over an injected clock (milliseconds); the caller does the waiting.
 */
export class FetchThrottle {
  readonly limitBytesPerSecond: number
  readonly burstBytes: number
  readonly #nowMs: () => number
  /** Tokens at `#atMs`; negative while reserved bytes wait for their turn. */
  #tokens: number
  #atMs: number
  /** Until when some reservation is waiting (ms on the clock): throttled time is the union of the waits. */
  #throttledUntilMs = Number.NEGATIVE_INFINITY

  constructor (limitBytesPerSecond: number, nowMs: () => number = Date.now) {
    if (!Number.isFinite(limitBytesPerSecond) || limitBytesPerSecond <= 0) {
      throw new RangeError(`throughput limit must be a positive number of bytes per second, got ${limitBytesPerSecond}`)
    }
    this.limitBytesPerSecond = limitBytesPerSecond
    this.burstBytes = limitBytesPerSecond
    this.#nowMs = nowMs
    this.#atMs = nowMs()
    this.#tokens = this.burstBytes
  }

  /**
   * Takes `bytes` tokens now. `waitMs`: how long to wait before handing the bytes on (0 when the
   * bucket held enough); `throttledMs`: the part of that wait no earlier reservation already
   * covers, so summing it over every call gives the time anything was held back.
   */
  reserve (bytes: number): { readonly waitMs: number, readonly throttledMs: number } {
    if (!(bytes > 0)) return { waitMs: 0, throttledMs: 0 }
    const nowMs = this.#refill()
    this.#tokens -= bytes
    if (this.#tokens >= 0) return { waitMs: 0, throttledMs: 0 }
    const waitMs = (-this.#tokens / this.limitBytesPerSecond) * 1000
    const untilMs = nowMs + waitMs
    const throttledMs = untilMs - Math.max(nowMs, this.#throttledUntilMs)
    this.#throttledUntilMs = Math.max(this.#throttledUntilMs, untilMs)
    return { waitMs, throttledMs: Math.max(0, throttledMs) }
  }

  /** Tokens available now (negative: bytes reserved and still waiting). */
  get tokens (): number {
    this.#refill()
    return this.#tokens
  }

  #refill (): number {
    const nowMs = this.#nowMs()
    const elapsedMs = nowMs - this.#atMs
    // A clock that stepped back adds nothing and takes nothing.
    if (elapsedMs > 0) {
      this.#tokens = Math.min(this.burstBytes, this.#tokens + (elapsedMs / 1000) * this.limitBytesPerSecond)
      this.#atMs = nowMs
    }
    return nowMs
  }
}
