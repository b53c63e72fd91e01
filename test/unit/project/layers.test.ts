import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { importsOf, readSource, REPOSITORY, sourceFiles } from '../../helpers/source-imports.js'

/**
 * The layer diagram of docs/architecture.md, as data. Each column lists its folders (or files)
 * from the bottom up: the shared column, the sidecar's (src/sidecar/ with its two entry points,
 * src/index.ts and src/bin/) and mirror-check's (src/check/). A folder imports its own files, the
 * folders below it in its column, and the shared column; a shared folder imports only the shared
 * folders below it. The two programs never import each other.
 */
const SHARED = ['src/shared/', 'src/config/', 'src/ports/', 'src/kafka/', 'src/mirror-topics/']
const SIDECAR = [
  'src/sidecar/pipeline/', 'src/sidecar/tracing/', 'src/sidecar/offsets/', 'src/sidecar/integrity/', 'src/sidecar/metrics/', 'src/sidecar/http/',
  'src/sidecar/preflight/',
  'src/sidecar/flow-runtime-factory.ts', 'src/sidecar/mirror-sidecar.ts', 'src/index.ts', 'src/bin/',
]
const CHECK = [
  'src/check/cli/',
  'src/check/translate/',
  'src/check/lag/',
  'src/check/verify/',
  'src/check/certificate/',
  'src/check/commands/',
  'src/check/mirror-check.ts',
]
/** Shared folders mirror-check does not import: the ports are the sidecar pipeline's, implemented by kafka/. */
const NOT_FOR_CHECK = new Set(['src/ports/'])
/** The pipeline runs on its ports: of the shared column it sees only these, never kafka/. */
const PIPELINE_SEES = new Set(['src/shared/', 'src/config/', 'src/ports/'])

function mayImport (from: string, to: string): boolean {
  if (from === to) return true
  if (from === 'src/sidecar/pipeline/' && SHARED.includes(to)) return PIPELINE_SEES.has(to)
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
      violations.push(`${file}: in no folder of the diagram; add its folder to test/unit/project/layers.test.ts and docs/architecture.md`)
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
  for (const [file, imports] of graph) {
    for (const target of imports) assert.ok(existsSync(join(REPOSITORY, target)), `${file} imports ${target}, which the check cannot find`)
  }
  assert.deepEqual(layerViolations(graph), [])
})

test('no import circle among the files of src/', () => {
  assert.deepEqual(circles(importGraph()), [])
})

