import { setTimeout as sleep } from 'node:timers/promises'

/** Polls `condition` until it returns true; fails with `message` (and the last error) after `timeoutMs`. */
export async function waitUntil (
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 30_000, intervalMs = 100, message = 'condition' } = {}
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      if (await condition()) return
    } catch (error) {
      lastError = error
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${message}` + (lastError === undefined ? '' : `: ${String((lastError as Error).message ?? lastError)}`)
      )
    }
    await sleep(intervalMs)
  }
}
