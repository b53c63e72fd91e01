#!/usr/bin/env node
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The parts of V8's `.cpuprofile` (Chrome DevTools format) the summary reads. */
interface CpuProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number
    readonly callFrame: { readonly functionName: string, readonly url: string, readonly lineNumber: number }
  }>
  readonly samples: readonly number[]
  /** Microseconds since the previous sample, one per sample. */
  readonly timeDeltas: readonly number[]
}

/** Self time of one function (all profile nodes with the same name and location added). */
export interface SelfTime {
  readonly functionName: string
  /** `file:line` (1-based), shortened to the part after node_modules/ or the project folder. */
  readonly location: string
  readonly selfMs: number
  readonly percent: number
}

function shorten (url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url
  const modules = path.lastIndexOf('node_modules/')
  if (modules >= 0) return path.slice(modules + 'node_modules/'.length)
  const dist = path.indexOf('/dist/')
  return dist >= 0 ? path.slice(dist + 1) : path
}

/** Where self time went by origin: kafkajs, this project, Node internals, GC, idle, other packages. */
export function originOf (functionName: string, location: string): string {
  if (functionName === '(garbage collector)') return 'garbage collector'
  if (functionName === '(idle)') return 'idle'
  if (functionName === '(program)') return 'V8 / native (program)'
  if (location.startsWith('kafkajs/')) return 'kafkajs'
  if (location.startsWith('dist/')) return 'this project'
  if (location.startsWith('node:') || location === '') return 'Node.js internals and native'
  return 'other packages'
}

/** Top `limit` functions by self time, and self time per origin. */
export function summariseProfile (profile: CpuProfile, limit = 25): { totalMs: number, top: SelfTime[], byOriginMs: Record<string, number> } {
  const byNode = new Map<number, number>()
  profile.samples.forEach((nodeId, i) => byNode.set(nodeId, (byNode.get(nodeId) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const byFunction = new Map<string, { functionName: string, location: string, selfUs: number }>()
  for (const node of profile.nodes) {
    const selfUs = byNode.get(node.id) ?? 0
    if (selfUs === 0) continue
    const { functionName, url, lineNumber } = node.callFrame
    const location = url === '' ? '' : `${shorten(url)}:${lineNumber + 1}`
    const key = `${functionName}@${location}`
    const entry = byFunction.get(key) ?? { functionName: functionName === '' ? '(anonymous)' : functionName, location, selfUs: 0 }
    entry.selfUs += selfUs
    byFunction.set(key, entry)
  }
  const totalUs = [...byFunction.values()].reduce((sum, entry) => sum + entry.selfUs, 0)
  const byOriginMs: Record<string, number> = {}
  for (const entry of byFunction.values()) {
    const origin = originOf(entry.functionName, entry.location)
    byOriginMs[origin] = (byOriginMs[origin] ?? 0) + entry.selfUs / 1000
  }
  const top = [...byFunction.values()]
    .sort((a, b) => b.selfUs - a.selfUs)
    .slice(0, limit)
    .map(entry => ({ functionName: entry.functionName, location: entry.location, selfMs: entry.selfUs / 1000, percent: totalUs === 0 ? 0 : entry.selfUs / totalUs * 100 }))
  return { totalMs: totalUs / 1000, top, byOriginMs }
}

/** A plain-text table of the top self-time functions of the profile at `file`. */
export async function renderProfileSummary (file: string, limit = 25): Promise<string> {
  const { totalMs, top, byOriginMs } = summariseProfile(JSON.parse(await readFile(file, 'utf8')) as CpuProfile, limit)
  const share = (ms: number): string => totalMs === 0 ? '0.0' : (ms / totalMs * 100).toFixed(1)
  const origins = Object.entries(byOriginMs).sort((a, b) => b[1] - a[1]).map(([origin, ms]) => `${origin} ${share(ms)}%`)
  const lines = [
    `${basename(file)}: ${(totalMs / 1000).toFixed(1)} s sampled`,
    `by origin: ${origins.join(', ')}`,
    `top ${top.length} functions by self time:`,
    '  self ms     %  function  (location)',
  ]
  for (const entry of top) {
    lines.push(`${entry.selfMs.toFixed(0).padStart(9)} ${entry.percent.toFixed(1).padStart(5)}  ${entry.functionName}${entry.location === '' ? '' : `  (${entry.location})`}`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, limit] = process.argv.slice(2)
  if (file === undefined) {
    console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top N]')
    process.exitCode = 2
  } else {
    renderProfileSummary(file, limit === undefined ? 25 : Number(limit)).then(text => console.log(text), (error: unknown) => {
      console.error(`profile-summary: ${(error as Error).message}`)
      process.exitCode = 2
    })
  }
}