test(
  'the layer check finds an arrow pointing up, one across the wall between the programs, the pipeline past its ports, and a command importing another',
  () => {
    const graph = new Map([
      ['src/config/values.ts', ['src/kafka/client.ts']],
      ['src/kafka/client.ts', ['src/config/values.ts', 'src/sidecar/offsets/offset-sync-writer.ts']],
      ['src/mirror-topics/partition-reader.ts', ['src/kafka/audit-client.ts', 'src/sidecar/pipeline/mirror-flow.ts']],
      ['src/check/verify/aligner.ts', ['src/ports/ports.ts', 'src/mirror-topics/partition-reader.ts', 'src/sidecar/integrity/digest-tracker.ts']],
      ['src/sidecar/metrics/mirror-metrics.ts', ['src/check/lag/lag.ts', 'src/sidecar/integrity/loss-detector.ts', 'src/sidecar/http/health-server.ts']],
      ['src/sidecar/pipeline/mirror-flow.ts', ['src/ports/ports.ts', 'src/kafka/record-sink.ts', 'src/sidecar/offsets/start-plan.ts']],
      ['src/sidecar/mirror-sidecar.ts', ['src/sidecar/flow-runtime-factory.ts', 'src/bin/mirror-sidecar.ts']],
      ['src/check/commands/cutover.ts', ['src/check/commands/lag.ts', 'src/check/cli/output.ts']],
      ['src/check/commands/verify.ts', ['src/check/commands/verify-args.ts']],
      ['src/elsewhere.ts', []],
      ['src/sidecar/elsewhere.ts', []],
    ])
    assert.deepEqual(layerViolations(graph), [
      'src/config/values.ts -> src/kafka/client.ts: src/config/ may not import src/kafka/',
      'src/kafka/client.ts -> src/sidecar/offsets/offset-sync-writer.ts: src/kafka/ may not import src/sidecar/offsets/',
      'src/mirror-topics/partition-reader.ts -> src/sidecar/pipeline/mirror-flow.ts: src/mirror-topics/ may not import src/sidecar/pipeline/',
      'src/check/verify/aligner.ts -> src/ports/ports.ts: src/check/verify/ may not import src/ports/',
      'src/check/verify/aligner.ts -> src/sidecar/integrity/digest-tracker.ts: src/check/verify/ may not import src/sidecar/integrity/',
      'src/sidecar/metrics/mirror-metrics.ts -> src/check/lag/lag.ts: src/sidecar/metrics/ may not import src/check/lag/',
      'src/sidecar/metrics/mirror-metrics.ts -> src/sidecar/http/health-server.ts: src/sidecar/metrics/ may not import src/sidecar/http/',
      'src/sidecar/pipeline/mirror-flow.ts -> src/kafka/record-sink.ts: src/sidecar/pipeline/ may not import src/kafka/',
      'src/sidecar/pipeline/mirror-flow.ts -> src/sidecar/offsets/start-plan.ts: src/sidecar/pipeline/ may not import src/sidecar/offsets/',
      'src/sidecar/mirror-sidecar.ts -> src/bin/mirror-sidecar.ts: src/sidecar/mirror-sidecar.ts may not import src/bin/',
      'src/check/commands/cutover.ts -> src/check/commands/lag.ts: a command imports no other command; move what both need out of commands/',
      'src/elsewhere.ts: in no folder of the diagram; add its folder to test/unit/project/layers.test.ts and docs/architecture.md',
      'src/sidecar/elsewhere.ts: in no folder of the diagram; add its folder to test/unit/project/layers.test.ts and docs/architecture.md',
    ])
    assert.deepEqual(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']]])), [['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  }
)

test('imports are read in each form the code uses them', () => {
  const text = [
    "import './v8-settings.js'",
    "import type { Logger } from '../shared/logger.js'",
    'import {',
    '  a,',
    '  type B,',
    "} from './multi-line.js'",
    "export { MirrorFlow } from '../sidecar/pipeline/mirror-flow.js'",
    "const late = await import('../config/late.js')",
    "import yargs from 'yargs'",
    "// a comment that mentions from './not-an-import.js'",
  ].join('\n')
  assert.deepEqual(
    importsOf('src/bin/x.ts', text)
      .map(imported => imported.file)
      .sort(),
    ['src/bin/multi-line.ts', 'src/bin/v8-settings.ts', 'src/config/late.ts', 'src/shared/logger.ts', 'src/sidecar/pipeline/mirror-flow.ts']
  )
})

/**
 * Where a unit test of a src file sits: `test/unit/<path under src>/<file>.test.ts`, or
 * `<file>-<aspect>.test.ts` beside it; tests of the project as a whole (docs, deployment, CI, the
 * layer diagram) sit in `test/unit/project/`. The answer is the src file the test's path names, or
 * undefined when no src file fits.
 */
function srcFileOfTest (testPath: string, srcExists: (path: string) => boolean): string | undefined {
  let name = testPath.replace(/^test\/unit\//, '').replace(/\.test\.ts$/, '')
  for (;;) {
    if (srcExists(`src/${name}.ts`)) return `src/${name}.ts`
    const dash = name.lastIndexOf('-')
    if (dash <= name.lastIndexOf('/')) return undefined
    name = name.slice(0, dash)
  }
}

test('each unit test sits at the path of the src file it tests (test/unit/<path under src>/<file>[-aspect].test.ts), or in test/unit/project/', () => {
  const unitTests = (dir: string): string[] => readdirSync(join(REPOSITORY, dir), { withFileTypes: true }).flatMap(entry =>
    entry.isDirectory() ? unitTests(`${dir}/${entry.name}`) : entry.name.endsWith('.test.ts') ? [`${dir}/${entry.name}`] : [])
  const misplaced = unitTests('test/unit')
    .filter(path => !path.startsWith('test/unit/project/'))
    .filter(path => srcFileOfTest(path, src => existsSync(join(REPOSITORY, src))) === undefined)
  assert.deepEqual(misplaced, [], 'move each to test/unit/<path under src>/<file>.test.ts, or test/unit/project/ when it tests no one src file')
})

test('the test path rule: a file, a file with an aspect, and a path no src file fits', () => {
  const src = new Set(['src/kafka/wire/frame-reader.ts', 'src/config/mm2-config.ts', 'src/index.ts'])
  const exists = (path: string): boolean => src.has(path)
  assert.equal(srcFileOfTest('test/unit/kafka/wire/frame-reader.test.ts', exists), 'src/kafka/wire/frame-reader.ts')
  assert.equal(srcFileOfTest('test/unit/config/mm2-config-seed-forms.test.ts', exists), 'src/config/mm2-config.ts')
  assert.equal(srcFileOfTest('test/unit/index.test.ts', exists), 'src/index.ts')
  assert.equal(srcFileOfTest('test/unit/kafka-frame-reader.test.ts', exists), undefined)
  assert.equal(srcFileOfTest('test/unit/config/mm2.test.ts', exists), undefined)
})
