import { setFlagsFromString } from 'node:v8'

/**
 * How far V8 lets the old generation grow past what the last full GC left alive before it
 * collects again: `node --heap-growing-percent` (V8's own default is dynamic, up to 4x the live
 * heap on a machine with memory to spare). The sidecar's live heap is small and its garbage is
 * short-lived (fetch answers, offset reads), so at 10,000 partitions the default let the resident
 * size reach 4-5x the live heap (520 MiB at about 100 MiB live) before the next full GC.
 * 50 (1.5x) kept it at 340 MiB with the copy as fast (bench/results/scale-session7).
 */
export const SIDECAR_HEAP_GROWING_PERCENT = 50

const FLAG = /(^|\s)--heap[-_]growing[-_]percent(=|\s|$)/

/** What `applyHeapGrowth` did: the percent set, or why nothing was set. */
export type HeapGrowth = { readonly applied: true, readonly percent: number } | { readonly applied: false, readonly reason: 'given' }

/**
 * Sets V8's heap growing factor for this process unless the user gave one (`node
 * --heap-growing-percent=N` on the command line or in NODE_OPTIONS; `=0` restores V8's dynamic
 * default). V8 reads the factor each time it computes the next full-GC limit, so setting it at
 * start-up takes effect from the first full GC on. It changes how often the heap is collected,
 * never how large it may get: a `--max-old-space-size` still applies as given.
 */
export function applyHeapGrowth (execArgv: readonly string[] = process.execArgv, nodeOptions: string | undefined = process.env.NODE_OPTIONS): HeapGrowth {
  if (FLAG.test(execArgv.join(' ')) || FLAG.test(nodeOptions ?? '')) return { applied: false, reason: 'given' }
  setFlagsFromString(`--heap-growing-percent=${SIDECAR_HEAP_GROWING_PERCENT}`)
  return { applied: true, percent: SIDECAR_HEAP_GROWING_PERCENT }
}
