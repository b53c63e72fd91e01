import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { makeCertificates, makeJavaStores, JAVA_STORE_PASSWORDS, STORE_PASSWORDS } from '../../helpers/secured-cluster.js'

const certificates = makeCertificates()
const stores = makeJavaStores(certificates)

/** The same CA as an RC2-40/3DES store (OpenSSL 1.x and older keytool), and an EC CA: both made with openssl here, read without it. */
const LEGACY_PASSWORD = 'legacy-p12-pw-5c'
function openssl (args: string[]): void {
  execFileSync('openssl', args, { cwd: certificates.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MIRROR_TEST_PW: LEGACY_PASSWORD } })
}
openssl(['pkcs12', '-export', '-legacy', '-nokeys', '-in', 'ca.pem', '-out', 'truststore-legacy.p12', '-passout', 'env:MIRROR_TEST_PW'])
openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ec-ca.key', '-out', 'ec-ca.pem', '-days', '2',
  '-subj', '/CN=mirror-test-ec-ca'])
openssl(['pkcs12', '-export', '-nokeys', '-in', 'ec-ca.pem', '-out', 'truststore-ec.p12', '-passout', 'env:MIRROR_TEST_PW'])

const CLIENT_SECURITY = new URL('../../../src/config/client-security.js', import.meta.url).href
const CONFIG_PROVIDERS = new URL('../../../src/config/config-providers.js', import.meta.url).href
const JAVA_PROPERTIES = new URL('../../../src/config/java-properties.js', import.meta.url).href
const VALUES = new URL('../../../src/config/values.js', import.meta.url).href

interface Outcome { readonly problems: ReadonlyArray<{ key: string, value?: string, message: string }>, readonly ca?: string }

/**
 * Reads a PKCS12 truststore through the sidecar's config loader in a Node process whose PATH is an
 * empty folder: no `openssl` (nor anything else) can be run, as in the `node:*-slim` image.
 */
function readWithoutOpenssl (location: string, password: string): Outcome {
  const emptyPath = mkdtempSync(join(tmpdir(), 'mirror-no-openssl-'))
  try {
    const script = `
      import { securityFromProperties } from '${CLIENT_SECURITY}'
      import { resolveConfigProviders } from '${CONFIG_PROVIDERS}'
      import { parseProperties } from '${JAVA_PROPERTIES}'
      import { ProblemList } from '${VALUES}'
      const problems = new ProblemList()
      const text = ['security.protocol=SSL', 'ssl.truststore.type=PKCS12', 'ssl.truststore.location=' + process.env.STORE,
        'ssl.truststore.password=' + process.env.STORE_PW, ''].join('\\n')
      const tls = securityFromProperties(resolveConfigProviders(parseProperties(text), '', problems), 'client.properties: ', problems).tls
      process.stdout.write(JSON.stringify({ problems: problems.problems, ca: tls?.ca }))
    `
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { PATH: emptyPath, STORE: location, STORE_PW: password },
      timeout: 30_000,
    })
    assert.equal(run.status, 0, run.stderr)
    return JSON.parse(run.stdout) as Outcome
  } finally {
    rmSync(emptyPath, { recursive: true, force: true })
  }
}

const fingerprints = (pem: string | undefined): string[] =>
  [...String(pem).matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map(m => new X509Certificate(m[0]).fingerprint256)

test('PKCS12 truststores are read with no openssl command on PATH: openssl, keytool, legacy RC2/3DES and EC stores give their CA', () => {
  const caOf = (file: string): string[] => fingerprints(readFileSync(join(certificates.dir, file), 'utf8'))
  const cases: Array<[string, string, string[]]> = [
    [certificates.truststoreP12, STORE_PASSWORDS.truststore, caOf('ca.pem')],
    [stores.truststoreP12, JAVA_STORE_PASSWORDS.truststore, caOf('ca.pem')],
    [join(certificates.dir, 'truststore-legacy.p12'), LEGACY_PASSWORD, caOf('ca.pem')],
    [join(certificates.dir, 'truststore-ec.p12'), LEGACY_PASSWORD, caOf('ec-ca.pem')],
  ]
  for (const [location, password, expected] of cases) {
    const outcome = readWithoutOpenssl(location, password)
    assert.deepEqual(outcome.problems, [], location)
    assert.deepEqual(fingerprints(outcome.ca), expected, location)
  }
})

test('a wrong PKCS12 truststore password, with no openssl on PATH, names ssl.truststore.password and the file, never the password', () => {
  const outcome = readWithoutOpenssl(certificates.truststoreP12, 'wrong-p12-trust-pw-4e')
  assert.deepEqual(outcome.problems.map(p => p.key), ['client.properties: ssl.truststore.password'])
  assert.match(
    outcome.problems[0]?.message ?? '',
    /^does not open the PKCS12 truststore \S+truststore\.p12 \(wrong password\); give the password the store was exported with$/
  )
  assert.doesNotMatch(JSON.stringify(outcome), /wrong-p12-trust-pw-4e/)
  assert.equal(outcome.ca, undefined)
})
