/**
 * A Prometheus histogram fed with many observations at once, for the hot path: one labelled child
 * is looked up once per batch and `observe` only touches a preallocated array (no allocation per
 * observation, unlike prom-client's `Histogram.observe`). Implements the shape prom-client's
 * `Registry` reads (`name`, `help`, `type`, `get()`), so it exports like any other metric.
 */
export class BatchHistogram<L extends string> {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #children = new Map<string, HistogramChild>()

  constructor (
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    readonly upperBounds: readonly number[]
  ) {}

  /** The child for these label values, created on first use; keep it to skip the lookup. */
  child (labels: Readonly<Record<L, string>>): HistogramChild {
    const key = this.labelNames.map(name => labels[name]).join('\u0000')
    let child = this.#children.get(key)
    if (child === undefined) {
      child = new HistogramChild(this.upperBounds, { ...labels })
      this.#children.set(key, child)
    }
    return child
  }

  /** Drops every child (and its counts). */
  reset (): void { this.#children.clear() }

  async get (): Promise<{ name: string, help: string, type: 'histogram', aggregator: string, values: HistogramSample[] }> {
    const values: HistogramSample[] = []
    for (const child of this.#children.values()) child.samples(this.name, values)
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}

export interface HistogramSample {
  readonly metricName: string
  readonly labels: Record<string, string | number>
  readonly value: number
}

/** Counts of one label combination. Values below 0 count as 0 (clock skew between clusters). */
export class HistogramChild {
  readonly #upperBounds: readonly number[]
  readonly #counts: Float64Array
  #sum = 0
  #count = 0

  constructor (upperBounds: readonly number[], readonly labels: Readonly<Record<string, string>>) {
    this.#upperBounds = upperBounds
    this.#counts = new Float64Array(upperBounds.length + 1)
  }

  /** Counts `value` `times` times (default once). */
  observe (value: number, times = 1): void {
    if (!Number.isFinite(value)) return
    if (value < 0) value = 0
    const bounds = this.#upperBounds
    let i = 0
    while (i < bounds.length && value > (bounds[i] as number)) i++
    this.#counts[i] = (this.#counts[i] as number) + times
    this.#sum += value * times
    this.#count += times
  }

  get count (): number { return this.#count }
  get sum (): number { return this.#sum }

  samples (name: string, into: HistogramSample[]): void {
    let cumulative = 0
    for (let i = 0; i <= this.#upperBounds.length; i++) {
      cumulative += this.#counts[i] as number
      const le = i < this.#upperBounds.length ? this.#upperBounds[i] as number : '+Inf'
      into.push({ metricName: `${name}_bucket`, labels: { ...this.labels, le }, value: cumulative })
    }
    into.push({ metricName: `${name}_sum`, labels: this.labels, value: this.#sum })
    into.push({ metricName: `${name}_count`, labels: this.labels, value: this.#count })
  }
}
