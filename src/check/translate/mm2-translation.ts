import { Mm2OffsetSyncRules } from '../../mirror-topics/mm2-offset-sync-rules.js'
import type { Mm2OffsetSyncRecord } from '../../mirror-topics/mm2-records.js'

/**
 * MirrorMaker 2's offset translation rule, for comparison (Kafka 3.6+ `MirrorSourceTask` and
 * `OffsetSyncStore`): a sync is emitted for the first record, when upstream offsets skip, when the
 * downstream offset went backwards, or when translating from the last sync would be `maxOffsetLag`
 * (offset.lag.max, default 100) or more behind; a group offset translates to the newest sync at or
 * below it: its downstream offset, plus 1 unless the group is exactly at the sync. The 64-sync
 * store limit is not modelled (it only makes translation coarser).
 */
export interface Mm2OffsetSync {
  readonly upstream: bigint
  readonly downstream: bigint
}

/**
 * The syncs MirrorMaker 2's rules (`Mm2OffsetSyncRules`) ask for at once for records copied as
 * (upstream offset, downstream offset), in order; without the delayed sync of the last record.
 */
export function mm2OffsetSyncs (copies: Iterable<readonly [bigint, bigint]>, maxOffsetLag = 100n): Mm2OffsetSync[] {
  const rules = new Mm2OffsetSyncRules(Number(maxOffsetLag))
  const asked: Mm2OffsetSyncRecord[] = []
  for (const [upstream, downstream] of copies) rules.acknowledgedRun('', 0, upstream, downstream, 1, false, asked)
  return asked.map(sync => ({ upstream: sync.upstreamOffset, downstream: sync.downstreamOffset }))
}

/** MirrorMaker 2's translation of a group offset; undefined when no sync is at or below it. */
export function mm2Translate (syncs: readonly Mm2OffsetSync[], upstreamOffset: bigint): bigint | undefined {
  let best: Mm2OffsetSync | undefined
  for (const sync of syncs) if (sync.upstream <= upstreamOffset && (best === undefined || sync.upstream >= best.upstream)) best = sync
  if (best === undefined) return undefined
  return best.downstream + (best.upstream === upstreamOffset ? 0n : 1n)
}
