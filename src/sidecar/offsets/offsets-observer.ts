import type { FlowLabels } from '../../ports/pipeline-observer.js'

/**
 * Why a group partition got no checkpoint: its offset is past what was mirrored, there are no
 * syncs, or it is below the flow's first copied record while the target holds records the flow
 * did not write there (another mirror's copies, such as MirrorMaker 2's before a takeover).
 */
export type TranslationFailure = 'not-yet-mirrored' | 'no-syncs' | 'before-first-sync'

/**
 * What the offset-sync writer and the group offset sync report, for metrics. Called off the hot
 * path (once per flush or sync cycle); implementations must be cheap and must not throw.
 * Suggested metric names: `kafka_mirror_offset_syncs_written_total` (syncsWritten),
 * `kafka_mirror_offset_sync_failures_total`, `kafka_mirror_checkpoints_written_total`,
 * `kafka_mirror_group_offsets_synced_total`, `kafka_mirror_group_sync_skipped_total{reason}`,
 * `kafka_mirror_offset_translation_failures_total{reason}`, and the gauge
 * `kafka_mirror_checkpoint_age_seconds{group}` from `GroupOffsetSync.snapshot()` at scrape time.
 */
export interface OffsetsObserver {
  /** Offset-sync records made durable before a commit: ranges and positions. */
  syncsWritten?: (flow: FlowLabels, ranges: number, positions: number) => void
  /** Ranges whose target records are all gone were tombstoned (`OffsetSyncPruner`). */
  syncsPruned?: (flow: FlowLabels, ranges: number) => void
  /** Writing syncs failed; the source commit that needed them was skipped (retried at the next commit). */
  syncWriteFailed?: (flow: FlowLabels, reason: string) => void
  /** Checkpoints written for `group` (partitions whose translation changed). */
  checkpointsWritten?: (flow: FlowLabels, group: string, count: number, atMs: number) => void
  /** Committed offsets written into `group` on the target. */
  groupOffsetsSynced?: (flow: FlowLabels, group: string, partitions: number) => void
  /** A group was left alone on the target: `active` (it has members) or `error`. */
  groupSkipped?: (flow: FlowLabels, group: string, reason: 'active' | 'error') => void
  /** A partition of a group could not be translated: `not-yet-mirrored`, `no-syncs`. */
  translationFailed?: (flow: FlowLabels, group: string, reason: TranslationFailure) => void
  /** Source records skipped because the mirror of the opposite direction wrote them (active-active, `MirrorProducers`). */
  oppositeMirrorSkipped?: (flow: FlowLabels, records: number) => void
}

/** Every event of `OffsetsObserver`, for fanning one event out to several observers (`fanOut`). */
export const OffsetsObserverEvents = {
  syncsWritten: true,
  syncsPruned: true,
  syncWriteFailed: true,
  checkpointsWritten: true,
  groupOffsetsSynced: true,
  groupSkipped: true,
  translationFailed: true,
  oppositeMirrorSkipped: true,
} as const satisfies Record<keyof OffsetsObserver, true>
