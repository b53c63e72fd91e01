/**
 * Where a partition the group has no committed offset for starts, or undefined for
 * `auto.offset.reset`. The record source commits that offset through its group member, in the
 * group's generation, before it fetches the partition.
 */
export type StartOffset = (topic: string, partition: number) => bigint | undefined
