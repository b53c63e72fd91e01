import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { kerberosPackageUnusable } from '../../../src/config/kerberos-package.js'

const BIN = fileURLToPath(new URL('../../../src/bin/mirror-sidecar.js', import.meta.url))

/** A GSSAPI source cluster on a port nothing listens on: the run must stop at the configuration, before it connects. */
const MM2 = [
  'clusters=A,B',
  'A.bootstrap.servers=127.0.0.1:1',
  'B.bootstrap.servers=127.0.0.1:1',
  'A->B.enabled=true',
  'A->B.topics=t',
  'A.security.protocol=SASL_PLAINTEXT',
  'A.sasl.mechanism=GSSAPI',
  'A.sasl.kerberos.service.name=kafka',
  'A.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;',
  '',
].join('\n')

/** A preload that makes `require('kerberos')` fail as it does where the optional package's build failed at install. */
const HIDE_KERBEROS = `
const Module = require('node:module')
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === 'kerberos') throw Object.assign(new Error("Cannot find module 'kerberos'"), { code: 'MODULE_NOT_FOUND' })
  return resolve.call(this, request, ...rest)
}
`

function folder (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'kerberos-package-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'mm2.properties'), MM2)
  writeFileSync(join(dir, 'hide-kerberos.cjs'), HIDE_KERBEROS)
  return dir
}

test('kerberos package: usable, not installed, or loaded without its client', () => {
  assert.equal(kerberosPackageUnusable(() => ({ initializeClient: () => undefined })), undefined)
  assert.equal(kerberosPackageUnusable(() => { throw Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' }) }), 'is not installed')
  assert.equal(
    kerberosPackageUnusable(() => { throw new Error('libgssapi_krb5.so.2: cannot open shared object file\nRequire stack: ...') }),
    'does not load (libgssapi_krb5.so.2: cannot open shared object file)'
  )
  assert.equal(kerberosPackageUnusable(() => ({})), 'does not load (it has no initializeClient)')
})

test('GSSAPI configured and the kerberos package unusable: refused at the configuration check, one line with how to install it, exit 2', t => {
  const dir = folder(t)
  const run = spawnSync(process.execPath, ['--require', join(dir, 'hide-kerberos.cjs'), BIN, join(dir, 'mm2.properties')], {
    encoding: 'utf8',
    timeout: 30_000,
  })
  assert.equal(run.status, 2)
  assert.equal(run.stdout, '')
  assert.match(
    run.stderr,
    /^mirror-sidecar: A\.sasl\.jaas\.config: sasl\.mechanism=GSSAPI needs the optional npm package kerberos, which is not installed; install it where the sidecar is installed: npm install kerberos \(.*apt-get install build-essential libkrb5-dev; see docs\/security\.md\)\n$/
  )
  // The same file with the package in place passes the check (--print-config connects to nothing).
  const check = spawnSync(process.execPath, [BIN, join(dir, 'mm2.properties'), '--print-config'], { encoding: 'utf8', timeout: 30_000 })
  assert.equal(check.status, 0, check.stderr)
})
