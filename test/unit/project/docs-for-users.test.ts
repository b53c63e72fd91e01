import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { MM1_FLAGS } from '../../../src/config/mm1-args.js'

const root = fileURLToPath(new URL('../../../../', import.meta.url))
const read = (file: string): string => readFileSync(join(root, file), 'utf8')
const USER_DOCS = ['README.md', ...readdirSync(join(root, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]

test('the README fits a first read: at most 250 lines, install, a run, mirror-check, and the test command CI calls', () => {
  const readme = read('README.md')
  assert.ok(readme.split('\n').length <= 250, `README.md has ${readme.split('\n').length} lines`)
  for (const needed of [
    'npm install -g ./kafka-mirror-sidecar-',
    'docker build',
    'mirror-sidecar --consumer.config',
    'mirror-sidecar mm2.properties',
    'mirror-check lag',
    'mirror-check verify',
    '`npm test`',
  ]) {
    assert.ok(readme.includes(needed), `README.md names ${needed}`)
  }
})

test('every mirror-sidecar flag is in the configuration reference', () => {
  const reference = read('docs/configuration.md')
  const missing = Object.keys(MM1_FLAGS).filter(flag => !reference.includes(`--${flag}`))
  assert.deepEqual(missing, [])
})

test('README and docs describe what is: no development history, no citations of benchmark result folders', () => {
  const history = /\bsession ?\d+\b|bench\/results\/|\bpreviously\b|\bused to\b|\bbefore (?:the|this) (?:fix|change|hunk|design)\b/i
  const found = USER_DOCS.flatMap(file => read(file).split('\n').flatMap((line, index) => history.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []))
  assert.deepEqual(found, [])
})

test('every relative link of README and docs points to a file that exists', () => {
  const broken: string[] = []
  for (const file of USER_DOCS) {
    for (const [, target = ''] of read(file).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const path = join(root, file.includes('/') ? 'docs' : '', target)
      try { readFileSync(path) } catch { broken.push(`${file}: ${target}`) }
    }
  }
  assert.deepEqual(broken, [])
})
