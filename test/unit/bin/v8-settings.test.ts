import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SIDECAR_V8_FLAGS } from '../../../src/bin/v8-settings.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

test('the sidecar bin loads its V8 settings before any other module', () => {
  const imports = readFileSync(join(root, 'dist/src/bin/mirror-sidecar.js'), 'utf8').split('\n').filter(line => line.startsWith('import '))
  assert.equal(imports[0], 'import \'./v8-settings.js\';')
  assert.deepEqual(SIDECAR_V8_FLAGS, ['--no-allocation-site-pretenuring'])
})

test('every flag it sets is one this node\'s V8 knows (an unknown one would be ignored without a word)', () => {
  const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout
  for (const flag of SIDECAR_V8_FLAGS) {
    const name = flag.replace(/^--(no-)?/u, '')
    assert.match(options, new RegExp(`^\\s+--${name} `, 'mu'), `${flag} in node --v8-options`)
  }
})
