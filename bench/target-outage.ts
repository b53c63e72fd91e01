import { setTimeout as sleep } from 'node:timers/promises'
import type { LocalCluster } from '../scripts/local-kafka/clusters.js'

/** Brokers this process froze and has not thawed yet: `thawAll()` (run on Ctrl-C and at the end) lets them go on. */
const frozen = new Set<LocalCluster>()

/** What `--target-outage-seconds` did to one contender run. */
export interface OutageFigures {
  /** How long the target broker was frozen. */
  readonly seconds: number
  /** Records on the target when it was frozen (the first poll at or past half). */
  readonly atRecords: number
  /** Mirror start until the freeze. */
  readonly frozenAtSeconds: number
  /** Thaw until every record was on the target: how long the mirror took to catch up after the outage. */
  readonly resumedToDoneSeconds: number
}

/**
 * Freezes the target broker (SIGSTOP: ports open, connections established, nothing answers, as a
 * hung or partitioned broker) for `seconds`, then lets it go on (SIGCONT). Returns early, thawed,
 * when `stopWaiting()` says so (the mirror exited). The broker is registered for `thawAll()` while
 * frozen, so a Ctrl-C never leaves it stopped.
 */
export async function freezeTarget (target: LocalCluster, seconds: number, stopWaiting: () => boolean): Promise<void> {
  frozen.add(target)
  try {
    await target.freeze()
    const until = performance.now() + seconds * 1000
    while (performance.now() < until && !stopWaiting()) await sleep(Math.min(100, Math.max(0, until - performance.now())))
  } finally {
    await target.thaw()
    frozen.delete(target)
  }
}

/** Thaws every broker `freezeTarget` left frozen (idempotent). */
export async function thawAll (): Promise<void> {
  for (const cluster of [...frozen]) {
    await cluster.thaw()
    frozen.delete(cluster)
  }
}

/** One line for the results' setup notes. */
export function outageNote (seconds: number): string {
  return `Target outage (\`--target-outage-seconds ${seconds}\`): in every contender run (not the ceiling), at the first poll that saw half of the records or more on the target, the target broker was frozen with SIGSTOP for ${seconds} s (its ports stay open and its connections established, but nothing answers, as a hung broker or a network partition) and then let go on with SIGCONT; the benchmark does not poll the target meanwhile. The times and rates above include the outage; the *Target outage* table says when it came and how long each mirror took to catch up after it.`
}
