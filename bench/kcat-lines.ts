import { spawn } from 'node:child_process'
import { track } from './child-registry.js'

/**
 * Runs kcat with `args` (a consumer that exits at the end, `-C ... -e`) and hands each line it
 * prints to `line` as it comes (latin1, so a key's bytes are kept one to one); resolves when kcat
 * exited 0, else rejects naming `topic`, the exit code and the end of kcat's stderr. `label` names
 * the child in the benchmark's child registry.
 */
export async function kcatLines (label: string, topic: string, args: readonly string[], line: (text: string) => void): Promise<void> {
  const child = spawn('kcat', [...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  const tracked = track(label, child)
  let partial = ''
  let stderr = ''
  child.stdout.setEncoding('latin1')
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const text of lines) line(text)
  })
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4_000) })
  const { code } = await tracked.exited
  if (code !== 0) throw new Error(`kcat could not read ${topic} (exit ${code}): ${stderr.trim()}`)
}
