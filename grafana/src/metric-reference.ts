import { LabelNames, Metrics, type MetricDefinition } from '../../src/sidecar/metrics/metric-names.js'

/** Series a metric type exports besides its name: a histogram's buckets, sum and count. */
function seriesText (definition: MetricDefinition): string {
  return definition.type === 'histogram' ? `\`${definition.name}\` (\`_bucket\`, \`_sum\`, \`_count\`)` : `\`${definition.name}\``
}

/** A table cell: pipes escaped, line breaks as spaces. */
function cell (text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ')
}

/**
 * `docs/metrics.md`: every metric of `src/sidecar/metrics/metric-names.ts` (the registry the
 * sidecar registers and the dashboard and alert rules read) with its type, labels and help text,
 * in the registry's order; `test/unit/project/grafana-generated.test.ts` keeps the committed page in step.
 */
export function metricReferencePage (): string {
  const rows = Object.values(Metrics as Record<string, MetricDefinition>).map(definition =>
    `| ${seriesText(definition)} | ${definition.type} | ${definition.labelNames.map(label => `\`${label}\``).join(', ')} | ${cell(definition.help)} |`)
  return [
    '# Metric reference',
    '',
    'Every metric `mirror-sidecar` exports on `/metrics` (Prometheus text format), from the registry in',
    '`src/sidecar/metrics/metric-names.ts`. What they mean together, the dashboard and the alerts:',
    '[metrics-and-alerts.md](metrics-and-alerts.md). Besides these, prom-client\'s default process and',
    'Node.js metrics (`process_*`, `nodejs_*`).',
    '',
    `Labels: \`${LabelNames.TOPIC}\` is always the source topic; with \`metrics.partition.labels\` false the per-partition`,
    `gauges are exported per topic, without \`${LabelNames.PARTITION}\`.`,
    '',
    '| metric | type | labels | meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n')
}
