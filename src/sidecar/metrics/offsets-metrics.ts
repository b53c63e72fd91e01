import { Counter, type Metric, type Registry } from 'prom-client'
import type { OffsetsObserver, TranslationFailure } from '../offsets/offsets-observer.js'
import type { FlowLabels } from '../../ports/pipeline-observer.js'
import { ComputedGauge, type GaugeSample } from './computed-gauge.js'
import { LabelNames as L, Metrics, type MetricDefinition } from './metric-names.js'

/** When each consumer group's last checkpoint was written, per flow (`GroupOffsetSync.snapshot()`). */
export interface CheckpointTimes {
  readonly flow: FlowLabels
  readonly groups: ReadonlyArray<{ readonly group: string, readonly lastCheckpointMs: number }>
}

function labels (flow: FlowLabels): Record<string, string> {
  return { [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target }
}

/**
 * Metrics of the offset-sync writer and the group offset sync, in the sidecar's registry:
 * counters fed through `OffsetsObserver` (off the hot path), and the checkpoint age per group
 * computed at scrape time.
 */
export class OffsetsMetrics implements OffsetsObserver {
  readonly #syncsWritten: Counter
  readonly #syncsPruned: Counter
  readonly #oppositeMirrorSkipped: Counter
  readonly #syncFailures: Counter
  readonly #checkpoints: Counter
  readonly #groupsSynced: Counter
  readonly #groupsSkipped: Counter
  readonly #translationFailures: Counter

  constructor (registry: Registry, checkpointTimes: () => readonly CheckpointTimes[], nowMs: () => number = Date.now) {
    const counter = (definition: MetricDefinition): Counter =>
      new Counter({ name: definition.name, help: definition.help, labelNames: definition.labelNames, registers: [registry] })
    this.#syncsWritten = counter(Metrics.offsetSyncsWritten)
    this.#syncsPruned = counter(Metrics.offsetSyncsPruned)
    this.#oppositeMirrorSkipped = counter(Metrics.oppositeMirrorSkipped)
    this.#syncFailures = counter(Metrics.offsetSyncFailures)
    this.#checkpoints = counter(Metrics.checkpointsWritten)
    this.#groupsSynced = counter(Metrics.groupOffsetsSynced)
    this.#groupsSkipped = counter(Metrics.groupSyncSkipped)
    this.#translationFailures = counter(Metrics.translationFailures)
    registry.registerMetric(
      new ComputedGauge(Metrics.checkpointAge.name, Metrics.checkpointAge.help, Metrics.checkpointAge.labelNames, (into: GaugeSample[]) => {
        const now = nowMs()
        for (const { flow, groups } of checkpointTimes()) {
          for (const { group, lastCheckpointMs } of groups) {
            into.push({ labels: { ...labels(flow), [L.GROUP]: group }, value: Math.max(0, (now - lastCheckpointMs) / 1000) })
          }
        }
      }) as unknown as Metric
    )
  }

  syncsWritten (flow: FlowLabels, ranges: number, positions: number): void {
    this.#syncsWritten.inc(labels(flow), ranges + positions)
  }

  syncsPruned (flow: FlowLabels, ranges: number): void {
    this.#syncsPruned.inc(labels(flow), ranges)
  }

  oppositeMirrorSkipped (flow: FlowLabels, records: number): void {
    this.#oppositeMirrorSkipped.inc(labels(flow), records)
  }

  syncWriteFailed (flow: FlowLabels): void {
    this.#syncFailures.inc(labels(flow))
  }

  checkpointsWritten (flow: FlowLabels, group: string, count: number): void {
    this.#checkpoints.inc({ ...labels(flow), [L.GROUP]: group }, count)
  }

  groupOffsetsSynced (flow: FlowLabels, group: string, partitions: number): void {
    this.#groupsSynced.inc({ ...labels(flow), [L.GROUP]: group }, partitions)
  }

  groupSkipped (flow: FlowLabels, group: string, reason: 'active' | 'error'): void {
    this.#groupsSkipped.inc({ ...labels(flow), [L.GROUP]: group, [L.REASON]: reason })
  }

  translationFailed (flow: FlowLabels, group: string, reason: TranslationFailure): void {
    this.#translationFailures.inc({ ...labels(flow), [L.GROUP]: group, [L.REASON]: reason })
  }
}
