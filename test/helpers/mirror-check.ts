import { execFile, spawn, type ChildProcess } from 'node:child_process'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

/** The compiled CLI, run as users run it. */
export const MIRROR_CHECK = fileURLToPath(new URL('../../src/check/mirror-check.js', import.meta.url))

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** Runs `mirror-check args...` in a child process and resolves with its exit code and output (never rejects on a non-zero exit). */
export function runMirrorCheck (args: readonly string[], { timeoutMs = 60_000, env = {} as NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const started = Date.now()
  return new Promise(resolve => {
    execFile(
      process.execPath,
      [MIRROR_CHECK, ...args],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1
        resolve({ code, stdout, stderr, ms: Date.now() - started })
      }
    )
  })
}

/** A `mirror-check` child process whose output is collected as it comes (for `--watch` and `--wait`). */
export interface MirrorCheckProcess {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves once the process ended: its exit code, or the signal that ended it. */
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

/** Starts `mirror-check args...` without waiting for it; killed (SIGKILL) when the test ends if still running. */
export function spawnMirrorCheck (t: TestContext, args: readonly string[]): MirrorCheckProcess {
  const child = spawn(process.execPath, [MIRROR_CHECK, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}
