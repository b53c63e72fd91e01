import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root, from dist/test/helpers/. */
export const REPOSITORY = fileURLToPath(new URL('../../../', import.meta.url))

/** The `.ts` files under `folder` (a repository path), as repository paths. */
export function sourceFiles (folder: string): string[] {
  return readdirSync(join(REPOSITORY, folder), { withFileTypes: true }).flatMap(entry => {
    const path = `${folder}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

export function readSource (file: string): string {
  return readFileSync(join(REPOSITORY, file), 'utf8')
}

/** One import of a relative path: the file it names (its `.ts` source) and the names it takes (`*` for all). */
export interface SourceImport {
  readonly file: string
  readonly names: readonly string[]
}

// Static imports and exports (`import x from`, `import type { x } from`, `export * from`, over several lines), side-effect imports, `import('...')`.
const FROM = /^\s*(?:import|export)\s+(?:type\s+)?([\w\s{},*$]*?)\s*\bfrom\s*'(\.{1,2}\/[^']+)'/gm
const BARE = /^\s*import\s+'(\.{1,2}\/[^']+)'/gm
const DYNAMIC = /\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g

/** The relative imports of `file` (a repository path) whose text is `text`. */
export function importsOf (file: string, text: string): SourceImport[] {
  const resolve = (path: string): string => normalize(join(dirname(file), path)).replace(/\.js$/, '.ts')
  const named = (clause: string): string[] => {
    const braces = /\{([^}]*)\}/.exec(clause)
    if (braces === null) return ['*']
    return braces[1]!.split(',').map(part => part.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!).filter(name => name !== '')
  }
  return [
    ...[...text.matchAll(FROM)].map(match => ({ file: resolve(match[2]!), names: named(match[1]!) })),
    ...[...text.matchAll(BARE)].map(match => ({ file: resolve(match[1]!), names: [] })),
    ...[...text.matchAll(DYNAMIC)].map(match => ({ file: resolve(match[1]!), names: ['*'] })),
  ]
}
