import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from './logger.js'

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

/**
 * The stop of a component that writes its records to a topic in flushes: aborts what waits, lets
 * the running flush finish within `boundMs` (else warns that `what` is given up: the records it
 * held stay uncommitted), then stops the writer within the same bound.
 */
export async function stopFlushingWriter (
  parts: { abort: AbortController, flushing: Promise<unknown>, writer: { stop: () => Promise<void> }, what: string, logger: Logger },
  boundMs: number
): Promise<void> {
  parts.abort.abort()
  if (!(await settleWithin(parts.flushing, boundMs))) {
    parts.logger.warn(`${parts.what} still being written at stop; giving up on them (their records stay uncommitted)`, { boundMs })
  }
  await settleWithin(parts.writer.stop(), boundMs)
}
