import { spawn } from 'node:child_process'
import { track } from './child-registry.js'
import type { OffsetRecord } from './duplicate-copies.js'

/**
 * Every record of `topic` as kcat reads it from the beginning to the end of each partition, with
 * read_committed (records of aborted or open transactions are not seen), in log order per
 * partition: partition, offset and key.
 */
export async function readOffsetKeys (bootstrap: string, topic: string): Promise<OffsetRecord[]> {
  const child = spawn(
    'kcat',
    ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%p %o %k\n'],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  )
  const tracked = track('kcat reader', child)
  const records: OffsetRecord[] = []
  let partial = ''
  let stderr = ''
  child.stdout.setEncoding('latin1')
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) {
      const [partition, offset, key] = line.split(' ')
      records.push({ partition: Number(partition), offset: Number(offset), key: key ?? '' })
    }
  })
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4_000) })
  const { code } = await tracked.exited
  if (code !== 0) throw new Error(`kcat could not read ${topic} (exit ${code}): ${stderr.trim()}`)
  return records
}
