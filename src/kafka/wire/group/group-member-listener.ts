import type { TopicPartition } from './topic-partition.js'

/**
 * What a group member tells its owner, each call awaited before the member goes on. Calls never overlap:
 * one reconciliation at a time.
 */
export interface GroupMemberListener {
  /** The member owns `partitions` from now on (each call names only partitions it did not own). */
  assigned (partitions: readonly TopicPartition[]): Promise<void>
  /**
   * The member must give `partitions` up. The owner stops fetching them, drains what it holds of them and
   * commits (through the member, whose generation or epoch is still current) before the promise resolves;
   * only then does the member tell the group they are free. A rejection is logged by the caller of the
   * member and the partitions are given up all the same (the group would take them at the rebalance timeout).
   */
  revoking (partitions: readonly TopicPartition[]): Promise<void>
  /**
   * The member lost `partitions` without a rebalance (fenced, its session expired): another member may own
   * them already, so nothing may be committed for them; the owner drops what it holds of them.
   */
  lost (partitions: readonly TopicPartition[]): Promise<void>
}
