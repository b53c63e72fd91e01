import { Counter, type Registry } from 'prom-client'
import type { ForeignRecords } from '../integrity/foreign-write-detector.js'
import type { LossFinding, LossObserver } from '../integrity/loss-detector.js'
import type { FlowLabels } from '../../ports/pipeline-observer.js'
import { LabelNames as L, Metrics } from './metric-names.js'

/**
 * `kafka_mirror_lost_records_total{topic, reason}` and `kafka_mirror_foreign_records_total{topic}` in the
 * sidecar's registry (series appear with the first loss, the first foreign record).
 */
export class LossMetrics implements LossObserver {
  readonly #lost: Counter
  readonly #foreign: Counter

  constructor (registry: Registry) {
    const d = Metrics.lostRecords
    this.#lost = new Counter({ name: d.name, help: d.help, labelNames: d.labelNames, registers: [registry] })
    const f = Metrics.foreignRecords
    this.#foreign = new Counter({ name: f.name, help: f.help, labelNames: f.labelNames, registers: [registry] })
  }

  foreign (flow: FlowLabels, records: ForeignRecords): void {
    this.#foreign.inc({ [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target, [L.TOPIC]: records.topic }, Number(records.records))
  }

  lost (flow: FlowLabels, finding: LossFinding): void {
    this.#lost.inc(
      { [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target, [L.TOPIC]: finding.topic, [L.REASON]: finding.reason },
      Number(finding.records)
    )
  }
}
