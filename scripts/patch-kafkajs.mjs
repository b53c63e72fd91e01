#!/usr/bin/env node
// The package's postinstall: applies patches/kafkajs+2.2.4.patch to the package's own kafkajs, the
// dependency `@kafka-mirror-sidecar/kafkajs` (an npm alias of kafkajs 2.2.4). The alias keeps that
// copy apart from any `kafkajs` of the application the package is installed into: the
// application's kafkajs is never patched, and the mirror never runs an unpatched or shared one.
// The copy is found with require.resolve from this package, wherever npm placed it (nested, or
// hoisted to the application's node_modules). Plain JavaScript: it runs before the TypeScript build.
// Every file is checked before any is written; a file that already holds the patch is left as it is,
// so running it again (npm rebuild, a second install) changes nothing. Exit 1 with one line when
// the patch does not apply.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyPatch, parsePatch, reversePatch } from 'diff'

const PATCHED_NAME = '@kafka-mirror-sidecar/kafkajs'
const KAFKAJS_VERSION = '2.2.4'
const PREFIX = 'node_modules/kafkajs/'

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..')
const patchFile = join(packageRoot, 'patches', `kafkajs+${KAFKAJS_VERSION}.patch`)

function fail (message) {
  process.stderr.write(`kafka-mirror-sidecar: ${message}\n`)
  process.exit(1)
}

let kafkajsRoot
try {
  kafkajsRoot = dirname(createRequire(join(packageRoot, 'package.json')).resolve(`${PATCHED_NAME}/package.json`))
} catch {
  fail(`${PATCHED_NAME} is not installed beside the package (npm alias of kafkajs@${KAFKAJS_VERSION}): run npm install again`)
}
const { version } = JSON.parse(readFileSync(join(kafkajsRoot, 'package.json'), 'utf8'))
if (version !== KAFKAJS_VERSION) fail(`${PATCHED_NAME} is kafkajs ${version}, the patch is for ${KAFKAJS_VERSION}: run npm install again`)

const changes = []
let already = 0
for (const filePatch of parsePatch(readFileSync(patchFile, 'utf8'))) {
  const name = filePatch.newFileName.replace(/^b\//, '')
  if (!name.startsWith(PREFIX)) fail(`${patchFile}: ${name} is outside kafkajs`)
  const path = join(kafkajsRoot, ...name.slice(PREFIX.length).split('/'))
  if (filePatch.oldFileName === '/dev/null') {
    // A file the patch adds: written when absent, already patched when it holds exactly the patch's text.
    const added = applyPatch('', filePatch)
    if (!existsSync(path)) changes.push({ path, patched: added })
    else if (readFileSync(path, 'utf8') === added) already++
    else fail(`the kafkajs patch does not apply to ${path}: reinstall the package (npm install)`)
    continue
  }
  const current = readFileSync(path, 'utf8')
  const patched = applyPatch(current, filePatch)
  if (patched !== false) {
    changes.push({ path, patched })
  } else if (applyPatch(current, reversePatch(filePatch)) !== false) {
    already++
  } else {
    fail(`the kafkajs patch does not apply to ${path}: reinstall the package (npm install)`)
  }
}
for (const { path, patched } of changes) writeFileSync(path, patched)
const where = relative(process.cwd(), kafkajsRoot).split(sep).join('/') || '.'
process.stdout.write(`kafka-mirror-sidecar: kafkajs ${KAFKAJS_VERSION} at ${where}: ${changes.length} files patched, ${already} already patched\n`)
