import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { importsOf, readSource, REPOSITORY, sourceFiles } from '../helpers/source-imports.js'

/**
 * The layer diagram of docs/architecture.md, as data. Each column lists its folders (or top-level
 * files) from the bottom up. A folder imports its own files, the folders below it in its column,
 * and the shared column; a shared folder imports only the shared folders below it. The two
 * programs never import each other, and mirror-check reaches the pipeline only through kafka/.
 */
const SHARED = ['src/shared/', 'src/config/', 'src/pipeline/', 'src/kafka/', 'src/mirror-topics/']
const SIDECAR = ['src/tracing/', 'src/offsets/', 'src/audit/', 'src/metrics/', 'src/http/', 'src/flow-runtime-factory.ts', 'src/mirror-sidecar.ts', 'src/index.ts', 'src/bin/']
const CHECK = ['src/check/cli/', 'src/check/translate/', 'src/check/lag/', 'src/check/verify/', 'src/check/commands/', 'src/check/mirror-check.ts']
/** Shared folders mirror-check does not import: the pipeline is the sidecar's copy engine. */
const NOT_FOR_CHECK = new Set(['src/pipeline/'])

function mayImport (from: string, to: string): boolean {
  if (from === to) return true
  const column = [SHARED, SIDECAR, CHECK].find(units => units.includes(from))!
  if (column.includes(to)) return column.indexOf(to) < column.indexOf(from)
  if (!SHARED.includes(to)) return false
  return column !== CHECK || !NOT_FOR_CHECK.has(to)
}

/** The folder (or top-level file) of the diagram a file of src/ belongs to; undefined when the diagram has none. */
function unitOf (file: string): string | undefined {
  return [...SHARED, ...SIDECAR, ...CHECK].filter(unit => unit.endsWith('/') ? file.startsWith(unit) : file === unit)
    .sort((a, b) => b.length - a.length)[0]
}

function importGraph (): Map<string, string[]> {
  return new Map(sourceFiles('src').map(file => [file, importsOf(file, readSource(file)).map(imported => imported.file)]))
}

/** Every import that breaks the diagram, as `from -> to (reason)`. */
function layerViolations (graph: ReadonlyMap<string, readonly string[]>): string[] {
  const violations: string[] = []
  for (const [file, imports] of graph) {
    const from = unitOf(file)
    if (from === undefined) {
      violations.push(`${file}: in no folder of the diagram; add its folder to test/unit/layers.test.ts and docs/architecture.md`)
      continue
    }
    for (const target of imports) {
      const to = unitOf(target)
      if (to === undefined) violations.push(`${file} -> ${target}: outside the diagram`)
      else if (!mayImport(from, to)) violations.push(`${file} -> ${target}: ${from} may not import ${to}`)
      else if (from === 'src/check/commands/' && to === from && commandOf(file) !== commandOf(target)) {
        violations.push(`${file} -> ${target}: a command imports no other command; move what both need out of commands/`)
      }
    }
  }
  return violations
}

/** `verify` for commands/verify.ts, commands/verify-args.ts and commands/verify-digests.ts: the files of one command. */
function commandOf (file: string): string {
  return relative('src/check/commands', file).split(/[-.]/)[0]!
}

/** Import circles among the files of src/, each as the files along it. */
function circles (graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string): void => {
    state.set(file, 'open')
    path.push(file)
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') found.push([...path.slice(path.indexOf(target)), target])
      else if (state.get(target) === undefined && graph.has(target)) visit(target)
    }
    path.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file)
  return found
}

test('every import of src/ follows the layer diagram of docs/architecture.md', () => {
  const graph = importGraph()
  assert.ok(graph.size > 150, `read ${graph.size} files of src/`)
  for (const [file, imports] of graph) for (const target of imports) assert.ok(existsSync(join(REPOSITORY, target)), `${file} imports ${target}, which the check cannot find`)
  assert.deepEqual(layerViolations(graph), [])
})

test('no import circle among the files of src/', () => {
  assert.deepEqual(circles(importGraph()), [])
})

test('the layer check finds an arrow pointing up, one across the wall between the programs, and a command importing another', () => {
  const graph = new Map([
    ['src/config/values.ts', ['src/kafka/client.ts']],
    ['src/kafka/client.ts', ['src/config/values.ts', 'src/offsets/offset-sync-writer.ts']],
    ['src/check/verify/aligner.ts', ['src/pipeline/ports.ts', 'src/mirror-topics/partition-reader.ts']],
    ['src/metrics/mirror-metrics.ts', ['src/check/lag/lag.ts', 'src/audit/loss-detector.ts']],
    ['src/check/commands/cutover.ts', ['src/check/commands/lag.ts', 'src/check/cli/output.ts']],
    ['src/check/commands/verify.ts', ['src/check/commands/verify-args.ts']],
    ['src/elsewhere.ts', []],
  ])
  assert.deepEqual(layerViolations(graph), [
    'src/config/values.ts -> src/kafka/client.ts: src/config/ may not import src/kafka/',
    'src/kafka/client.ts -> src/offsets/offset-sync-writer.ts: src/kafka/ may not import src/offsets/',
    'src/check/verify/aligner.ts -> src/pipeline/ports.ts: src/check/verify/ may not import src/pipeline/',
    'src/metrics/mirror-metrics.ts -> src/check/lag/lag.ts: src/metrics/ may not import src/check/lag/',
    'src/check/commands/cutover.ts -> src/check/commands/lag.ts: a command imports no other command; move what both need out of commands/',
    'src/elsewhere.ts: in no folder of the diagram; add its folder to test/unit/layers.test.ts and docs/architecture.md',
  ])
  assert.deepEqual(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']]])), [['a.ts', 'b.ts', 'c.ts', 'a.ts']])
})

test('imports are read in each form the code uses them', () => {
  const text = [
    "import './v8-settings.js'",
    "import type { Logger } from '../shared/logger.js'",
    'import {',
    '  a,',
    '  type B,',
    "} from './multi-line.js'",
    "export { MirrorFlow } from '../pipeline/mirror-flow.js'",
    "const late = await import('../config/late.js')",
    "import yargs from 'yargs'",
    "// a comment that mentions from './not-an-import.js'",
  ].join('\n')
  assert.deepEqual(importsOf('src/bin/x.ts', text).map(imported => imported.file).sort(), ['src/bin/multi-line.ts', 'src/bin/v8-settings.ts', 'src/config/late.ts', 'src/pipeline/mirror-flow.ts', 'src/shared/logger.ts'])
})
