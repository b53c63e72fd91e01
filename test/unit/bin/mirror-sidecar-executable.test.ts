import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { binPaths, SHEBANG } from '../../../scripts/make-bins-executable.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

test('after the build every bin of package.json is executable and starts with #!/usr/bin/env node', () => {
  const bins = binPaths(root)
  assert.deepEqual(bins.sort(), ['dist/src/bin/mirror-sidecar.js', 'dist/src/check/mirror-check.js'])
  for (const bin of bins) {
    const file = join(root, bin)
    assert.doesNotThrow(() => accessSync(file, constants.X_OK), `${bin} must be executable`)
    assert.equal(readFileSync(file, 'utf8').split('\n', 1)[0], SHEBANG, `${bin}: first line`)
    // Started the way a shell starts it, without `node` in front.
    const run = spawnSync(file, ['--help'], { encoding: 'utf8' })
    assert.equal(run.status, 0, `${bin} --help: ${run.stderr}`)
  }
})
