/** One record as an independent reader saw it: its partition and key. */
export interface KeyedRecord {
  readonly partition: number
  readonly key: string
}

/** What went wrong in one partition of a copy. */
export interface PartitionFindings {
  readonly partition: number
  /** Source records with fewer copies on the target than on the source. */
  readonly missing: number
  /** Target copies beyond the source's count of that key (a key copied twice, or absent on the source). */
  readonly duplicates: number
  readonly firstMissingKeys: readonly string[]
  readonly firstDuplicateKeys: readonly string[]
  /** Where the target's order (first copies only) leaves the source's, when it does. */
  readonly firstOutOfOrder?: { readonly index: number, readonly sourceKey: string, readonly targetKey: string }
}

/** A copy compared with its source, key by key per partition. */
export interface CopyComparison {
  readonly sourceRecords: number
  readonly targetRecords: number
  readonly missing: number
  readonly duplicates: number
  /** Partitions whose first copies are not in the source's order. */
  readonly outOfOrderPartitions: number
  /** Only the partitions with a finding, by partition number. */
  readonly partitions: readonly PartitionFindings[]
}

const KEYS_SHOWN = 5

function byPartition (records: readonly KeyedRecord[]): Map<number, string[]> {
  const out = new Map<number, string[]>()
  for (const r of records) {
    let keys = out.get(r.partition)
    if (keys === undefined) out.set(r.partition, keys = [])
    keys.push(r.key)
  }
  return out
}

function counts (keys: readonly string[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const key of keys) out.set(key, (out.get(key) ?? 0) + 1)
  return out
}

/**
 * Compares the target's records with the source's, each list in log order per partition (as a
 * reader of each partition returns them). A key the source holds n times must be on the target
 * n times in the same partition: fewer are missing, more are duplicates. Order: the target's
 * copies up to each key's source count, taken in target order, must follow the source's order
 * of the keys that reached the target.
 */
export function compareCopies (source: readonly KeyedRecord[], target: readonly KeyedRecord[]): CopyComparison {
  const [from, to] = [byPartition(source), byPartition(target)]
  const partitions: PartitionFindings[] = []
  let missing = 0
  let duplicates = 0
  let outOfOrderPartitions = 0
  for (const partition of [...new Set([...from.keys(), ...to.keys()])].sort((a, b) => a - b)) {
    const sourceKeys = from.get(partition) ?? []
    const targetKeys = to.get(partition) ?? []
    const [sourceCounts, targetCounts] = [counts(sourceKeys), counts(targetKeys)]
    const missingKeys: string[] = []
    let partitionMissing = 0
    for (const [key, n] of sourceCounts) {
      const short = n - (targetCounts.get(key) ?? 0)
      if (short > 0) { partitionMissing += short; if (missingKeys.length < KEYS_SHOWN) missingKeys.push(key) }
    }
    const duplicateKeys: string[] = []
    let partitionDuplicates = 0
    for (const [key, n] of targetCounts) {
      const extra = n - (sourceCounts.get(key) ?? 0)
      if (extra > 0) { partitionDuplicates += extra; if (duplicateKeys.length < KEYS_SHOWN) duplicateKeys.push(key) }
    }
    // Order: first copies of the target against the source's keys that arrived.
    const taken = new Map<string, number>()
    const targetFirst = targetKeys.filter(key => {
      const n = (taken.get(key) ?? 0) + 1
      taken.set(key, n)
      return n <= (sourceCounts.get(key) ?? 0)
    })
    const arrived = new Map(targetCounts)
    const sourceArrived = sourceKeys.filter(key => {
      const left = arrived.get(key) ?? 0
      if (left <= 0) return false
      arrived.set(key, left - 1)
      return true
    })
    let firstOutOfOrder: PartitionFindings['firstOutOfOrder']
    for (let i = 0; i < sourceArrived.length; i++) {
      if (sourceArrived[i] !== targetFirst[i]) {
        firstOutOfOrder = { index: i, sourceKey: sourceArrived[i] as string, targetKey: targetFirst[i] ?? '(none)' }
        break
      }
    }
    missing += partitionMissing
    duplicates += partitionDuplicates
    if (firstOutOfOrder !== undefined) outOfOrderPartitions++
    if (partitionMissing > 0 || partitionDuplicates > 0 || firstOutOfOrder !== undefined) {
      partitions.push({
        partition,
        missing: partitionMissing,
        duplicates: partitionDuplicates,
        firstMissingKeys: missingKeys,
        firstDuplicateKeys: duplicateKeys,
        ...(firstOutOfOrder === undefined ? {} : { firstOutOfOrder }),
      })
    }
  }
  return { sourceRecords: source.length, targetRecords: target.length, missing, duplicates, outOfOrderPartitions, partitions }
}

/** The comparison as lines for a test's diagnostics: totals, then one line per partition with a finding. */
export function describeComparison (c: CopyComparison): string {
  const lines = [
    `source ${c.sourceRecords} records, target ${c.targetRecords}: ${c.missing} missing, ${c.duplicates} duplicates, ${c.outOfOrderPartitions} partitions out of order`,
  ]
  for (const p of c.partitions) {
    const parts = [`  partition ${p.partition}: ${p.missing} missing, ${p.duplicates} duplicates`]
    if (p.firstMissingKeys.length > 0) parts.push(`first missing ${p.firstMissingKeys.join(' ')}`)
    if (p.firstDuplicateKeys.length > 0) parts.push(`first duplicated ${p.firstDuplicateKeys.join(' ')}`)
    if (p.firstOutOfOrder !== undefined) {
      parts.push(`order differs at #${p.firstOutOfOrder.index} (source ${p.firstOutOfOrder.sourceKey}, target ${p.firstOutOfOrder.targetKey})`)
    }
    lines.push(parts.join('; '))
  }
  return lines.join('\n')
}
