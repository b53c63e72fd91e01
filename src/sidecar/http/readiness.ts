import type { FlowSnapshot } from '../../ports/pipeline-observer.js'

/** Outcome of a readiness evaluation: ready, or the reasons why not (short, one per problem). */
export interface Readiness {
  readonly ready: boolean
  readonly reasons: readonly string[]
}

export interface ReadinessInput {
  readonly flows: readonly FlowSnapshot[]
  readonly nowMs: number
  /** A lagging partition without progress for longer than this is not ready. */
  readonly progressStalenessMs: number
  /** Progress is counted from here at the earliest (when health reporting started), so a fresh start with a backlog has time to make progress. */
  readonly sinceMs: number
}

/** Most reasons listed; the rest are counted. */
const MAX_REASONS = 10

/**
 * Ready only when every flow is running with both clusters connected and every partition that
 * lags (high watermark above the next offset to mirror) has made progress within the staleness
 * window. A flow with no partitions assigned is ready: a standby member of a group with more
 * members than partitions, or a flow whose topics do not exist yet, is healthy and would otherwise
 * hold a rolling deployment forever (`kafka_mirror_assigned_partitions` shows it). Pure.
 */
export function evaluateReadiness (input: ReadinessInput): Readiness {
  const reasons: string[] = []
  if (input.flows.length === 0) reasons.push('no flows')
  for (const flow of input.flows) {
    const name = `flow ${flow.labels.flow}`
    if (flow.state !== 'running') reasons.push(`${name} is ${flow.state}`)
    if (!flow.sourceConnected) reasons.push(`${name}: source cluster ${flow.labels.source} not connected`)
    if (!flow.targetConnected) reasons.push(`${name}: target cluster ${flow.labels.target} not connected`)
    for (const partition of flow.partitions) {
      if (partition.highWatermark < 0n || partition.highWatermark <= partition.nextOffsetToMirror) continue
      const idleMs = input.nowMs - Math.max(partition.lastProgressMs, input.sinceMs)
      if (idleMs > input.progressStalenessMs) {
        const lag = partition.highWatermark - partition.nextOffsetToMirror
        reasons.push(`${name}: ${partition.topic}-${partition.partition} lags ${lag} records with no progress for ${Math.round(idleMs / 1000)} s`)
      }
    }
  }
  const shown = reasons.length > MAX_REASONS ? [...reasons.slice(0, MAX_REASONS), `and ${reasons.length - MAX_REASONS} more`] : reasons
  return { ready: reasons.length === 0, reasons: shown }
}
