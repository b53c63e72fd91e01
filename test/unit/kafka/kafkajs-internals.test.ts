import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { assertKafkajsPatched, kafkajsPatchProblem, kafkajsRecordCodec } from '../../../src/kafka/kafkajs-internals.js'
import { ErrorCodes, MirrorError } from '../../../src/shared/errors.js'

const PATCH = fileURLToPath(new URL('../../../../patches/kafkajs+2.2.4.patch', import.meta.url))
const INSTALLED = createRequire(import.meta.url).resolve('@kafka-mirror-sidecar/kafkajs/package.json')

/** A copy of the installed kafkajs with the project's patch taken back out: kafkajs 2.2.4 as published. */
function unpatchedKafkajs (t: { after: (fn: () => void) => void }): string {
  const root = mkdtempSync(join(tmpdir(), 'kafkajs-unpatched-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const copy = join(root, 'node_modules', 'kafkajs') // where the patch's paths point
  for (const part of ['src', 'types', 'index.js', 'package.json']) cpSync(join(dirname(INSTALLED), part), join(copy, part), { recursive: true })
  execFileSync('patch', ['--reverse', '--strip=1', '--silent', `--directory=${root}`, `--input=${PATCH}`])
  return join(copy, 'package.json')
}

test('the installed kafkajs is the patched one: the check passes', () => {
  assert.equal(kafkajsPatchProblem(kafkajsRecordCodec()), undefined)
  assert.doesNotThrow(() => assertKafkajsPatched())
})

test('kafkajs without the patch is reported in one line that names the install step to run', t => {
  const unpatched = kafkajsRecordCodec(unpatchedKafkajs(t))
  assert.equal(unpatched.version, '2.2.4')
  assert.equal(kafkajsPatchProblem(unpatched), 'its record encoder refuses headers given as a list')
  assert.throws(() => assertKafkajsPatched(unpatched), (error: unknown) => {
    assert.ok(error instanceof MirrorError)
    assert.equal(error.code, ErrorCodes.CONFIG)
    assert.match(
      error.message,
      /^kafkajs is not patched \(its record encoder refuses headers given as a list; .*applied to @kafka-mirror-sidecar\/kafkajs at install\): run node \/\S+\/scripts\/patch-kafkajs\.mjs \(the package's install step, skipped by --ignore-scripts\)$/
    )
    assert.doesNotMatch(error.message, /\n/)
    return true
  })
})

test('a patched encoder with an unpatched decoder is caught too, and so is another kafkajs version', t => {
  const patched = kafkajsRecordCodec()
  const unpatched = kafkajsRecordCodec(unpatchedKafkajs(t))
  assert.equal(kafkajsPatchProblem({ ...patched, decodeRecord: unpatched.decodeRecord }), 'its record decoder keeps no headerList')
  assert.equal(kafkajsPatchProblem({ ...patched, version: '2.3.0' }), 'kafkajs 2.3.0 is installed, the patch is for 2.2.4')
})
