import type { MirrorBatch } from '../../ports/mirror-batch.js'
import type { AckListener, AckSegment, TransactionRecord } from '../../ports/ports.js'

/** The loss monitor's part (`LossMonitor`): it hears each acknowledgement, and may refuse a commit. */
export interface AckGuard {
  acknowledged: (batch: MirrorBatch, segments: readonly AckSegment[]) => void
  /** Before every flush, so before every source commit: rejects when no commit may go through (a fatal loss). */
  beforeFlush: () => Promise<void>
}

/** A writer of offset syncs (`OffsetSyncWriter`, `Mm2OffsetSyncEmitter`): it never reads a batch after its acknowledgement. */
export type SyncListener = Pick<AckListener, 'acknowledged' | 'flush'> & Required<Pick<AckListener, 'transactionRecords'>> & { readonly heldUntil?: never }

/** The digests (`DigestWriter`): it may read a batch after its acknowledgement, and writes nothing in a lane's transaction. */
export type HoldingListener = Pick<AckListener, 'acknowledged' | 'flush'> & Required<Pick<AckListener, 'heldUntil'>> & {
  readonly transactionRecords?: never
}

/** What hears a flow's acknowledgements, by role; every role but the guard is optional (set by the flow's config). */
export interface AckListenerParts {
  readonly guard: AckGuard
  /** The sidecar's own offset syncs (ranges and positions, `offset.syncs`). */
  readonly offsetSyncs?: SyncListener | undefined
  /** MirrorMaker 2's offset syncs (`emit.offset-syncs.enabled`). */
  readonly mm2OffsetSyncs?: SyncListener | undefined
  readonly digests?: HoldingListener | undefined
}

/**
 * The one ack listener of a flow (`MirrorFlowOptions.ackListener`), made of its parts in the one
 * order that keeps their rules. The flow's `AckRecorder` calls it after the acknowledgement moved
 * the partition's committable offset; exactly-once, only once the lane's transaction committed.
 *
 * Invariants (its unit test checks each):
 * - A: the guard comes first. It hears each acknowledgement before the writers, and its check runs
 *   before any part is flushed: a flush it refuses flushes nothing, and the commit after it is
 *   skipped (no committed offset claims records the target may not hold).
 * - B: a batch is held for the part that reads it after its acknowledgement: `heldUntil` is the
 *   digests' own, so the queue keeps the batch's bytes counted until its hashing ended (Invariant A
 *   of `BoundedQueue`). The sync writers cannot hold a batch (their type says so), so no part's
 *   answer is lost in the composition.
 * - C: a lane's transaction carries the sidecar's offset syncs, then MirrorMaker 2's; the digests
 *   write none in it (their type says so). Without a sync writer there is no `transactionRecords`.
 * - D: a flush resolves once every part's flush resolved (the commit waits for all); when any
 *   fails, the others are still awaited, and the first failure in the order offset syncs, MirrorMaker 2's
 *   syncs, digests is thrown.
 */
export function flowAckListener (parts: AckListenerParts): AckListener {
  const { guard, offsetSyncs, mm2OffsetSyncs, digests } = parts
  // The order of every call below: Invariants A, C and D.
  const writers = [offsetSyncs, mm2OffsetSyncs, digests].filter(part => part !== undefined)
  const syncs = [offsetSyncs, mm2OffsetSyncs].filter(part => part !== undefined)
  return {
    acknowledged: (batch, segments) => {
      guard.acknowledged(batch, segments)
      for (const writer of writers) writer.acknowledged(batch, segments)
    },
    // Invariant B: only the digests read a batch after its acknowledgement.
    ...(digests === undefined ? {} : { heldUntil: (batch: MirrorBatch) => digests.heldUntil(batch) }),
    flush: async committing => {
      // Invariant A: refused before any part flushes.
      await guard.beforeFlush()
      const results = await Promise.allSettled(writers.map(writer => writer.flush(committing)))
      for (const result of results) if (result.status === 'rejected') throw result.reason
    },
    ...(syncs.length === 0
      ? {}
      : { transactionRecords: (acks, positions) => syncs.flatMap((sync): TransactionRecord[] => sync.transactionRecords(acks, positions)) }),
  }
}
