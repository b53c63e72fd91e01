/**
 * Runs asynchronous tasks one after the other, in the order they were given.
 *
 * Invariant A: a task starts only after every task given before it has settled, so at most one
 * task runs at a time. Invariant B: `size` counts the tasks given and not yet settled (the one
 * running included), never fewer than run. `idle`, read at any moment, settles once the tasks given
 * until then have settled, and never rejects.
 *
 * A task's failure reaches only the caller of its `run`; the tasks after it run all the same. A
 * task never starts within the call to `run` that gives it (it starts on a later microtask at the
 * earliest), so a caller can note what it queued before the task reads that note.
 */
export class SerialQueue {
  /** Settles when the last task given has settled; never rejects. */
  #tail: Promise<void> = Promise.resolve()
  #unsettled = 0
  #running = 0

  /** Tasks given and not yet settled, the running one included. */
  get size (): number { return this.#unsettled }

  /** Settles once every task given so far has settled (whatever their outcome); never rejects. */
  get idle (): Promise<void> { return this.#tail }

  /** Starts `task` after every task given before it has settled (Invariant A); its result or failure is the returned promise's. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    this.#unsettled++
    const run = this.#tail.then(async () => {
      this.#running++
      try {
        return await task()
      } finally {
        this.#running--
        this.#unsettled--
      }
    })
    // The tail only orders the tasks: a task's failure is its caller's, through `run`.
    this.#tail = run.then(() => undefined, () => undefined)
    return run
  }

  /** Throws an Error naming the first invariant (A, B in the class comment) the state breaks. For tests. */
  checkInvariants (): void {
    if (this.#running > 1) throw new Error(`Invariant A broken: ${this.#running} tasks run at once`)
    if (this.#unsettled < this.#running || this.#unsettled < 0) {
      throw new Error(`Invariant B broken: ${this.#unsettled} tasks counted unsettled while ${this.#running} run`)
    }
  }
}
