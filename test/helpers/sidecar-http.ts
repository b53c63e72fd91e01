import type { SidecarProcess } from './sidecar.js'
import { promtool } from './prometheus.js'
import { waitUntil } from './wait.js'

/** The port of the sidecar's HTTP server, from its `health server listening` log line (run it with `--metrics.port 0`). */
export async function sidecarHttpPort (sidecar: SidecarProcess, timeoutMs = 30_000): Promise<number> {
  let port: number | undefined
  await waitUntil(() => {
    if (sidecar.child.exitCode !== null) throw new Error(`sidecar exited (${sidecar.child.exitCode}):\n${sidecar.stderr()}`)
    const line = sidecar.stderr().split('\n').find(l => l.includes('"msg":"health server listening"'))
    if (line !== undefined) port = (JSON.parse(line) as { port: number }).port
    return port !== undefined
  }, { timeoutMs, message: 'the sidecar\'s "health server listening" log line' })
  return port as number
}

export interface Probe {
  readonly status: number
  readonly body: { status: string, reasons?: string[] }
}

export async function readyz (port: number): Promise<Probe> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`)
  return { status: response.status, body: await response.json() as Probe['body'] }
}

/** `/metrics` as Prometheus text. */
export async function scrape (port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`)
  return await response.text()
}

/** Sum of the samples of `name` (exact metric name, any labels) in a text exposition; undefined when absent. */
export function sampleSum (exposition: string, name: string): number | undefined {
  let sum: number | undefined
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line)
    if (match?.[1] === name) sum = (sum ?? 0) + Number(match[2])
  }
  return sum
}

/** Problems `promtool check metrics` reports beyond the allow-listed prom-client `nodejs_active_*_total` gauges. */
export async function promtoolProblems (exposition: string): Promise<{ code: number, problems: string[], allowed: string[] }> {
  const result = await promtool(['check', 'metrics'], exposition)
  const lines = (result.stdout + result.stderr).split('\n').map(line => line.trim()).filter(line => line !== '')
  const allowed = lines.filter(line => /^nodejs_active_[a-z_]+_total\b/.test(line))
  return { code: result.code, problems: lines.filter(line => !allowed.includes(line)), allowed }
}
