import { setTimeout as sleep } from 'node:timers/promises'
import { isRetriable } from './errors.js'

/** How the one retry helper behaves. */
export interface RetryPolicy {
  /** Attempts in all, the first included; default Infinity (retry until stopped, as MirrorMaker 1's unlimited delivery timeout). */
  readonly maxAttempts?: number
  /** First backoff; default 100. */
  readonly initialBackoffMs?: number
  /** Backoff ceiling; default 10000. */
  readonly maxBackoffMs?: number
  /** Aborts the wait between attempts (the last error is thrown). */
  readonly signal?: AbortSignal
  /** Which errors to retry; default `isRetriable`. */
  readonly shouldRetry?: (error: unknown) => boolean
  /** Called before each wait; where retries are counted in metrics and logged. */
  readonly onRetry?: (error: unknown, attempt: number, backoffMs: number) => void
}

/**
 * Exponential backoff with equal jitter (the AWS Architecture Blog's "Exponential Backoff And
 * Jitter" names it so), capped: with ceiling = min(maxBackoffMs, initialBackoffMs * 2^(n-1)),
 * attempt n waits ceiling / 2 plus a random share of the other half, between ceiling / 2 and
 * ceiling ms (rounded). Full jitter would wait anywhere from 0 to ceiling.
 */
export function backoffMs (attempt: number, policy: RetryPolicy, random = Math.random): number {
  const initial = policy.initialBackoffMs ?? 100
  const ceiling = Math.min(policy.maxBackoffMs ?? 10_000, initial * 2 ** Math.min(attempt - 1, 30))
  return Math.round(ceiling / 2 + random() * ceiling / 2)
}

/** Runs `operation` until it succeeds, a non-retriable error occurs, attempts run out or the signal aborts. */
export async function retry<T> (operation: (attempt: number) => Promise<T>, policy: RetryPolicy = {}): Promise<T> {
  const shouldRetry = policy.shouldRetry ?? isRetriable
  const maxAttempts = policy.maxAttempts ?? Infinity
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt)
    } catch (error) {
      if (!shouldRetry(error) || attempt >= maxAttempts || policy.signal?.aborted === true) throw error
      const waitMs = backoffMs(attempt, policy)
      policy.onRetry?.(error, attempt, waitMs)
      try {
        await sleep(waitMs, undefined, policy.signal === undefined ? undefined : { signal: policy.signal })
      } catch {
        throw error
      }
    }
  }
}
