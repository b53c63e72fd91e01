#!/usr/bin/env node
// Writes patches/kafkajs+2.2.4.patch from the edited copy in node_modules/@kafka-mirror-sidecar/kafkajs:
// the published kafkajs 2.2.4 (`npm pack`, from npm's cache when there) against that copy, with
// `git diff --no-index --no-prefix` of folders a/ and b/, every path a/node_modules/kafkajs/... as
// scripts/patch-kafkajs.mjs reads it (the form patch-package wrote).
// For contributors changing kafkajs (each hunk commented `// kafka-mirror-sidecar patch: <why>`);
// not shipped.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const KAFKAJS_VERSION = '2.2.4'
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const edited = join(root, 'node_modules', '@kafka-mirror-sidecar', 'kafkajs')
const work = mkdtempSync(join(tmpdir(), 'kafkajs-patch-'))
try {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', `kafkajs@${KAFKAJS_VERSION}`, '--json', '--prefer-offline', '--pack-destination', work], { cwd: work, encoding: 'utf8' })
  )
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work])
  for (const [side, from] of [['a', join(work, 'package')], ['b', edited]]) {
    mkdirSync(join(work, side, 'node_modules'), { recursive: true })
    for (const part of ['index.js', 'src', 'types']) cpSync(join(from, part), join(work, side, 'node_modules', 'kafkajs', part), { recursive: true })
  }
  // Exit 1 means "there are differences"; anything else is a failure.
  const diff = spawnSync('git', ['diff', '--no-index', '--no-prefix', '--no-color', '--no-ext-diff', 'a/node_modules/kafkajs', 'b/node_modules/kafkajs'], {
    cwd: work,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  if (diff.status !== 1) throw new Error(`git diff exited ${diff.status}: ${diff.stderr}`)
  const patch = diff.stdout
  const out = join(root, 'patches', `kafkajs+${KAFKAJS_VERSION}.patch`)
  writeFileSync(out, patch)
  process.stdout.write(`wrote ${out} (${patch.split('\ndiff --git ').length} files)\n`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
