import type { Metric, Registry } from 'prom-client'
import type { FlowLabels } from '../../ports/pipeline-observer.js'
import { ComputedGauge, type GaugeSample } from './computed-gauge.js'
import { LabelNames as L, Metrics } from './metric-names.js'

/** The retention of each copied source topic of one flow (`SourceRetention.snapshot()`). */
export interface FlowRetention {
  readonly flow: FlowLabels
  readonly topics: ReadonlyArray<{ readonly topic: string, readonly retentionSeconds: number }>
}

/** Registers `kafka_mirror_source_retention_seconds{topic}` in `registry`, computed at scrape time from `retention`. */
export function registerRetentionMetrics (registry: Registry, retention: () => readonly FlowRetention[]): void {
  const d = Metrics.sourceRetention
  registry.registerMetric(
    new ComputedGauge(d.name, d.help, d.labelNames, (into: GaugeSample[]) => {
      for (const { flow, topics } of retention()) {
        for (const { topic, retentionSeconds } of topics) {
          into.push({ labels: { [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target, [L.TOPIC]: topic }, value: retentionSeconds })
        }
      }
    }) as unknown as Metric
  )
}
