import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The compiled CLI, run as users run it. */
export const MIRROR_CHECK = fileURLToPath(new URL('../../cli/mirror-check.js', import.meta.url))

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** Runs `mirror-check args...` in a child process and resolves with its exit code and output (never rejects on a non-zero exit). */
export function runMirrorCheck (args: readonly string[], { timeoutMs = 60_000 } = {}): Promise<CliResult> {
  const started = Date.now()
  return new Promise(resolve => {
    execFile(process.execPath, [MIRROR_CHECK, ...args], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    })
  })
}
