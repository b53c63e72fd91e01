import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Waits for `work` at most `ms`: true when it settled (resolved or rejected) in time, false when
 * the bound passed first. Used by `stop()` paths, where a Kafka client retrying against an
 * unreachable cluster must not hold the shutdown past its deadline. The timer is cleared as
 * soon as the work settles.
 */
export async function settleWithin (work: Promise<unknown>, ms: number): Promise<boolean> {
  const abort = new AbortController()
  const bound = sleep(ms, false, { signal: abort.signal }).catch(() => false)
  try {
    return await Promise.race([work.then(() => true, () => true), bound])
  } finally {
    abort.abort()
  }
}
