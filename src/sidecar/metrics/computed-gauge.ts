import { metricChunks, type LabelTexts } from './prometheus-text.js'

/** One sample of a computed gauge: `labels`, then `extra` as the last label when set. */
export interface GaugeSample {
  /** May be shared by many samples (all series of one partition share one object within a scrape). */
  readonly labels: Readonly<Record<string, string>>
  /** One more label after `labels` (the status of a partition status series), without a labels object per sample. */
  readonly extra?: { readonly name: string, readonly value: string }
  readonly value: number
}

/**
 * A gauge whose samples are computed at scrape time by `compute` (point-in-time views such as
 * lag per partition). Unlike prom-client's `Gauge` with `collect()` + `set()`, it does not hash
 * labels per sample, which matters at thousands of partitions. Implements the shape prom-client's
 * `Registry` reads (`name`, `help`, `type`, `get()`); `text` writes the same series without a
 * labels object per sample, formatting each shared labels object once per scrape.
 */
export class ComputedGauge {
  readonly type = 'gauge'
  readonly aggregator = 'sum'

  constructor (
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly compute: (into: GaugeSample[]) => void
  ) {}

  async get (): Promise<{
    name: string
    help: string
    type: 'gauge'
    aggregator: string
    values: Array<{ labels: Readonly<Record<string, string>>, value: number }>
  }> {
    const values: GaugeSample[] = []
    this.compute(values)
    const samples = values.map(sample =>
      sample.extra === undefined ? sample : { labels: { ...sample.labels, [sample.extra.name]: sample.extra.value }, value: sample.value }
    )
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: samples }
  }

  /** This gauge in the text formats, in pieces (`metricChunks`), labels objects formatted once per `labelTexts`. */
  chunks (openMetrics: boolean, labelTexts: LabelTexts, emit: (chunk: string) => void): void {
    const values: GaugeSample[] = []
    this.compute(values)
    metricChunks({ name: this.name, help: this.help, type: this.type, values }, openMetrics, labelTexts, emit)
  }
}
