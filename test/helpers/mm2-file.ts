import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Writes `lines` as an mm2.properties file (`key = value` per line) in a fresh temporary folder; returns its path. */
export function mm2File (lines: Record<string, string>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mm2-')), 'mm2.properties')
  writeFileSync(path, Object.entries(lines).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n')
  return path
}
