import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'

/** A child process the benchmark started, with a promise that settles when it has exited. */
export interface TrackedChild {
  readonly name: string
  readonly child: ChildProcess
  readonly pid: number
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  readonly hasExited: () => boolean
  /** Signal `stopChild` sends first; default SIGTERM. */
  readonly stopSignal: NodeJS.Signals
}

const running = new Set<TrackedChild>()
/** Set by `stopAllChildren`: a child started afterwards (a run racing the Ctrl-C cleanup) is killed at once. */
let closing = false

/** Registers `child` so `stopAllChildren()` (also run on Ctrl-C) ends it. */
export function track (name: string, child: ChildProcess, stopSignal: NodeJS.Signals = 'SIGTERM'): TrackedChild {
  if (child.pid === undefined) throw new Error(`${name}: process did not start`)
  let done = false
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => {
    child.once('exit', (code, signal) => { done = true; resolve({ code, signal }) })
    child.once('error', () => { done = true; resolve({ code: null, signal: null }) })
  })
  const tracked: TrackedChild = { name, child, pid: child.pid, exited, hasExited: () => done, stopSignal }
  running.add(tracked)
  void exited.then(() => running.delete(tracked))
  if (closing) child.kill('SIGKILL')
  return tracked
}

/** The child's stop signal (SIGTERM), then SIGKILL after `graceMs`; resolves once it has exited. */
export async function stopChild (tracked: TrackedChild, graceMs = 5_000): Promise<void> {
  if (tracked.hasExited()) return
  tracked.child.kill(tracked.stopSignal)
  const killed = await Promise.race([tracked.exited.then(() => true), sleep(graceMs, false)])
  if (!killed) {
    tracked.child.kill('SIGKILL')
    await tracked.exited
  }
}

export async function stopAllChildren (graceMs = 5_000): Promise<void> {
  closing = true
  await Promise.all([...running].map(async tracked => await stopChild(tracked, graceMs)))
}
