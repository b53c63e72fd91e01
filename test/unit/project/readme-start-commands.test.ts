import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../../', import.meta.url))

/** `npx mirror-sidecar`, `npm exec mirror-sidecar`, `npm exec -- mirror-check`, ... */
const THROUGH_NPM = /\b(npx|npm exec)(\s+--)?\s+(mirror-sidecar|mirror-check)\b/

function sources (dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter(name => /\.(ts|sh|md)$/.test(name) && !name.startsWith('results'))
    .map(name => join(dir, name))
}

test('the README, the Dockerfile, our scripts and package.json start the bins directly, never through npx or npm exec', () => {
  const files = [
    'README.md',
    'CONTRIBUTING.md',
    'Dockerfile',
    'package.json',
    '.ci/run',
    ...sources('docs').filter(file => file.endsWith('.md')),
    ...sources('scripts'),
    ...sources('bench'),
  ]
  const found = files.flatMap(file => readFileSync(join(root, file), 'utf8').split('\n')
    .flatMap((line, index) => THROUGH_NPM.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []))
  assert.deepEqual(found, [])
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /never\s+through `npx` or `npm exec`: on SIGTERM npm's wrapper exits 143/)
})
