import type { OffsetRecord } from './duplicate-copies.js'
import { kcatLines } from './kcat-lines.js'

/**
 * Every record of `topic` as kcat reads it from the beginning to the end of each partition, with
 * read_committed (records of aborted or open transactions are not seen), in log order per
 * partition: partition, offset and key.
 */
export async function readOffsetKeys (bootstrap: string, topic: string): Promise<OffsetRecord[]> {
  const records: OffsetRecord[] = []
  const args = ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%p %o %k\n']
  await kcatLines('kcat reader', topic, args, line => {
    const [partition, offset, key] = line.split(' ')
    records.push({ partition: Number(partition), offset: Number(offset), key: key ?? '' })
  })
  return records
}
