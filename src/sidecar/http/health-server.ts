import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Exposition, ExpositionOutput } from '../metrics/mirror-metrics.js'
import type { FlowLabels, FlowSnapshot, PipelineObserver } from '../../ports/pipeline-observer.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { silentLogger, type Logger } from '../../shared/logger.js'
import { evaluateReadiness } from './readiness.js'

/** Where `/metrics` comes from: `MirrorMetrics` satisfies it. */
export interface MetricsSource {
  /** With `output`, the text goes to it as it is formatted (`start` with the content type, then `write` per piece). */
  exposition: (openMetrics: boolean, output?: ExpositionOutput) => Promise<Exposition>
}

export interface HealthServerOptions {
  /** Flow snapshots, read on each `/readyz` request. */
  readonly snapshots: () => readonly FlowSnapshot[]
  /** Served on `/metrics`; without it `/metrics` is 404. */
  readonly metrics?: MetricsSource
  /** Address to bind; default: all interfaces. */
  readonly host?: string
  /** Port to bind; default 9464; 0 picks a free port (read it from `port` after `start()`). */
  readonly port?: number
  /** A lagging partition without progress for longer makes `/readyz` 503; default 60000. */
  readonly progressStalenessMs?: number
  /** Clock (ms since epoch); default `Date.now`. */
  readonly nowMs?: () => number
  readonly logger?: Logger
}

const JSON_TYPE = 'application/json; charset=utf-8'

