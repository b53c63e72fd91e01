import { Counter, type Registry } from 'prom-client'
import type { DigestObserver } from '../integrity/digest-audit.js'
import type { RangeDigest } from '../../mirror-topics/range-digest.js'
import type { FlowLabels } from '../../ports/pipeline-observer.js'
import { LabelNames as L, Metrics } from './metric-names.js'

/** The digest counters in the sidecar's registry: written, audited records, mismatches (series appear with the first event). */
export class DigestMetrics implements DigestObserver {
  readonly #written: Counter
  readonly #audited: Counter
  readonly #mismatches: Counter

  constructor (registry: Registry) {
    const counter = (d: typeof Metrics.digestsWritten): Counter => new Counter({ name: d.name, help: d.help, labelNames: d.labelNames, registers: [registry] })
    this.#written = counter(Metrics.digestsWritten)
    this.#audited = counter(Metrics.digestAuditRecords)
    this.#mismatches = counter(Metrics.digestMismatches)
  }

  written (flow: FlowLabels, digests: number): void {
    this.#written.inc({ [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target }, digests)
  }

  audited (flow: FlowLabels, topic: string, records: number): void {
    this.#audited.inc({ [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target, [L.TOPIC]: topic }, records)
  }

  mismatch (flow: FlowLabels, digest: RangeDigest): void {
    this.#mismatches.inc({ [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target, [L.TOPIC]: digest.sourceTopic })
  }
}
