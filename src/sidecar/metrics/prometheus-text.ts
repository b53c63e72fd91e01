/** One sample as prom-client's `get()` returns it (`metricName` for histogram buckets, sums and counts). */
export interface TextSample {
  readonly metricName?: string
  readonly labels?: Readonly<Record<string, string | number>>
  /** One more label after `labels` (see `GaugeSample.extra`). */
  readonly extra?: { readonly name: string, readonly value: string }
  readonly value: number
}

/** The formatted labels (`a="x",b="y"`) of labels objects met before in the same scrape. */
export type LabelTexts = WeakMap<object, string>

/** What a metric's `get()` returns, as far as the text formats read it. */
export interface TextMetric {
  readonly name: string
  readonly help: string
  readonly type: string
  readonly values: readonly TextSample[]
}

const NEEDS_ESCAPE = /[\\\n"]/

function escapeString (text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

function escapeLabelValue (value: string | number): string | number {
  // Most label values (topics, partitions, flow names) need no escaping: skip the three replaces.
  if (typeof value !== 'string' || !NEEDS_ESCAPE.test(value)) return value
  return escapeString(value).replace(/"/g, '\\"')
}

function valueText (value: number): string {
  if (Number.isNaN(value)) return 'Nan'
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf'
  return `${value}`
}

/**
 * Lines per piece `metricChunks` hands on: some 60 KB of text, under V8's largest young-generation
 * object (128 KiB), so a scrape's text is short-lived garbage the young collector frees, never a
 * large object that waits for a full collection.
 */
export const CHUNK_SAMPLES = 500

/**
 * One metric in Prometheus text format 0.0.4 (or, with `openMetrics`, in OpenMetrics 1.0: a counter
 * named without `_total`, its samples with it), byte for byte what prom-client 15's `Registry` writes for a
 * metric without default labels, shared labels or exemplars (the sidecar uses none). prom-client
 * formats each sample through `Object.entries`, arrays, spreads and three regex replaces per
 * label value: at 10,000 partitions (86,000 series) a scrape took 0.5-0.9 s and about 70 MiB of
 * short-lived heap. This formats each labels object once per scrape (`labelTexts`:
 * the series of one partition share one) and hands the text on in pieces of `CHUNK_SAMPLES`
 * lines (`emit`), so a scrape can be written out as it is formatted.
 */
export function metricChunks (metric: TextMetric, openMetrics: boolean, labelTexts: LabelTexts | undefined, emit: (chunk: string) => void): void {
  const totalSuffix = openMetrics && metric.type === 'counter'
  // OpenMetrics names a counter without `_total`, its samples with it.
  const name = escapeString(totalSuffix && metric.name.endsWith('_total') ? metric.name.slice(0, -'_total'.length) : metric.name)
  // The pieces of some lines in one array, joined once per chunk: each chunk comes out flat (a string built by
  // `+=` or template literals per line is a tree of pieces until joined, some 130 bytes a line).
  let pieces: string[] = [`# HELP ${name} ${escapeString(metric.help)}\n# TYPE ${name} ${metric.type}`]
  let lines = 0
  for (const sample of metric.values) {
    pieces.push('\n', totalSuffix ? `${sample.metricName ?? name}_total` : sample.metricName ?? name)
    const labels = sample.labels
    let text = ''
    if (labels !== undefined) {
      const known = labelTexts?.get(labels)
      if (known !== undefined) {
        text = known
      } else {
        const parts: string[] = []
        for (const key of Object.keys(labels)) parts.push(`${key}="${escapeLabelValue(labels[key] as string | number)}"`)
        text = parts.join(',')
        labelTexts?.set(labels, text)
      }
    }
    const extra = sample.extra === undefined ? '' : `${sample.extra.name}="${escapeLabelValue(sample.extra.value)}"`
    if (text !== '' || extra !== '') pieces.push('{', text, text !== '' && extra !== '' ? ',' : '', extra, '}')
    pieces.push(' ', valueText(sample.value))
    if (++lines === CHUNK_SAMPLES) {
      emit(pieces.join(''))
      pieces = []
      lines = 0
    }
  }
  if (pieces.length > 0) emit(pieces.join(''))
}

/** `metricChunks` as one string. */
export function metricText (metric: TextMetric, openMetrics: boolean, labelTexts?: LabelTexts): string {
  const chunks: string[] = []
  metricChunks(metric, openMetrics, labelTexts, chunk => { chunks.push(chunk) })
  return chunks.join('')
}
