/**
 * Whether the target is far away: the shortest of the last `window` successful produce round
 * trips is at least `longMs`. The shortest, not the mean: a busy broker makes requests slow for a
 * while, distance makes every one of them slow (the floor a congestion controller such as BBR
 * takes for the propagation delay). In an lz4 tuned copy on loopback, all cores busy, the shortest
 * of 16 stayed at 3-16 ms; 25 ms each way makes it at least 50.
 */
export class LinkRoundTrip {
  readonly #samples: number[] = []
  #next = 0
  #long = false
  #waiters: Array<() => void> = []

  constructor (readonly longMs = 40, readonly window = 16) {}

  /** A produce request the target answered took `ms`. */
  record (ms: number): void {
    if (this.#samples.length < this.window) this.#samples.push(ms)
    else this.#samples[this.#next] = ms
    this.#next = (this.#next + 1) % this.window
    const long = this.#samples.length === this.window && Math.min(...this.#samples) >= this.longMs
    if (long === this.#long) return
    this.#long = long
    if (long) for (const wake of this.#waiters.splice(0)) wake()
  }

  get long (): boolean { return this.#long }

  /** Resolves once the link is long (at once when it is now). */
  whenLong (): Promise<void> {
    if (this.#long) return Promise.resolve()
    return new Promise(resolve => this.#waiters.push(resolve))
  }
}
