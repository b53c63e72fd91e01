import { spawn } from 'node:child_process'
import { track } from './child-registry.js'

/** What is on a target topic: every record read once, and how many distinct keys among them. */
export interface TargetCount {
  readonly records: number
  readonly distinctKeys: number
}

/**
 * Reads the whole topic with `kcat -C -e` (exits at the end of every partition) and counts records
 * and distinct keys. The preload gives each record its own key, so `records - distinctKeys` are
 * duplicates and `preloaded - distinctKeys` are missing records.
 */
export async function countTargetRecords (bootstrap: string, topic: string): Promise<TargetCount> {
  const child = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k\n'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const tracked = track('kcat target count', child)
  const keys = new Set<string>()
  let records = 0
  let partial = ''
  let stderr = ''
  child.stdout.setEncoding('latin1')
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) {
      records++
      keys.add(line)
    }
  })
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4_000) })
  const { code } = await tracked.exited
  if (code !== 0) throw new Error(`kcat could not read ${topic} (exit ${code}): ${stderr.trim()}`)
  return { records, distinctKeys: keys.size }
}
