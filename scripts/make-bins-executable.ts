/**
 * Last step of `npm run build`: tsc writes every file without the execute bit, and the build
 * removes dist/ first, so the bins `npm ci` linked would answer "Permission denied" afterwards.
 * Makes each `bin` of package.json executable and checks it starts with `#!/usr/bin/env node`.
 */
import { chmodSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const SHEBANG = '#!/usr/bin/env node'

/** The package root: dist/scripts/ -> the folder holding package.json. */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Paths of package.json's `bin` entries, relative to the package root. */
export function binPaths (packageRoot = root): string[] {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> }
  const bin = manifest.bin ?? {}
  return typeof bin === 'string' ? [bin] : Object.values(bin)
}

/** chmod 755 every bin; returns the problems (a missing file, a missing `#!/usr/bin/env node` line). */
export function makeBinsExecutable (packageRoot = root): string[] {
  const problems: string[] = []
  for (const path of binPaths(packageRoot)) {
    const file = join(packageRoot, path)
    let firstLine: string
    try {
      firstLine = readFileSync(file, 'utf8').split('\n', 1)[0] ?? ''
    } catch {
      problems.push(`${path}: not built; package.json's bin names a file tsc did not write`)
      continue
    }
    if (firstLine !== SHEBANG) problems.push(`${path}: first line is "${firstLine}"; the source must start with ${SHEBANG}`)
    chmodSync(file, statSync(file).mode | 0o755)
  }
  return problems
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const problems = makeBinsExecutable()
  for (const problem of problems) process.stderr.write(`build: ${problem}\n`)
  if (problems.length > 0) process.exitCode = 1
}
