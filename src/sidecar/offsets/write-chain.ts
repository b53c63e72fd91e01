import { SerialQueue } from '../../shared/serial-queue.js'

/**
 * The writes of one offset-sync writer, one after the other, in the order asked for.
 * `run(write)` starts `write` once every write asked for before it has settled (their failures
 * are their own callers'), and its promise is the caller's.
 * `soon(write, failed)` asks for a write nobody waits for: while one such write is waiting to
 * start, further calls join it. A write takes what it writes when it starts, so everything
 * acknowledged while the write before it is in flight goes into one request: writes follow the
 * target's acknowledgements, batched (one write in flight, not one per record), and start at
 * least `minIntervalMs` apart. `failed` hears a failure of a `soon` write (what it held stays to
 * be written). `settled` settles once every write asked for has settled (what a stop waits for, after `close()`).
 */
export class WriteChain {
  readonly #writes = new SerialQueue()
  #waiting = false
  #lastSoonStartMs = Number.NEGATIVE_INFINITY
  #timer: NodeJS.Timeout | undefined
  #closed = false

  /** `minIntervalMs`: least time between the starts of two `soon` writes (what bounds their rate while records flow). */
  constructor (readonly minIntervalMs: number) {}

  get settled (): Promise<void> { return this.#writes.idle }

  run (write: () => Promise<void>): Promise<void> {
    return this.#writes.run(write)
  }

  soon (write: () => Promise<void>, failed: (error: unknown) => void): void {
    if (this.#waiting || this.#closed) return
    this.#waiting = true
    const start = (): void => {
      this.#timer = undefined
      this.run(async () => {
        this.#waiting = false
        this.#lastSoonStartMs = performance.now()
        await write()
      }).catch(failed)
    }
    // Outside the chain: a `run` asked for meanwhile (a commit's flush) is not held up, and takes what this write would have.
    // The wait is measured again when the timer fires: a timer reads the event loop's cached clock and can fire a
    // millisecond or two before `performance.now()` has moved the full interval.
    const startWhenDue = (): void => {
      this.#timer = undefined
      const waitMs = this.#lastSoonStartMs + this.minIntervalMs - performance.now()
      if (waitMs > 0) this.#timer = setTimeout(startWhenDue, Math.ceil(waitMs))
      else start()
    }
    startWhenDue()
  }

  /** No `soon` write starts from now on (one waiting for its interval is dropped); `run` still runs. Before a stop. */
  close (): void {
    this.#closed = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
