/**
 * Runs `task` every `intervalMs`, counted from the end of the previous run (a `setTimeout` armed
 * again once the task settled), so runs never overlap however long one takes. A function for
 * `intervalMs` is asked again before each wait. The timer is
 * `unref()`ed: it never keeps the process alive. A task's rejection is its own business: handle
 * it inside; a rejection that escapes is ignored here. `stop()` is once-only and final.
 */
export class RearmingTimer {
  readonly #intervalMs: number | (() => number)
  readonly #task: () => Promise<unknown>
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor (intervalMs: number | (() => number), task: () => Promise<unknown>) {
    this.#intervalMs = intervalMs
    this.#task = task
  }

  start (): void {
    if (this.#stopped || this.#timer !== undefined) return
    this.#arm()
  }

  #arm (): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      void this.#task()
        .catch(() => { /* the task reports its own failures (log, metric); the next run retries */ })
        .finally(() => this.#arm())
    }, typeof this.#intervalMs === 'function' ? this.#intervalMs() : this.#intervalMs)
    this.#timer.unref()
  }

  stop (): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }
}
