import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The /metrics text of a sidecar the benchmark started (its port is in the `health server
 * listening` line of `<workDir>/sidecar.log`); undefined when it has not logged it yet or does
 * not answer (a figure from it is then n/a, not a failed run).
 */
export async function sidecarMetrics (workDir: string): Promise<string | undefined> {
  try {
    const log = await readFile(join(workDir, 'sidecar.log'), 'utf8')
    const line = log.split('\n').find(l => l.includes('"msg":"health server listening"'))
    if (line === undefined) return undefined
    const { port } = JSON.parse(line) as { port: number }
    return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  } catch {
    // Not up yet, or gone: the caller reports the figure as n/a.
    return undefined
  }
}

/** Sum of every sample of `name` (any labels) in a Prometheus text exposition; NaN when absent or no exposition. */
export function metricSum (exposition: string | undefined, name: string): number {
  if (exposition === undefined) return Number.NaN
  let sum: number | undefined
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line)
    if (match?.[1] === name) sum = (sum ?? 0) + Number(match[2])
  }
  return sum ?? Number.NaN
}
