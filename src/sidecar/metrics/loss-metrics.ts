import { Counter, type Registry } from 'prom-client'
import type { LossFinding, LossObserver } from '../integrity/loss-detector.js'
import type { FlowLabels } from '../../ports/pipeline-observer.js'
import { LabelNames as L, Metrics } from './metric-names.js'

/** `kafka_mirror_lost_records_total{topic, reason}` in the sidecar's registry (series appear with the first loss). */
export class LossMetrics implements LossObserver {
  readonly #lost: Counter

  constructor (registry: Registry) {
    const d = Metrics.lostRecords
    this.#lost = new Counter({ name: d.name, help: d.help, labelNames: d.labelNames, registers: [registry] })
  }

  lost (flow: FlowLabels, finding: LossFinding): void {
    this.#lost.inc(
      { [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target, [L.TOPIC]: finding.topic, [L.REASON]: finding.reason },
      Number(finding.records)
    )
  }
}
