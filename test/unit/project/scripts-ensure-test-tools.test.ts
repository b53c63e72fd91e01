import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../../../../scripts/ensure-test-tools.sh', import.meta.url))
const PACKAGE_JSON = fileURLToPath(new URL('../../../../package.json', import.meta.url))
const CI_RUN = fileURLToPath(new URL('../../../../.ci/run', import.meta.url))

/**
 * A PATH holding only stand-ins: the tools named, `id` answering `uid`, and when asked an
 * `apt-get`, `sudo` and `systemctl` that record their arguments in `calls.log` (apt-get "installs"
 * by writing stand-ins for what the package provides). No real apt-get can run.
 */
/** The Kerberos test's tools (KDC, kadmin, headers and compiler for the kerberos package): present unless a test names which are. */
const KERBEROS_TOOLS = ['krb5kdc', 'kdb5_util', 'kadmin.local', 'krb5-config', 'g++', 'make']

function fakePath (
  t: TestContext,
  options: {
    tools: string[]
    kerberosTools?: string[]
    uid: number
    aptGet?: 'installs' | 'installs nothing'
    sudo?: 'passwordless' | 'asks for a password'
    prometheusService?: boolean
  }
): { dir: string, calls: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-tools-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const log = join(dir, 'calls.log')
  const script = (name: string, body: string): void => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`)
    chmodSync(join(dir, name), 0o755)
  }
  // `node` answering 0: the optional kerberos package loads, nothing to build.
  for (const tool of [...options.tools, ...(options.kerberosTools ?? KERBEROS_TOOLS), 'node']) script(tool, 'exit 0')
  script('id', `[ "$1" = "-u" ] && echo ${options.uid}`)
  const stub = (tool: string): string => `printf '#!/bin/sh\\nexit 0\\n' > ${dir}/${tool}; /bin/chmod +x ${dir}/${tool}`
  if (options.aptGet !== undefined) {
    const installs =
      options.aptGet === 'installs'
        ? `for p in "$@"; do case "$p" in kcat) ${stub('kcat')};; prometheus) ${stub('promtool')}; ${stub('prometheus')};; openssl) ${stub('openssl')};; chromium-headless-shell) ${stub('chromium-headless-shell')};; ` +
          `krb5-kdc) ${stub('krb5kdc')}; ${stub('kdb5_util')};; krb5-admin-server) ${stub('kadmin.local')};; libkrb5-dev) ${stub('krb5-config')};; g++) ${stub('g++')};; make) ${stub('make')};; esac; done`
        : ''
    script('apt-get', `echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> ${log}\n[ "$1" = install ] && { ${installs || ':'}; }\nexit 0`)
  }
  if (options.sudo !== undefined) {
    script(
      'sudo',
      options.sudo === 'passwordless'
        ? `echo "sudo $*" >> ${log}\n[ "$1" = "-n" ] && exit 0\nwhile [ "\${1#*=}" != "$1" ]; do export "$1"; shift; done\nexec "$@"`
        : 'exit 1'
    )
  }
  if (options.prometheusService === true) script('systemctl', `echo "systemctl $*" >> ${log}\nexit 0`)
  return { dir, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trimEnd().split('\n') : []) }
}

function ensure (path: string, args: string[] = []): { status: number | null, stdout: string, stderr: string } {
  const run = spawnSync('/bin/bash', [SCRIPT, ...args], { encoding: 'utf8', env: { PATH: path }, timeout: 10_000 })
  return { status: run.status, stdout: run.stdout, stderr: run.stderr }
}

const ALL = ['kcat', 'promtool', 'prometheus', 'openssl', 'chromium-headless-shell', 'java', 'javac', 'mvn']

test('npm test runs ensure-test-tools.sh first, and .ci/run installs nothing itself', () => {
  const scripts = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { scripts: Record<string, string> }).scripts
  assert.match(scripts.test ?? '', /^bash scripts\/ensure-test-tools\.sh && /)
  assert.doesNotMatch(readFileSync(CI_RUN, 'utf8'), /apt-get/)
})

test('ensure-test-tools: everything present, nothing printed, exit 0', t => {
  const { dir, calls } = fakePath(t, { tools: ALL, uid: 1000, aptGet: 'installs' })
  assert.deepEqual(ensure(dir), { status: 0, stdout: '', stderr: '' })
  assert.deepEqual(calls(), [])
})

test('ensure-test-tools: missing tools without root or passwordless sudo stop at once with one line', t => {
  for (const sudo of [undefined, 'asks for a password'] as const) {
    const { dir, calls } = fakePath(t, {
      tools: ['openssl', 'chromium-headless-shell', 'java', 'javac', 'mvn'],
      uid: 1000,
      aptGet: 'installs',
      ...(sudo === undefined ? {} : { sudo }),
    })
    assert.deepEqual(ensure(dir), {
      status: 1,
      stdout: '',
      stderr: 'ensure-test-tools: missing kcat, promtool, prometheus: install them with: sudo apt-get install -y kcat prometheus   (then run npm test again)\n',
    })
    assert.deepEqual(calls(), [], 'apt-get is not run')
  }
})

test('ensure-test-tools: as root it installs the missing Debian packages and stops the prometheus service the package started', t => {
  const { dir, calls } = fakePath(t, { tools: ['java', 'javac', 'mvn'], uid: 0, aptGet: 'installs', prometheusService: true })
  const run = ensure(dir)
  assert.equal(run.status, 0, run.stderr)
  assert.equal(
    run.stderr,
    'ensure-test-tools: installing kcat prometheus openssl chromium-headless-shell with apt-get (missing kcat, promtool, prometheus, openssl, chromium-headless-shell)\n'
  )
  assert.deepEqual(calls(), [
    'apt-get update -qq DEBIAN_FRONTEND=noninteractive',
    'apt-get install -y -qq --no-install-recommends kcat prometheus openssl chromium-headless-shell DEBIAN_FRONTEND=noninteractive',
    'systemctl is-active --quiet prometheus',
    'systemctl stop prometheus',
    'systemctl disable --quiet prometheus',
  ])
})

test('ensure-test-tools: with passwordless sudo it installs through sudo', t => {
  const { dir, calls } = fakePath(t, {
    tools: ['kcat', 'promtool', 'prometheus', 'chromium-headless-shell', 'java', 'javac', 'mvn'],
    uid: 1000,
    aptGet: 'installs',
    sudo: 'passwordless',
  })
  const run = ensure(dir)
  assert.equal(run.status, 0, run.stderr)
  assert.deepEqual(calls(), [
    'sudo -n true',
    'sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq',
    'apt-get update -qq DEBIAN_FRONTEND=noninteractive',
    'sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl',
    'apt-get install -y -qq --no-install-recommends openssl DEBIAN_FRONTEND=noninteractive',
  ])
})

test('ensure-test-tools: --dry-run prints the apt-get commands and runs none', t => {
  const { dir, calls } = fakePath(t, {
    tools: ['prometheus', 'promtool', 'openssl', 'chromium-headless-shell', 'java', 'javac', 'mvn'],
    uid: 0,
    aptGet: 'installs',
  })
  assert.deepEqual(ensure(dir, ['--dry-run']), {
    status: 0,
    stdout: 'would run: apt-get update -qq\nwould run: apt-get install -y -qq --no-install-recommends kcat\n',
    stderr: 'ensure-test-tools: installing kcat with apt-get (missing kcat)\n',
  })
  assert.deepEqual(calls(), [])
})

test('ensure-test-tools: no apt-get, an install that did not help, or no Java: one line, exit 1', t => {
  const noApt = fakePath(t, { tools: ['kcat', 'openssl', 'chromium-headless-shell', 'java', 'javac', 'mvn'], uid: 0 })
  assert.deepEqual(ensure(noApt.dir), {
    status: 1,
    stdout: '',
    stderr: 'ensure-test-tools: missing promtool, prometheus: install prometheus with your package manager (kcat, prometheus for promtool, openssl, chromium-headless-shell, krb5-kdc, krb5-admin-server, libkrb5-dev, g++, make) and run npm test again\n',
  })
  const useless = fakePath(t, {
    tools: ['kcat', 'promtool', 'prometheus', 'chromium-headless-shell', 'java', 'javac', 'mvn'],
    uid: 0,
    aptGet: 'installs nothing',
  })
  const run = ensure(useless.dir)
  assert.equal(run.status, 1)
  assert.equal(run.stderr.split('\n')[1], 'ensure-test-tools: still missing openssl after apt-get install openssl; install them by hand and run npm test again')
  const noJava = fakePath(t, { tools: ['kcat', 'promtool', 'prometheus', 'openssl', 'chromium-headless-shell', 'mvn'], uid: 0, aptGet: 'installs' })
  assert.deepEqual(ensure(noJava.dir), {
    status: 1,
    stdout: '',
    stderr: 'ensure-test-tools: missing java (Java 17+) javac (a Java 17+ JDK): the local Kafka clusters and the Java client probe need them; install them (Debian: apt-get install openjdk-17-jdk-headless maven) and run npm test again\n',
  })
  assert.deepEqual(noJava.calls(), [])
  // A Java runtime without the compiler: the probe of Kafka's client library cannot be compiled.
  const noJavac = fakePath(t, { tools: ['kcat', 'promtool', 'prometheus', 'openssl', 'chromium-headless-shell', 'java', 'mvn'], uid: 0, aptGet: 'installs' })
  assert.equal(
    ensure(noJavac.dir).stderr,
    'ensure-test-tools: missing javac (a Java 17+ JDK): the local Kafka clusters and the Java client probe need them; install them (Debian: apt-get install openjdk-17-jdk-headless maven) and run npm test again\n'
  )
})

test('ensure-test-tools: Debian\'s chromium serves for the screenshot; without either, chromium-headless-shell is installed', t => {
  const withChromium = fakePath(t, { tools: ['kcat', 'promtool', 'prometheus', 'openssl', 'chromium', 'java', 'javac', 'mvn'], uid: 0, aptGet: 'installs' })
  assert.deepEqual(ensure(withChromium.dir), { status: 0, stdout: '', stderr: '' })
  const without = fakePath(t, { tools: ['kcat', 'promtool', 'prometheus', 'openssl', 'java', 'javac', 'mvn'], uid: 0, aptGet: 'installs' })
  assert.deepEqual(ensure(without.dir, ['--dry-run']), {
    status: 0,
    stdout: 'would run: apt-get update -qq\nwould run: apt-get install -y -qq --no-install-recommends chromium-headless-shell\n',
    stderr: 'ensure-test-tools: installing chromium-headless-shell with apt-get (missing chromium-headless-shell)\n',
  })
})

test(
  'ensure-test-tools: the Kerberos headers and a compiler missing, as root: libkrb5-dev and g++ installed (the optional kerberos package builds against them)',
  t => {
    const { dir, calls } = fakePath(t, { tools: ALL, kerberosTools: ['krb5kdc', 'kdb5_util', 'kadmin.local', 'make'], uid: 0, aptGet: 'installs' })
    const run = ensure(dir)
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stderr, 'ensure-test-tools: installing libkrb5-dev g++ with apt-get (missing krb5-config, g++)\n')
    assert.deepEqual(calls(), [
      'apt-get update -qq DEBIAN_FRONTEND=noninteractive',
      'apt-get install -y -qq --no-install-recommends libkrb5-dev g++ DEBIAN_FRONTEND=noninteractive',
    ])
  }
)
