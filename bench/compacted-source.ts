import { setTimeout as sleep } from 'node:timers/promises'
import { countTargetRecords, type TargetCount } from './target-count.js'
import type { AdminCluster, TopicAdmin } from './topic-admin.js'

/**
 * Topic settings of the compacted scenario's source: small segments that roll during the preload
 * (only closed segments are cleaned), cleaned as soon as 1% is dirty, no minimum lag. Kafka 4
 * refuses `segment.bytes` below 1 MiB; `segment.ms` rolls a segment at the next append after 100 ms.
 */
export const COMPACTED_TOPIC_CONFIGS = Object.freeze({
  'cleanup.policy': 'compact',
  'segment.bytes': String(2 ** 20),
  'segment.ms': '100',
  'min.cleanable.dirty.ratio': '0.01',
  'min.compaction.lag.ms': '0',
})

/** Where the log cleaner stands on one topic: per partition, records readable against the offsets they span. */
export interface CompactionState {
  readonly partitions: number
  /** Partitions with fewer readable records than offsets between log start and high watermark. */
  readonly partitionsWithGaps: number
  /** Offsets with no record left (removed by the cleaner), all partitions. */
  readonly removedRecords: number
}

/** Compares the offset span of each partition with the records a consumer read from it. */
export function compactionState (offsetSpans: ReadonlyMap<number, number>, readable: ReadonlyMap<number, number>): CompactionState {
  let partitionsWithGaps = 0
  let removedRecords = 0
  for (const [partition, span] of offsetSpans) {
    const removed = span - (readable.get(partition) ?? 0)
    if (removed > 0) partitionsWithGaps++
    removedRecords += Math.max(removed, 0)
  }
  return { partitions: offsetSpans.size, partitionsWithGaps, removedRecords }
}

/** True once every partition has gaps and two reads in a row found the same records per partition (the cleaner is done with them). */
export function compactionSettled (
  offsetSpans: ReadonlyMap<number, number>,
  previous: ReadonlyMap<number, number> | undefined,
  current: ReadonlyMap<number, number>
): boolean {
  const state = compactionState(offsetSpans, current)
  if (state.partitions === 0 || state.partitionsWithGaps < state.partitions || previous === undefined) return false
  for (const [partition, records] of current) if (previous.get(partition) !== records) return false
  return previous.size === current.size
}

/**
 * Waits until the log cleaner has left offset gaps in every partition of `topic` and stopped
 * changing it (the broker's cleaner looks for work every `log.cleaner.backoff.ms`, 15 s by
 * default), reading the topic with kcat each time; returns what is left: what a mirror must copy.
 */
export async function waitForCompaction (
  bootstrap: string,
  topic: string,
  admin: TopicAdmin<AdminCluster>,
  timeoutMs: number,
  log: (line: string) => void
): Promise<TargetCount & CompactionState> {
  const started = performance.now()
  let previous: TargetCount | undefined
  for (;;) {
    const spans = await admin.partitionOffsetSpans(topic)
    const current = await countTargetRecords(bootstrap, topic)
    const state = compactionState(spans, current.partitionRecords)
    if (compactionSettled(spans, previous?.partitionRecords, current.partitionRecords)) {
      log(
        `compaction of ${topic}: ${current.records} records left of ${current.records + state.removedRecords} offsets (${current.distinctKeys} distinct keys), gaps in all ${state.partitions} partitions, after ${((performance.now() - started) / 1000).toFixed(1)} s`
      )
      return { ...current, ...state }
    }
    if (performance.now() - started > timeoutMs) {
      throw new Error(
        `the log cleaner left gaps in ${state.partitionsWithGaps} of ${state.partitions} partitions of ${topic} within ${Math.round(timeoutMs / 1000)} s (${state.removedRecords} records removed); see the source broker's log (log.cleaner.enable must be true)`
      )
    }
    previous = current
    await sleep(2_000)
  }
}
