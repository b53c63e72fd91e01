import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Headless Chromium from Debian: `CHROMIUM`, else `chromium-headless-shell` or `chromium` on the PATH. */
export function chromiumPath (): string {
  const dirs = (process.env.PATH ?? '/usr/bin').split(delimiter).filter(dir => dir !== '')
  const candidates = [process.env.CHROMIUM, ...['chromium-headless-shell', 'chromium'].flatMap(name => dirs.map(dir => join(dir, name)))]
  const found = candidates.find(path => path !== undefined && existsSync(path))
  if (found === undefined) throw new Error('no headless Chromium: install chromium-headless-shell (scripts/ensure-test-tools.sh does) or set CHROMIUM')
  return found
}

/**
 * Saves a PNG of `url` as a browser of `width` x `height` pixels shows it once its scripts ran
 * (Chromium's virtual time runs until the page is idle, at most `budgetMs`).
 */
export function screenshot (url: string, path: string, options: { width?: number, height?: number, budgetMs?: number } = {}): void {
  const run = spawnSync(chromiumPath(), [
    // The test runs as root in CI, where Chromium's sandbox refuses to start.
    '--no-sandbox', '--headless', '--disable-gpu', '--hide-scrollbars',
    `--window-size=${options.width ?? 1400},${options.height ?? 1800}`,
    `--virtual-time-budget=${options.budgetMs ?? 10_000}`,
    `--screenshot=${path}`, url,
  ], { encoding: 'utf8', timeout: 60_000 })
  if (run.status !== 0 || !existsSync(path)) throw new Error(`chromium --screenshot exited with ${run.status ?? run.signal}: ${run.stderr.slice(-2000)}`)
}
