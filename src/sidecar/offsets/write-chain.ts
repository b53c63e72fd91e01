/**
 * The writes of one offset-sync writer, one after the other, in the order asked for.
 * `run(write)` starts `write` once every write asked for before it has settled (their failures
 * are their own callers'), and its promise is the caller's.
 * `soon(write, failed)` asks for a write nobody waits for: while one such write is waiting to
 * start, further calls join it. A write takes what it writes when it starts, so everything
 * acknowledged while the write before it is in flight goes into one request: writes follow the
 * target's acknowledgements as fast as the target takes them, batched (one write in flight, not
 * one per record). `failed` hears a failure of a `soon` write (what it held stays to be written).
 * `settled` is the last write asked for (what a stop waits for).
 */
export class WriteChain {
  #last: Promise<void> = Promise.resolve()
  #waiting = false

  get settled (): Promise<void> { return this.#last }

  run (write: () => Promise<void>): Promise<void> {
    const run = this.#last.catch(() => { /* the write before failed to its own caller; this one only runs after it */ }).then(write)
    this.#last = run
    return run
  }

  soon (write: () => Promise<void>, failed: (error: unknown) => void): void {
    if (this.#waiting) return
    this.#waiting = true
    this.run(async () => {
      this.#waiting = false
      await write()
    }).catch(failed)
  }
}