function wantsOpenMetrics (accept: string | undefined): boolean {
  if (accept === undefined) return false
  return accept.split(',').some(part => {
    const [type, ...params] = part.split(';').map(piece => piece.trim())
    if (type !== 'application/openmetrics-text') return false
    const q = params.find(param => param.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  })
}

/**
 * One HTTP server for Prometheus and orchestrators:
 * - `GET /metrics`: Prometheus text format, or OpenMetrics when the Accept header asks for it;
 * - `GET /healthz`: 200 while alive, 500 once a fatal error was reported (or a flow failed);
 * - `GET /readyz`: 200 when every flow is running, connected, assigned and making progress
 *   where it lags; 503 with a JSON `reasons` list otherwise, and from `beginShutdown()` on;
 * - 404 for other paths, 405 for other methods.
 * Also a `PipelineObserver`: its `fatal` callback marks the process unhealthy.
 * `start()` binds; `stop()` closes the server and its open connections, once.
 */
export class HealthServer implements PipelineObserver {
  readonly #options: HealthServerOptions
  readonly #nowMs: () => number
  readonly #logger: Logger
  #server: Server | undefined
  #port: number | undefined
  #startedAtMs = 0
  #fatal: string | undefined
  #shuttingDown = false
  #stopped: Promise<void> | undefined

  constructor (options: HealthServerOptions) {
    this.#options = options
    this.#nowMs = options.nowMs ?? Date.now
    this.#logger = options.logger ?? silentLogger
  }

  /** The bound port; set once `start()` resolved. */
  get port (): number {
    if (this.#port === undefined) throw new Error('HealthServer is not started')
    return this.#port
  }

  async start (): Promise<void> {
    if (this.#server !== undefined) throw new Error('HealthServer already started')
    const server = createServer((request, response) => { this.#handle(request, response) })
    this.#server = server
    this.#startedAtMs = this.#nowMs()
    const port = this.#options.port ?? 9464
    const host = this.#options.host ?? 'all interfaces'
    await new Promise<void>((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException): void => {
        this.#server = undefined
        reject(
          error.code === 'EADDRINUSE' || error.code === 'EACCES' || error.code === 'EADDRNOTAVAIL'
            ? new MirrorError(
              ErrorCodes.CONFIG,
                `HTTP port ${port} on ${host}: ${error.code === 'EADDRINUSE' ? 'already in use' : error.code === 'EACCES' ? 'permission denied' : 'address not available'}; choose another port and host for /metrics (0 picks a free port)`,
                { cause: error }
            )
            : error
        )
      }
      server.once('error', failed)
      server.listen(port, this.#options.host, () => {
        server.off('error', failed)
        resolve()
      })
    })
    this.#port = (server.address() as AddressInfo).port
    this.#logger.info('health server listening', { host: this.#options.host ?? '*', port: this.#port })
  }

  /** Closes the listener and every open (keep-alive) connection. Safe to call twice. */
  async stop (): Promise<void> {
    this.#stopped ??= this.#close()
    await this.#stopped
  }

  /** Marks the process failed: `/healthz` answers 500 from now on. */
  markFatal (error: Error | string): void {
    this.#fatal ??= typeof error === 'string' ? error : error.message
  }

  /** `PipelineObserver.fatal`: a flow failed for good. */
  fatal (flow: FlowLabels, error: Error): void {
    this.markFatal(`flow ${flow.flow}: ${error.message}`)
  }

  /** From now on `/readyz` answers 503 (first step of a graceful stop). */
  beginShutdown (): void {
    this.#shuttingDown = true
  }

  async #close (): Promise<void> {
    const server = this.#server
    if (server === undefined || !server.listening) return
    const closed = new Promise<void>(resolve => server.close(() => resolve()))
    server.closeAllConnections()
    await closed
  }

  #handle (request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? '/').split('?')[0]
    const route = path === '/metrics' && this.#options.metrics !== undefined
      ? this.#metrics.bind(this)
      : path === '/healthz'
        ? this.#healthz.bind(this)
        : path === '/readyz' ? this.#readyz.bind(this) : undefined
    if (route === undefined) {
      send(response, 404, JSON_TYPE, JSON.stringify({ error: 'not found', paths: ['/metrics', '/healthz', '/readyz'] }))
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD')
      send(response, 405, JSON_TYPE, JSON.stringify({ error: 'method not allowed' }))
      return
    }
    route(request, response).catch((error: unknown) => {
      this.#logger.error('health server request failed', { path, error })
      if (!response.headersSent) send(response, 500, JSON_TYPE, JSON.stringify({ error: 'internal error' }))
      else response.destroy()
    })
  }

  /**
   * Written out as it is formatted (chunked, no Content-Length): at 10,000 partitions the text is
   * some 10 MB, which as one string (and its pieces) was a large object until the next full
   * collection, on every scrape.
   */
  async #metrics (request: IncomingMessage, response: ServerResponse): Promise<void> {
    const head = request.method === 'HEAD'
    await (this.#options.metrics as MetricsSource).exposition(wantsOpenMetrics(request.headers.accept), {
      start: contentType => { response.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }) },
      write: chunk => { if (!head) response.write(chunk) },
    })
    response.end()
  }

  async #healthz (_request: IncomingMessage, response: ServerResponse): Promise<void> {
    const failed = this.#fatal ?? this.#options.snapshots().find(flow => flow.state === 'failed')?.labels.flow
    if (failed === undefined) send(response, 200, JSON_TYPE, JSON.stringify({ status: 'alive' }))
    else send(response, 500, JSON_TYPE, JSON.stringify({ status: 'failed', reason: this.#fatal ?? `flow ${failed} failed` }))
  }

  async #readyz (_request: IncomingMessage, response: ServerResponse): Promise<void> {
    const readiness = this.#shuttingDown
      ? { ready: false, reasons: ['shutting down'] }
      : evaluateReadiness({
        flows: this.#options.snapshots(),
        nowMs: this.#nowMs(),
        progressStalenessMs: this.#options.progressStalenessMs ?? 60_000,
        sinceMs: this.#startedAtMs,
      })
    if (readiness.ready) send(response, 200, JSON_TYPE, JSON.stringify({ status: 'ready' }))
    else send(response, 503, JSON_TYPE, JSON.stringify({ status: 'not ready', reasons: readiness.reasons }))
  }
}

function send (response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' })
  response.end(response.req.method === 'HEAD' ? undefined : body)
}
