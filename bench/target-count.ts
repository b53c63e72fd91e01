import { kcatLines } from './kcat-lines.js'

/** What is on a target topic: every record read once, and how many distinct keys among them. */
export interface TargetCount {
  readonly records: number
  readonly distinctKeys: number
  /** Records read per partition number. */
  readonly partitionRecords: ReadonlyMap<number, number>
}

/**
 * Reads the whole topic with `kcat -C -e` (exits at the end of every partition) and counts records
 * and distinct keys. The preload gives each record its own key, so `records - distinctKeys` are
 * duplicates and `preloaded - distinctKeys` are missing records. Also reads a (compacted) source topic.
 */
export async function countTargetRecords (bootstrap: string, topic: string, readCommitted = false): Promise<TargetCount> {
  const isolation = readCommitted ? ['-X', 'isolation.level=read_committed'] : []
  const keys = new Set<string>()
  const partitionRecords = new Map<number, number>()
  let records = 0
  await kcatLines('kcat target count', topic, ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', ...isolation, '-f', '%p %k\n'], line => {
    const space = line.indexOf(' ')
    const partition = Number(line.slice(0, space))
    records++
    keys.add(line.slice(space + 1))
    partitionRecords.set(partition, (partitionRecords.get(partition) ?? 0) + 1)
  })
  return { records, distinctKeys: keys.size, partitionRecords }
}
