import assert from 'node:assert/strict'
import { test } from 'node:test'
import { importsOf, readSource, sourceFiles } from '../../helpers/source-imports.js'

const EXPORTED_VALUE = /^export\s+(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|class)\s+(\w+)/gm

test('every function, class and constant src/ exports is imported by another file (src, tests, bench, scripts, grafana)', () => {
  const imported = new Map<string, Set<string>>()
  for (const file of ['src', 'test', 'bench', 'scripts', 'grafana/src'].flatMap(sourceFiles)) {
    for (const { file: target, names } of importsOf(file, readSource(file))) {
      const names_ = imported.get(target) ?? new Set<string>()
      for (const name of names) names_.add(name)
      imported.set(target, names_)
    }
  }
  const unused = sourceFiles('src').flatMap(file => [...readSource(file).matchAll(EXPORTED_VALUE)]
    .map(match => match[1]!)
    .filter(name => !imported.get(file)?.has(name) && !imported.get(file)?.has('*'))
    .map(name => `${file} ${name}`))
  assert.deepEqual(unused, [], 'exported but imported by no other file: stop exporting it, or delete it when its own file does not use it either')
})
