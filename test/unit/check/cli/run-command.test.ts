import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { usageLine } from '../../../../src/check/cli/run-command.js'
import { unknownCommandLine } from '../../../../src/check/cli/command-suggestion.js'

const SIDECAR_BIN = fileURLToPath(new URL('../../../../src/bin/mirror-sidecar.js', import.meta.url))
const CHECK_BIN = fileURLToPath(new URL('../../../../src/check/mirror-check.js', import.meta.url))
const WITHOUT_MIRROR_VARIABLES = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MIRROR_')))
/** Ports nothing listens on: connections are refused at once. */
const REFUSED = ['--source', '127.0.0.1:1', '--target', '127.0.0.1:2']

function run (bin: string, args: string[]): { status: number | null, stdout: string, stderr: string, ms: number } {
  const started = Date.now()
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 30_000, env: WITHOUT_MIRROR_VARIABLES })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, ms: Date.now() - started }
}

/** The first line on stderr, asserting exit 2. */
function usageError (bin: string, args: string[]): string {
  const result = run(bin, args)
  assert.equal(result.status, 2, result.stderr)
  return result.stderr.split('\n')[0] ?? ''
}

test('mirror-check: a mistyped command is named with the nearest command', () => {
  assert.equal(usageError(CHECK_BIN, ['offset', '--group', 'g']), 'mirror-check: unknown command "offset"; did you mean offsets?')
  assert.equal(usageError(CHECK_BIN, ['failovr']), 'mirror-check: unknown command "failovr"; did you mean failover?')
  assert.equal(
    usageError(CHECK_BIN, ['xyzzy']),
    'mirror-check: unknown command "xyzzy"; the commands are offsets, lag, verify, translate, cutover, failover, failback, groups, drill, rpo, fence, certificate, completion'
  )
})

test('unknownCommandLine: flags and known commands pass; a prefix counts as near', () => {
  assert.equal(unknownCommandLine(['--group', 'g'], ['offsets', 'lag']), undefined)
  assert.equal(unknownCommandLine(['lag'], ['offsets', 'lag']), undefined)
  assert.equal(unknownCommandLine([], ['offsets', 'lag']), undefined)
  assert.equal(unknownCommandLine(['ver'], ['offsets', 'verify']), 'unknown command "ver"; did you mean verify?')
})

test('mirror-check: an unknown flag is named once, as given', () => {
  assert.equal(usageError(CHECK_BIN, ['lag', '--bogus-flag', 'x', ...REFUSED]), 'mirror-check: Unknown argument: bogus-flag')
  assert.equal(usageLine('Unknown arguments: bogus-flag, bogusFlag, otherThing'), 'Unknown arguments: bogus-flag, otherThing')
})

test('mirror-check: --timeout-ms that is not a number is refused naming the value as given', () => {
  assert.equal(
    usageError(CHECK_BIN, ['--group', 'g', '--bootstrap-server', '127.0.0.1:1', '--timeout-ms', 'abc']),
    'mirror-check: --timeout-ms "abc": expected a positive integer'
  )
  assert.equal(usageError(CHECK_BIN, ['lag', ...REFUSED, '--timeout-ms', '1.5']), 'mirror-check: --timeout-ms "1.5": expected a positive integer')
})

test('mirror-check failover and failback: an unreachable cluster fails within --timeout-ms with the other commands\' wording', () => {
  const lag = usageError(CHECK_BIN, ['lag', ...REFUSED, '--timeout-ms', '500'])
  assert.match(lag, /^mirror-check: cannot reach the source cluster \(127\.0\.0\.1:1\): .*; check the bootstrap servers and that the brokers are up$/)
  for (const command of ['failover', 'failback']) {
    const result = run(CHECK_BIN, [command, '--group', 'g', ...REFUSED, '--timeout-ms', '500'])
    assert.equal(result.status, 2, result.stderr)
    assert.equal(result.stderr.split('\n')[0], lag, command)
    assert.ok(result.ms < 3_000, `${command} took ${result.ms} ms`)
  }
})

test('a malformed \\u escape in a .properties file is refused with file, line and key, as Java refuses it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-escape-'))
  try {
    const file = join(dir, 'client.properties')
    writeFileSync(file, 'bootstrap.servers=127.0.0.1:1\nclient.id=app\\u00zz\n')
    const expected =
      `${file}:2: client.id "\\u00zz": malformed \\uxxxx escape (Java refuses the file too); write four hex digits after \\u, or \\\\u for a backslash followed by u`
    assert.equal(usageError(CHECK_BIN, ['--group', 'g', '--command-config', file]), `mirror-check: ${expected}`)
    const sidecar = run(SIDECAR_BIN, ['--consumer.config', file, '--producer.config', join(dir, 'missing.properties'), '--whitelist', 'x', '--print-config'])
    assert.ok(sidecar.stderr.includes(expected), sidecar.stderr)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('both commands print a bash completion script', () => {
  for (const [bin, name] of [[CHECK_BIN, 'mirror-check'], [SIDECAR_BIN, 'mirror-sidecar']] as const) {
    const result = run(bin, ['completion'])
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, new RegExp(`^complete -o bashdefault -o default -F _${name}_yargs_completions ${name}$`, 'm'))
    assert.match(result.stdout, new RegExp(`${name} --get-yargs-completions`))
  }
  const flags = run(CHECK_BIN, ['--get-yargs-completions', 'lag', '--tim'])
  assert.ok(flags.stdout.split('\n').includes('--timeout-ms'), flags.stdout)
})
