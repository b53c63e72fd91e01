import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { projectRoot } from '../../scripts/local-kafka/paths.js'
import { parseBenchArgs } from '../bench-options.js'

const root = projectRoot()
const BASELINE = '../base/dist/src/bin/mirror-sidecar.js'

/** Every `npm run bench` line of the page's sh blocks, without the `npm run bench --` prefix. */
function pageCommands (): string[] {
  const page = readFileSync(join(root, 'docs', 'performance.md'), 'utf8')
  const blocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map(match => match[1] ?? '')
  return blocks.flatMap(block => block.split('\n')).map(line => line.trim()).filter(line => line.startsWith('npm run bench'))
    .map(line => line.replace(/^npm run bench( --)?/, '').trim())
}

/** `bash bench/figures.sh --list`: step name, arguments, results folder. */
function figureSteps (...flags: string[]): Array<{ step: string, args: string, dir: string }> {
  const listed = execFileSync('bash', [join(root, 'bench', 'figures.sh'), '--list', ...flags], { encoding: 'utf8' })
  return listed.trim().split('\n').map(line => {
    const match = /^(\S+)\s+npm run bench -- (.*?)\s*--results-dir (\S+)$/.exec(line)
    assert.ok(match !== null, `figures.sh --list line: ${line}`)
    return { step: match[1] as string, args: (match[2] as string).trim(), dir: match[3] as string }
  })
}

test('figures.sh runs every bench command of docs/performance.md, and nothing the page does not show', () => {
  const steps = figureSteps('--baseline-entry', BASELINE)
  const page = pageCommands()
  assert.ok(page.length >= 9, `docs/performance.md has ${page.length} bench commands`)
  assert.deepEqual([...page].sort(), steps.map(step => step.args).sort())
})

test('every figures step writes into a folder of its own, and each command parses as the bench takes it', () => {
  const steps = figureSteps('--baseline-entry', BASELINE)
  assert.equal(new Set(steps.map(step => step.dir)).size, steps.length)
  for (const step of steps) {
    assert.equal(step.dir, `bench/results/performance/${step.step}`)
    const options = parseBenchArgs([...step.args.split(' ').filter(word => word !== ''), '--results-dir', step.dir])
    assert.equal(options.resultsDir, step.dir)
  }
})

test('figures.sh --quick: one short run of each step, into bench/work, the rolling restart still long enough to restart mid-copy', () => {
  const steps = figureSteps('--quick')
  for (const step of steps) {
    const options = parseBenchArgs([...step.args.split(' ').filter(word => word !== ''), '--results-dir', step.dir])
    assert.equal(options.runs, 1, step.step)
    assert.ok(step.dir.startsWith('bench/work/figures-quick/'), step.dir)
    assert.ok(options.records <= 500_000, `${step.step}: ${options.records} records`)
  }
  assert.equal(parseBenchArgs(steps.find(step => step.step === 'rolling-restart')!.args.split(' ')).records, 500_000)
  assert.ok(!steps.some(step => step.args.includes('--baseline-entry')), 'no baseline unless given')
})
