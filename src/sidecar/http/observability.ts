import { MirrorMetrics, type MirrorMetricsOptions } from '../metrics/mirror-metrics.js'
import { PipelineObserverEvents, type FlowSnapshot, type PipelineObserver } from '../../ports/pipeline-observer.js'
import { fanOut } from '../../shared/fan-out.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { MirrorTracer } from '../tracing/mirror-tracer.js'
import { HealthServer } from './health-server.js'

export interface ObservabilityOptions {
  /** Every flow's snapshot, read at scrape and probe time (`MirrorSidecar.snapshot`). */
  readonly snapshots: () => readonly FlowSnapshot[]
  /** HTTP bind address; default: all interfaces. */
  readonly host?: string
  /** HTTP port; default 9464; 0 picks a free one (see `port`). */
  readonly port?: number
  /** A lagging partition without progress for longer makes `/readyz` 503; default 60000. */
  readonly progressStalenessMs?: number
  /** OTEL_* variables for the tracing on/off decision; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
  readonly logger?: Logger
  /** Options of the metrics (partition labels, the configured flows); default `{}`. */
  readonly metrics?: MirrorMetricsOptions
}

/** Calls every observer's callback in turn; observers must not throw (see `PipelineObserver`). */
export function combineObservers (...observers: readonly PipelineObserver[]): PipelineObserver {
  return fanOut(PipelineObserverEvents, ...observers)
}

/**
 * Metrics, health endpoints and tracing of one sidecar process, wired together: pass `observer` to
 * every `MirrorFlow` and `tracer` to whatever sends batches. `start()` opens the HTTP server first
 * (so `/healthz` answers while flows connect) and starts tracing; `stop()` (once-only) flushes
 * spans, then closes the HTTP server. Call `beginShutdown()` first in a graceful stop, so
 * `/readyz` turns 503 before the flows drain.
 */
export class Observability {
  readonly metrics: MirrorMetrics
  readonly health: HealthServer
  readonly tracer: MirrorTracer
  /** Fan-out to metrics and health (`fatal` makes `/healthz` 500). */
  readonly observer: PipelineObserver
  #stopped: Promise<void> | undefined

  constructor (options: ObservabilityOptions) {
    const logger = options.logger ?? silentLogger
    this.metrics = new MirrorMetrics(options.snapshots, options.metrics)
    this.health = new HealthServer({
      snapshots: options.snapshots,
      metrics: this.metrics,
      logger,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.progressStalenessMs === undefined ? {} : { progressStalenessMs: options.progressStalenessMs }),
    })
    this.tracer = new MirrorTracer({ logger, ...(options.env === undefined ? {} : { env: options.env }) })
    this.observer = combineObservers(this.metrics, this.health)
  }

  /** The bound HTTP port (after `start()`). */
  get port (): number { return this.health.port }

  async start (): Promise<void> {
    await this.health.start()
    await this.tracer.start()
  }

  beginShutdown (): void {
    this.health.beginShutdown()
  }

  stop (): Promise<void> {
    this.#stopped ??= (async () => {
      this.health.beginShutdown()
      try {
        await this.tracer.stop()
      } finally {
        await this.health.stop()
      }
    })()
    return this.#stopped
  }
}
