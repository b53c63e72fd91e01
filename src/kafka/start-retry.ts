import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import { isPassingClusterFault } from './errors.js'

/**
 * Runs one start-up step against a cluster (a producer's InitProducerId, creating an internal
 * topic) until it succeeds, as writes are retried: a passing fault of the cluster
 * (`isPassingClusterFault`: a coordinator loading or moving, a request one hung broker leaves
 * unanswered, KIP-360's InitProducerId to a broker that cannot answer yet) is tried again for as
 * long as it lasts, each retry logged with its reason (the first and every tenth). Any other error,
 * and an abort of `signal` (the component stopped), ends it with that error. `step` cleans up what
 * a failed attempt opened.
 */
export async function retryWhileStarting<T> (what: string, step: () => Promise<T>, logger: Logger, signal?: AbortSignal): Promise<T> {
  return await retry(step, {
    initialBackoffMs: 200,
    maxBackoffMs: 5_000,
    shouldRetry: isPassingClusterFault,
    ...(signal === undefined ? {} : { signal }),
    onRetry: (error, attempt, backoffMs) => {
      if (attempt === 1 || attempt % 10 === 0) {
        logger.warn(`${what} failed; retrying while the cluster recovers`, { attempt, backoffMs, reason: (error as Error).message })
      }
    },
  })
}
