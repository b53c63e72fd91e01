import { constants, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Logger } from '../shared/logger.js'

/**
 * A full garbage collection once the process turned idle after a busy spell, so that what the busy
 * spell left behind is given back (the JVM's equivalent is G1's periodic collection, JEP 346).
 *
 * Why: after each full collection V8 lets the old generation grow to what it kept times a factor
 * it picks from how fast the program allocates against how fast it collects: up to 4 during a
 * copy. When the copy ends, nothing reaches that limit any more, so the copy's garbage (and what a
 * caught-up mirror promotes, some 1 MiB/s at 10,000 partitions) is kept for minutes: the
 * peak RSS of a 10,000-partition copy was reached while caught up, not while copying
 * (memory traced once a second through the run). One collection while idle sets the limit again, from an idle
 * program's allocation rate (a factor near 1.3), and V8 keeps the heap near that by itself.
 *
 * Idle means below `idleCpuFraction` of a core over `idleChecks` checks in a row (one check: 5 s). A collection
 * runs only when the heap (V8's used size plus memory held by buffers) has grown by
 * `growthFactor` and `minGrowthBytes` over what the last full collection (this one's or V8's own)
 * kept, at most once per `minIntervalMs`. It is V8's incremental collection (`execution: 'async'`),
 * the one V8 runs itself: marking in steps between tasks, so the event loop is not held for the
 * whole of it.
 */
export interface IdleGcPolicy {
  readonly checkIntervalMs: number
  readonly idleCpuFraction: number
  readonly idleChecks: number
  readonly growthFactor: number
  readonly minGrowthBytes: number
  readonly minIntervalMs: number
}

export const IDLE_GC_POLICY: IdleGcPolicy = {
  checkIntervalMs: 5_000,
  idleCpuFraction: 0.15,
  idleChecks: 1,
  growthFactor: 1.5,
  minGrowthBytes: 32 * 2 ** 20,
  minIntervalMs: 60_000,
}

/** What one check sees. */
export interface IdleGcState {
  /** Checks in a row (this one included) whose CPU was below the idle fraction. */
  readonly idleChecksInRow: number
  /** Heap used plus external memory now. */
  readonly heapBytes: number
  /** The same right after the last full collection (this component's or V8's own). */
  readonly keptBytes: number
  /** Since this component last collected (Infinity: never). */
  readonly msSinceLastCollection: number
}

/** True when a check should run a full collection (pure: the rules above). */
export function shouldCollect (policy: IdleGcPolicy, state: IdleGcState): boolean {
  return state.idleChecksInRow >= policy.idleChecks &&
    state.msSinceLastCollection >= policy.minIntervalMs &&
    state.heapBytes >= state.keptBytes * policy.growthFactor &&
    state.heapBytes - state.keptBytes >= policy.minGrowthBytes
}

export type CollectGarbage = (options: { type: 'major', execution: 'async' }) => Promise<void> | undefined

/** What the component reads and calls; the defaults are V8's (tests give their own). */
export interface IdleGcProbes {
  readonly heapBytes: () => number
  readonly collector: () => CollectGarbage | undefined
}

/**
 * V8's `gc` function without starting node with `--expose-gc`: the flag set now installs `gc` in
 * contexts created after it, such as this throwaway one (the program's own global stays without
 * it). Undefined when this V8 does not offer it.
 */
export function collectorFunction (): CollectGarbage | undefined {
  try {
    setFlagsFromString('--expose-gc')
    const gc: unknown = runInNewContext('typeof gc === "function" ? gc : undefined')
    return typeof gc === 'function' ? gc as CollectGarbage : undefined
  } catch {
    return undefined
  }
}

export function heapBytes (): number {
  const heap = getHeapStatistics()
  return heap.used_heap_size + heap.external_memory
}

/** The component: checks every `checkIntervalMs` (a timer that does not hold the process open). */
export class IdleGc {
  readonly #policy: IdleGcPolicy
  readonly #logger: Logger
  readonly #probes: IdleGcProbes
  #timer: NodeJS.Timeout | undefined
  #observer: PerformanceObserver | undefined
  #collect: CollectGarbage | undefined
  #cpu = process.cpuUsage()
  #checkedAtMs = 0
  #idleChecksInRow = 0
  #keptBytes = 0
  #lastCollectionMs = Number.NEGATIVE_INFINITY
  #collecting = false
  /** Checks made and full collections run (for tests). */
  checks = 0
  collections = 0

  constructor (logger: Logger, policy: IdleGcPolicy = IDLE_GC_POLICY, probes: IdleGcProbes = { heapBytes, collector: collectorFunction }) {
    this.#logger = logger
    this.#policy = policy
    this.#probes = probes
  }

  start (): void {
    if (this.#timer !== undefined) return
    this.#collect = this.#probes.collector()
    if (this.#collect === undefined) {
      this.#logger.debug('no full collection when idle: this node offers no gc function')
      return
    }
    this.#keptBytes = this.#probes.heapBytes()
    // V8's own full collections set the baseline too: growth counts from the last one of either.
    this.#observer = new PerformanceObserver(list => {
      if (list.getEntries().some(entry => (entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) {
        this.#keptBytes = this.#probes.heapBytes()
      }
    })
    this.#observer.observe({ entryTypes: ['gc'] })
    this.#cpu = process.cpuUsage()
    this.#checkedAtMs = performance.now()
    this.#timer = setInterval(() => { this.#check() }, this.#policy.checkIntervalMs)
    this.#timer.unref()
  }

  stop (): void {
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#observer?.disconnect()
    this.#observer = undefined
  }

  #check (): void {
    this.checks++
    const nowMs = performance.now()
    const cpu = process.cpuUsage(this.#cpu)
    this.#cpu = process.cpuUsage()
    const elapsedMs = Math.max(1, nowMs - this.#checkedAtMs)
    this.#checkedAtMs = nowMs
    const cpuFraction = (cpu.user + cpu.system) / 1000 / elapsedMs
    this.#idleChecksInRow = cpuFraction < this.#policy.idleCpuFraction ? this.#idleChecksInRow + 1 : 0
    if (this.#collecting || this.#collect === undefined) return
    const before = this.#probes.heapBytes()
    if (
      !shouldCollect(this.#policy, {
        idleChecksInRow: this.#idleChecksInRow,
        heapBytes: before,
        keptBytes: this.#keptBytes,
        msSinceLastCollection: nowMs - this.#lastCollectionMs,
      })
    ) { return }
    this.#collecting = true
    this.#lastCollectionMs = nowMs
    const collected = Promise.resolve(this.#collect({ type: 'major', execution: 'async' }))
    collected.then(() => {
      this.collections++
      this.#keptBytes = this.#probes.heapBytes()
      this.#logger.debug('idle: full garbage collection', { beforeBytes: before, afterBytes: this.#keptBytes, cpuFraction: Number(cpuFraction.toFixed(3)) })
    }, (error: unknown) => {
      this.#logger.debug('idle: full garbage collection failed', { error })
    }).finally(() => { this.#collecting = false })
  }
}
