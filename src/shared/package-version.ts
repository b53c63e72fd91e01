import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'kafka-mirror-sidecar'

/** The sidecar's version from its package.json, found by walking up from this file (works from `src/` and `dist/`). */
export function packageVersion (): string {
  const dir = packageDir()
  if (dir === undefined) return 'unknown'
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version as string
}

/** The folder of the package's package.json (the installed package, or the repository), found by walking up from this file; undefined when none is found. */
export function packageDir (): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown, version?: unknown }
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') return dir
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}
