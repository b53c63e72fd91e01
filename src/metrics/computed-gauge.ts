/** One sample of a computed gauge. */
export interface GaugeSample {
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/**
 * A gauge whose samples are computed at scrape time by `compute` (point-in-time views such as
 * lag per partition). Unlike prom-client's `Gauge` with `collect()` + `set()`, it does not hash
 * labels per sample, which matters at thousands of partitions. Implements the shape prom-client's
 * `Registry` reads (`name`, `help`, `type`, `get()`).
 */
export class ComputedGauge {
  readonly type = 'gauge'
  readonly aggregator = 'sum'

  constructor (
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly compute: (into: GaugeSample[]) => void,
  ) {}

  async get (): Promise<{ name: string, help: string, type: 'gauge', aggregator: string, values: GaugeSample[] }> {
    const values: GaugeSample[] = []
    this.compute(values)
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}
