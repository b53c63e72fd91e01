import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../../../../scripts/ci-failures.sh', import.meta.url))

/** What this Node's test runner prints (`reporter`) for a file with a passing test and a nested failing one. */
function outputOfFailingRun (dir: string, reporter: 'tap' | 'spec' = 'tap'): string {
  const file = join(dir, 'sample.test.mjs')
  writeFileSync(file, [
    "import { test } from 'node:test'",
    "import assert from 'node:assert/strict'",
    "test('a test that passes', () => {})",
    "test('an outer test', async t => {",
    "  t.diagnostic('records on the target: 41')",
    "  await t.test('an inner test that fails', () => { assert.equal(41, 42, 'one record missing') })",
    '})',
  ].join('\n'))
  // Without NODE_TEST_CONTEXT: set by the runner running this test, it makes a child runner report to its parent instead of printing TAP.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  return spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, file], { encoding: 'utf8', env }).stdout
}

test(
  'ci-failures: a failed test, nested or not, is printed with its error and the lines its test printed, without stack frames; eslint problems too; passing tests are not',
  t => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-failures-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const log = join(dir, 'npm-test.log')
    const eslint = ['', '/repo/src/a.ts', '  12:3  error  Unexpected console statement  no-console', '', '✖ 1 problem (1 error, 0 warnings)'].join('\n')
    writeFileSync(log, outputOfFailingRun(dir) + eslint + '\n')
    const run = spawnSync('/bin/bash', [SCRIPT, log], { encoding: 'utf8' })
    assert.equal(run.status, 0, run.stderr)
    assert.match(run.stdout, /not ok 1 - an inner test that fails/)
    assert.match(run.stdout, /one record missing/)
    assert.match(run.stdout, /not ok 2 - an outer test/)
    assert.match(run.stdout, /# records on the target: 41/)
    assert.match(run.stdout, /12:3 {2}error {2}Unexpected console statement/)
    assert.match(run.stdout, /✖ 1 problem/)
    assert.match(run.stdout, /# fail 2/)
    assert.doesNotMatch(run.stdout, /a test that passes/)
    assert.doesNotMatch(run.stdout, /runInAsyncScope/, 'stack frames are left out')
  })

test('ci-failures: a passing log gives only its counts; no log is said in one line, exit 0', t => {
  const dir = mkdtempSync(join(tmpdir(), 'ci-failures-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const log = join(dir, 'npm-test.log')
  writeFileSync(log, 'TAP version 13\n# Subtest: fine\nok 1 - fine\n  ---\n  duration_ms: 1\n  ...\n1..1\n# tests 1\n# pass 1\n# fail 0\n')
  assert.equal(spawnSync('/bin/bash', [SCRIPT, log], { encoding: 'utf8' }).stdout, '# tests 1\n# pass 1\n# fail 0\n')
  const missing = spawnSync('/bin/bash', [SCRIPT, join(dir, 'none.log')], { encoding: 'utf8' })
  assert.deepEqual([missing.status, missing.stdout], [0, `ci-failures: no log at ${join(dir, 'none.log')}\n`])
})

test('ci-failures: the spec reporter\'s failing tests (Node 24 prints it when piped) with their errors, without stack frames', t => {
  const dir = mkdtempSync(join(tmpdir(), 'ci-failures-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const log = join(dir, 'node-compat.log')
  writeFileSync(log, outputOfFailingRun(dir, 'spec'))
  const run = spawnSync('/bin/bash', [SCRIPT, log], { encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /✖ failing tests:/)
  assert.match(run.stdout, /✖ an inner test that fails/)
  assert.match(run.stdout, /one record missing/)
  assert.match(run.stdout, /ℹ fail 2/)
  assert.doesNotMatch(run.stdout, /runInAsyncScope/, 'stack frames are left out')
  assert.doesNotMatch(run.stdout, /a test that passes/)
})
