import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { waitUntil } from './wait.js'

export interface CommandResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion with optional stdin; never rejects on a non-zero exit. */
export async function run (command: string, args: readonly string[], stdin?: string): Promise<CommandResult> {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  child.stdin.end(stdin ?? '')
  const [code] = await once(child, 'close') as [number | null]
  return { code: code ?? -1, stdout, stderr }
}

/** `promtool` from the Debian `prometheus` package. */
export async function promtool (args: readonly string[], stdin?: string): Promise<CommandResult> {
  return await run(process.env.PROMTOOL ?? 'promtool', args, stdin)
}

export interface PrometheusOptions {
  /** `host:port` targets scraped by job `kafka-mirror`. */
  readonly targets: readonly string[]
  /** Loopback port for Prometheus' own HTTP API; default a free one (another is tried if it is taken before Prometheus binds it). */
  readonly port?: number
  /** Scrape (and rule evaluation) interval; default 1 s. */
  readonly scrapeIntervalSeconds?: number
  /** Rule files to load (absolute paths). */
  readonly ruleFiles?: readonly string[]
  /** Folder of console templates served at `/consoles/<file>`, with the `prometheus` package's console libraries (`consoleLibrariesDir`). */
  readonly consoleTemplatesDir?: string
}

/**
 * The console libraries (`prom.lib`, `menu.lib`) of Debian's `prometheus` package: `PROMETHEUS_CONSOLE_LIBRARIES`,
 * else the first of the places packages put them.
 */
export function consoleLibrariesDir (): string {
  const candidates = [
    process.env.PROMETHEUS_CONSOLE_LIBRARIES,
    '/usr/share/prometheus/console_libraries',
    '/usr/share/doc/prometheus/examples/console_libraries',
    '/etc/prometheus/console_libraries',
  ]
  const found = candidates.find(dir => dir !== undefined && existsSync(join(dir, 'prom.lib')))
  if (found === undefined) {
    throw new Error(
      "no prom.lib in /usr/share/prometheus/console_libraries or /usr/share/doc/prometheus/examples/console_libraries: install Debian's prometheus (scripts/ensure-test-tools.sh) or set PROMETHEUS_CONSOLE_LIBRARIES"
    )
  }
  return found
}

export interface PromSample {
  readonly metric: Record<string, string>
  readonly value: [number, string]
}

/** A real Prometheus server on 127.0.0.1 with its own config and TSDB in a temporary directory. */
export class PrometheusServer {
  readonly #options: PrometheusOptions
  #port: number | undefined
  #dir: string | undefined
  #process: ChildProcess | undefined
  #log = ''

  constructor (options: PrometheusOptions) { this.#options = options }

  get url (): string { return `http://127.0.0.1:${this.#port ?? this.#options.port ?? 0}` }

  /** What Prometheus logged (stderr), for failure messages. */
  get log (): string { return this.#log }

  async start (): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.#port = this.#options.port ?? await freePort()
      try {
        return await this.#startOnce()
      } catch (error) {
        await this.stop()
        if (this.#options.port !== undefined || attempt >= 3 || !this.#log.includes('address already in use')) throw error
        this.#log = ''
      }
    }
  }

  async #startOnce (): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'mirror-prometheus-'))
    this.#dir = dir
    const interval = `${this.#options.scrapeIntervalSeconds ?? 1}s`
    const config = {
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      rule_files: this.#options.ruleFiles ?? [],
      scrape_configs: [{ job_name: 'kafka-mirror', static_configs: [{ targets: this.#options.targets }] }],
    }
    // JSON is YAML: Prometheus reads it as is.
    await writeFile(join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2))
    const child = spawn(
      process.env.PROMETHEUS ?? 'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${this.#port}`,
        '--web.enable-lifecycle',
        ...(this.#options.consoleTemplatesDir === undefined
          ? []
          : [`--web.console.templates=${this.#options.consoleTemplatesDir}`, `--web.console.libraries=${consoleLibrariesDir()}`]),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] }
    )
    this.#process = child
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.#log = (this.#log + chunk).slice(-20_000) })
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${this.#log.slice(-2_000)}`)
      const response = await fetch(`${this.url}/-/ready`)
      return response.ok
    }, { timeoutMs: 20_000, message: 'prometheus ready' })
  }

  /** Instant query; returns the result vector. */
  async query (expression: string): Promise<PromSample[]> {
    const response = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expression)}`)
    const body = await response.json() as { status: string, error?: string, data?: { resultType: string, result: PromSample[] } }
    if (body.status !== 'success' || body.data === undefined) throw new Error(`query ${expression} failed: ${body.error ?? response.status}`)
    return body.data.result
  }

  /** Scrape targets and their health as Prometheus sees them. */
  async targets (): Promise<Array<{ scrapeUrl: string, health: string, lastError: string }>> {
    const response = await fetch(`${this.url}/api/v1/targets`)
    const body = await response.json() as { data: { activeTargets: Array<{ scrapeUrl: string, health: string, lastError: string }> } }
    return body.data.activeTargets
  }

  /** Loaded rules with their evaluation health (`ok`, `err`, `unknown`) and last error. */
  async rules (): Promise<Array<{ name: string, health: string, lastError?: string, lastEvaluation: string }>> {
    const response = await fetch(`${this.url}/api/v1/rules`)
    const body = (await response.json()) as {
      data: { groups: Array<{ rules: Array<{ name: string, health: string, lastError?: string, lastEvaluation: string }> }> }
    }
    return body.data.groups.flatMap(group => group.rules)
  }

  /** Alerts currently pending or firing. */
  async alerts (): Promise<Array<{ labels: Record<string, string>, state: string }>> {
    const response = await fetch(`${this.url}/api/v1/alerts`)
    const body = await response.json() as { data: { alerts: Array<{ labels: Record<string, string>, state: string }> } }
    return body.data.alerts
  }

  /** Stops the process (SIGTERM, then SIGKILL after 5 s) and removes its directory; safe to call twice. */
  async stop (): Promise<void> {
    const child = this.#process
    this.#process = undefined
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    }
    if (this.#dir !== undefined) await rm(this.#dir, { recursive: true, force: true })
    this.#dir = undefined
  }
}

/** Starts a Prometheus for this test and stops it when the test ends. */
export async function startPrometheus (t: TestContext, options: PrometheusOptions): Promise<PrometheusServer> {
  const server = new PrometheusServer(options)
  t.after(async () => { await server.stop() })
  await server.start()
  return server
}

/** A loopback port free at the time of asking. */
async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}
