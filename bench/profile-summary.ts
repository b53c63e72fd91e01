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
  if (location.startsWith('@kafka-mirror-sidecar/kafkajs/') || location.startsWith('kafkajs/')) return 'kafkajs'
  if (location.startsWith('dist/')) return 'this project'
  if (location.startsWith('node:') || location === '') return 'Node.js internals and native'
  return 'other packages'
}

/**
 * Top `limit` functions by self time, and self time per origin; with `lastSeconds`, of the samples
 * in the last that many seconds of the profile only (say, the caught-up window after a copy).
 */
export function summariseProfile (
  profile: CpuProfile,
  limit = 25,
  lastSeconds?: number
): { totalMs: number, top: SelfTime[], byOriginMs: Record<string, number> } {
  const byNode = new Map<number, number>()
  let first = 0
  if (lastSeconds !== undefined) {
    // Samples from the end backwards until `lastSeconds` are covered.
    let fromEndUs = 0
    for (first = profile.samples.length; first > 0 && fromEndUs + (profile.timeDeltas[first - 1] ?? 0) <= lastSeconds * 1e6; first--) {
      fromEndUs += profile.timeDeltas[first - 1] ?? 0
    }
  }
  for (let i = first; i < profile.samples.length; i++) {
    const nodeId = profile.samples[i]!
    byNode.set(nodeId, (byNode.get(nodeId) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
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
    .map(entry => ({
      functionName: entry.functionName,
      location: entry.location,
      selfMs: entry.selfUs / 1000,
      percent: totalUs === 0 ? 0 : (entry.selfUs / totalUs) * 100,
    }))
  return { totalMs: totalUs / 1000, top, byOriginMs }
}

/** A plain-text table of the top self-time functions of the profile at `file`. */
export async function renderProfileSummary (file: string, limit = 25, lastSeconds?: number): Promise<string> {
  const { totalMs, top, byOriginMs } = summariseProfile(JSON.parse(await readFile(file, 'utf8')) as CpuProfile, limit, lastSeconds)
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

/** V8's sampling heap profile (`node --heap-prof`): a call tree whose nodes hold the sampled bytes still live, allocated there. */
interface HeapProfile {
  readonly head: HeapProfileNode
}

interface HeapProfileNode {
  readonly callFrame: { readonly functionName: string, readonly url: string, readonly lineNumber: number }
  readonly selfSize: number
  readonly children: readonly HeapProfileNode[]
}

/** Live bytes by allocating function, and by the first frame of this project on the allocation's stack (who made kafkajs or Node allocate it). */
export function summariseHeapProfile (
  profile: HeapProfile,
  limit = 25
): { totalBytes: number, top: Array<{ site: string, bytes: number }>, byProjectFrame: Array<{ site: string, bytes: number }> } {
  const bySite = new Map<string, number>()
  const byProject = new Map<string, number>()
  const siteOf = (node: HeapProfileNode): string => {
    const { functionName, url, lineNumber } = node.callFrame
    return `${functionName === '' ? '(anonymous)' : functionName}${url === '' ? '' : `  (${shorten(url)}:${lineNumber + 1})`}`
  }
  let totalBytes = 0
  const walk = (node: HeapProfileNode, projectFrame: string | undefined): void => {
    const site = siteOf(node)
    const inProject = node.callFrame.url !== '' && shorten(node.callFrame.url).startsWith('dist/')
    const frame = inProject ? site : projectFrame
    if (node.selfSize > 0) {
      totalBytes += node.selfSize
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
      const key = frame ?? '(no frame of this project)'
      byProject.set(key, (byProject.get(key) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, frame)
  }
  walk(profile.head, undefined)
  const sorted = (map: Map<string, number>): Array<{ site: string, bytes: number }> =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([site, bytes]) => ({ site, bytes }))
  return { totalBytes, top: sorted(bySite), byProjectFrame: sorted(byProject) }
}

/** A plain-text table of what holds the heap in the heap profile at `file`. */
export async function renderHeapProfileSummary (file: string, limit = 25): Promise<string> {
  const { totalBytes, top, byProjectFrame } = summariseHeapProfile(JSON.parse(await readFile(file, 'utf8')) as HeapProfile, limit)
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1).padStart(7)
  return [
    `${basename(file)}: ${(totalBytes / 2 ** 20).toFixed(1)} MiB live (sampled)`,
    '  MiB  allocated by',
    ...top.map(({ site, bytes }) => `${mib(bytes)}  ${site}`),
    '  MiB  innermost frame of this project on the stack',
    ...byProjectFrame.map(({ site, bytes }) => `${mib(bytes)}  ${site}`),
  ].join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, limit, lastSeconds] = process.argv.slice(2)
  if (file === undefined) {
    console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top N] [last S seconds only] | <file.heapprofile> [top N]')
    process.exitCode = 2
  } else {
    const summary = file.endsWith('.heapprofile')
      ? renderHeapProfileSummary(file, limit === undefined ? 25 : Number(limit))
      : renderProfileSummary(file, limit === undefined ? 25 : Number(limit), lastSeconds === undefined ? undefined : Number(lastSeconds))
    summary.then(text => console.log(text), (error: unknown) => {
      console.error(`profile-summary: ${(error as Error).message}`)
      process.exitCode = 2
    })
  }
}
