/** One record as kcat read it: partition, offset and key. */
export interface OffsetRecord {
  readonly partition: number
  readonly offset: number
  readonly key: string
}

/**
 * The target records that are extra copies: per partition, in target order, every occurrence of
 * a key beyond the number of times the source holds it in that partition (a key absent on the
 * source counts from its first copy). Invariant: their number equals `compareCopies`' duplicates
 * for the same records.
 */
export function duplicateCopies (
  source: ReadonlyArray<{ readonly partition: number, readonly key: string }>,
  target: readonly OffsetRecord[]
): OffsetRecord[] {
  const onSource = new Map<string, number>()
  for (const record of source) {
    const id = `${record.partition}|${record.key}`
    onSource.set(id, (onSource.get(id) ?? 0) + 1)
  }
  const seen = new Map<string, number>()
  const extra: OffsetRecord[] = []
  for (const record of target) {
    const id = `${record.partition}|${record.key}`
    const n = (seen.get(id) ?? 0) + 1
    seen.set(id, n)
    if (n > (onSource.get(id) ?? 0)) extra.push(record)
  }
  return extra
}
