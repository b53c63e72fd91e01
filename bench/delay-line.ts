/**
 * Chunks of one direction of a connection, each held back until `delayMs` after it arrived and
 * released in arrival order (a chunk is never released before an older one, nor early). Pure:
 * the caller passes the clock, so the latency proxy and the tests drive it the same way.
 */
export class DelayLine<T> {
  readonly #items: Array<{ readonly dueAtMs: number, readonly item: T, readonly bytes: number }> = []
  #head = 0
  #queuedBytes = 0

  constructor (readonly delayMs: number) {
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`delayMs ${delayMs}: expected a number >= 0`)
  }

  /** Bytes held and not yet released. */
  get queuedBytes (): number { return this.#queuedBytes }

  get size (): number { return this.#items.length - this.#head }

  /** When the oldest held chunk is due (ms on the caller's clock); undefined when nothing is held. */
  get nextDueAtMs (): number | undefined { return this.#items[this.#head]?.dueAtMs }

  /** Holds `item` (of `bytes` bytes) that arrived at `nowMs`. */
  push (item: T, bytes: number, nowMs: number): void {
    // Arrival times from a monotonic clock never go back; if a caller's did, keep the order anyway.
    const last = this.#items[this.#items.length - 1]
    const dueAtMs = Math.max(nowMs + this.delayMs, this.size > 0 && last !== undefined ? last.dueAtMs : Number.NEGATIVE_INFINITY)
    this.#items.push({ dueAtMs, item, bytes })
    this.#queuedBytes += bytes
  }

  /** Removes and returns, oldest first, every chunk due at or before `nowMs`. */
  takeDue (nowMs: number): T[] {
    const due: T[] = []
    while (this.#head < this.#items.length && this.#items[this.#head]!.dueAtMs <= nowMs) {
      const entry = this.#items[this.#head]!
      due.push(entry.item)
      this.#queuedBytes -= entry.bytes
      this.#head++
    }
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items.splice(0, this.#head)
      this.#head = 0
    }
    return due
  }
}
