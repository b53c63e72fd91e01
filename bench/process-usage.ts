import { readFileSync } from 'node:fs'

/** CPU time and memory of one live process, read from Linux `/proc`. */
export interface ProcessUsage {
  /** utime + stime of every thread of the process, in seconds. */
  readonly cpuSeconds: number
  /** The part of `cpuSeconds` in user mode (utime) and in the kernel (stime). */
  readonly userSeconds: number
  readonly systemSeconds: number
  /** Peak resident set size so far (`VmHWM`), in bytes. */
  readonly peakRssBytes: number
  /** Current resident set size (`VmRSS`), in bytes. */
  readonly rssBytes: number
}

/** Kernel clock ticks per second (`getconf CLK_TCK`): 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_SECOND = 100

/** Reads `/proc/<pid>/stat` and `/proc/<pid>/status`; undefined once the process is gone. */
export function readProcessUsage (pid: number): ProcessUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces; fields after its closing ')' are space separated.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // An exited, not yet reaped process (state Z) has lost its memory figures: keep the last sample.
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined
    const utime = Number(fields[11])
    const stime = Number(fields[12])
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
    return {
      cpuSeconds: (utime + stime) / CLOCK_TICKS_PER_SECOND,
      userSeconds: utime / CLOCK_TICKS_PER_SECOND,
      systemSeconds: stime / CLOCK_TICKS_PER_SECOND,
      peakRssBytes: kib('VmHWM'),
      rssBytes: kib('VmRSS'),
    }
  } catch {
    return undefined
  }
}

/**
 * Samples a process every `intervalMs` so its last figures are known even if it exits on its own;
 * `latest` is the newest sample (undefined before the first one).
 */
export class UsageSampler {
  #latest: ProcessUsage | undefined
  #timer: NodeJS.Timeout | undefined

  constructor (readonly pid: number, readonly intervalMs = 200) {}

  get latest (): ProcessUsage | undefined { return this.#latest }

  start (): void {
    this.sample()
    this.#timer = setInterval(() => this.sample(), this.intervalMs)
    this.#timer.unref()
  }

  /** Takes one sample now (kept only if the process is still there) and returns the latest. */
  sample (): ProcessUsage | undefined {
    const usage = readProcessUsage(this.pid)
    if (usage !== undefined) this.#latest = usage
    return this.#latest
  }

  stop (): ProcessUsage | undefined {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    return this.sample()
  }
}
