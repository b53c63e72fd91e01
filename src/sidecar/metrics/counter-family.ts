/**
 * A Prometheus counter for the hot path: look a labelled child up once, keep it, and `inc` only
 * adds to a number (prom-client's `Counter.inc` hashes the labels on every call). Implements the
 * shape prom-client's `Registry` reads (`name`, `help`, `type`, `get()`).
 */
export class CounterFamily<L extends string> {
  readonly type = 'counter'
  readonly aggregator = 'sum'
  readonly #children = new Map<string, CounterChild>()

  constructor (readonly name: string, readonly help: string, readonly labelNames: readonly L[]) {}

  /** The child for these label values, created (at 0, so it is exported) on first use. */
  child (labels: Readonly<Record<L, string>>): CounterChild {
    const key = this.labelNames.map(name => labels[name]).join('\u0000')
    let child = this.#children.get(key)
    if (child === undefined) {
      child = new CounterChild({ ...labels })
      this.#children.set(key, child)
    }
    return child
  }

  reset (): void { this.#children.clear() }

  async get (): Promise<{ name: string, help: string, type: 'counter', aggregator: string, values: Array<{ labels: Record<string, string>, value: number }> }> {
    const values = [...this.#children.values()].map(child => ({ labels: child.labels, value: child.value }))
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}

/** One label combination of a counter; only ever goes up. */
export class CounterChild {
  #value = 0

  constructor (readonly labels: Readonly<Record<string, string>>) {}

  /** Adds `amount` (default 1); negative or non-finite amounts are ignored. */
  inc (amount = 1): void {
    if (amount > 0 && Number.isFinite(amount)) this.#value += amount
  }

  get value (): number { return this.#value }
}
