import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect, createServer, type ConnectionOptions } from 'node:tls'
import { inspect } from 'node:util'
import { test } from 'node:test'
import { securityFromProperties } from '../../../src/config/client-security.js'
import { resolveConfigProviders } from '../../../src/config/config-providers.js'
import { storeFormatOf } from '../../../src/config/java-key-store.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { ProblemList } from '../../../src/config/values.js'
import { JAVA_STORE_PASSWORDS, makeCertificates, makeJavaStores, STORE_PASSWORDS } from '../../helpers/secured-cluster.js'

const certificates = makeCertificates()
const stores = makeJavaStores(certificates)
const PW = JAVA_STORE_PASSWORDS

function read (entries: Record<string, string>): { problems: ProblemList, tls: ConnectionOptions | undefined } {
  const problems = new ProblemList()
  const text = Object.entries({ 'security.protocol': 'SSL', ...entries }).map(([k, v]) => `${k}=${v}`).join('\n') + '\n'
  const properties = resolveConfigProviders(parseProperties(text), '', problems)
  return { problems, tls: securityFromProperties(properties, 'client.properties: ', problems).tls }
}

/** Opens a TLS connection to a server that requires a client certificate signed by the test CA; resolves with the peer's CN. */
async function handshake (tls: ConnectionOptions): Promise<string> {
  const pem = readFileSync(certificates.serverKeystorePem, 'utf8')
  const server = createServer(
    {
      key: pem,
      cert: pem.slice(pem.indexOf('-----BEGIN CERTIFICATE-----')),
      ca: readFileSync(certificates.caPem),
      requestCert: true,
      rejectUnauthorized: true,
    },
    socket => {
      socket.end(String(socket.getPeerCertificate().subject?.CN))
    }
  )
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  try {
    return await new Promise<string>((resolve, reject) => {
      // The key, passphrase and pfx are non-enumerable (kept out of logs): copied by name, as src/kafka/client.ts does.
      const socket = connect({ ...tls, key: tls.key, pfx: tls.pfx, passphrase: tls.passphrase, host: '127.0.0.1', port, servername: 'localhost' })
      let answer = ''
      socket.on('data', chunk => { answer += String(chunk) })
      socket.on('end', () => resolve(answer))
      socket.on('error', reject)
    })
  } finally {
    server.close()
  }
}

test('store formats are told apart by content: JKS, JCEKS and PKCS12 from keytool, PEM from openssl', () => {
  assert.equal(storeFormatOf(readFileSync(stores.truststoreJks)), 'JKS')
  assert.equal(storeFormatOf(readFileSync(stores.clientKeystoreJks)), 'JKS')
  assert.equal(storeFormatOf(readFileSync(stores.truststoreJceks)), 'JCEKS')
  assert.equal(storeFormatOf(readFileSync(stores.truststoreP12)), 'PKCS12')
  assert.equal(storeFormatOf(readFileSync(certificates.clientKeystoreP12)), 'PKCS12')
  assert.equal(storeFormatOf(readFileSync(certificates.caPem)), 'PEM')
  assert.equal(storeFormatOf(Buffer.from('hello')), undefined)
})

test('JKS keystore (own key password) and JKS truststore without a type key open with their passwords and complete a mutual TLS handshake', async () => {
  const { problems, tls } = read({
    'ssl.truststore.location': stores.truststoreJks,
    'ssl.truststore.password': PW.truststore,
    'ssl.keystore.location': stores.clientKeystoreJks,
    'ssl.keystore.password': PW.keystore,
    'ssl.key.password': PW.key,
  })
  assert.deepEqual(problems.problems, [])
  assert.match(String(tls?.key), /^-----BEGIN PRIVATE KEY-----/)
  assert.match(String(tls?.cert), /^-----BEGIN CERTIFICATE-----/)
  assert.match(String(tls?.ca), /^-----BEGIN CERTIFICATE-----/)
  const shown = JSON.stringify(tls) + inspect(tls, { depth: 5 })
  assert.doesNotMatch(shown, /PRIVATE KEY/)
  assert.equal(await handshake(tls as ConnectionOptions), 'mirror-client')
})

test('one password for store and key (keytool\'s default), a keytool PKCS12 truststore, a truststore without a password', async () => {
  const onePassword = read({
    'ssl.truststore.location': stores.truststoreP12,
    'ssl.truststore.password': PW.truststore,
    'ssl.keystore.location': stores.clientKeystoreJksOnePassword,
    'ssl.keystore.password': PW.keystore,
  })
  assert.deepEqual(onePassword.problems.problems, [])
  assert.equal(await handshake(onePassword.tls as ConnectionOptions), 'mirror-client')
  // Java reads a truststore's certificates without its password (no integrity check): so does the sidecar.
  const noTrustPassword = read({
    'ssl.truststore.location': stores.truststoreJks,
    'ssl.keystore.location': stores.clientKeystoreJksOnePassword,
    'ssl.keystore.password': PW.keystore,
  })
  assert.deepEqual(noTrustPassword.problems.problems, [])
  assert.equal(await handshake(noTrustPassword.tls as ConnectionOptions), 'mirror-client')
})

test('a wrong store or key password names the password key and the file, never the password', () => {
  process.env.MIRROR_UNIT_JKS_PASSWORD = 'wrong-jks-pw-71'
  const cases: Array<[Record<string, string>, string, RegExp, string | undefined]> = [
    [
      { 'ssl.truststore.location': stores.truststoreJks, 'ssl.truststore.password': 'wrong-jks-pw-71' },
      'ssl.truststore.password',
      /^does not open the JKS truststore \S+truststore\.jks \(wrong password\)/,
      undefined,
    ],
    [
      { 'ssl.keystore.location': stores.clientKeystoreJks, 'ssl.keystore.password': '${env:MIRROR_UNIT_JKS_PASSWORD}', 'ssl.key.password': PW.key },
      'ssl.keystore.password',
      /^does not open the JKS keystore \S+client-keystore\.jks \(wrong password\)/,
      '${env:MIRROR_UNIT_JKS_PASSWORD}',
    ],
    [
      { 'ssl.keystore.location': stores.clientKeystoreJks, 'ssl.keystore.password': PW.keystore, 'ssl.key.password': 'wrong-jks-pw-71' },
      'ssl.key.password',
      /^does not decrypt the private key in the JKS keystore \S+client-keystore\.jks \(wrong password\)/,
      undefined,
    ],
    [
      { 'ssl.keystore.location': stores.clientKeystoreJks, 'ssl.keystore.password': PW.keystore },
      'ssl.keystore.password',
      /the key has its own password: set ssl\.key\.password/,
      undefined,
    ],
    [{ 'ssl.keystore.location': stores.clientKeystoreJks }, 'ssl.keystore.password', /^missing; the JKS keystore \S+ is protected by a password/, undefined],
  ]
  for (const [entries, key, message, value] of cases) {
    const { problems } = read(entries)
    assert.deepEqual(problems.problems.map(p => [p.key, p.value]), [[`client.properties: ${key}`, value]], JSON.stringify(problems.problems))
    assert.match(problems.problems[0]?.message ?? '', message)
    assert.doesNotMatch(JSON.stringify(problems.problems), /wrong-jks-pw-71|jks-(keystore|key|truststore)-pw/)
  }
  delete process.env.MIRROR_UNIT_JKS_PASSWORD
})

test(
  'content wins over a type that disagrees: JKS named PKCS12 and PKCS12 named JKS are read; JCEKS, an unknown type and a non-store are refused',
  async () => {
    const swapped = read({
      'ssl.truststore.type': 'JKS',
      'ssl.truststore.location': certificates.truststoreP12,
      'ssl.truststore.password': STORE_PASSWORDS.truststore,
      'ssl.keystore.type': 'PKCS12',
      'ssl.keystore.location': stores.clientKeystoreJks,
      'ssl.keystore.password': PW.keystore,
      'ssl.key.password': PW.key,
    })
    assert.deepEqual(swapped.problems.problems, [])
    assert.equal(await handshake(swapped.tls as ConnectionOptions), 'mirror-client')

    const jceks = read({ 'ssl.truststore.location': stores.truststoreJceks, 'ssl.truststore.password': PW.truststore })
    assert.deepEqual(jceks.problems.problems.map(p => p.key), ['client.properties: ssl.truststore.location'])
    assert.match(jceks.problems.problems[0]?.message ?? '', /^is a JCEKS store, .*keytool -importkeystore -srcstoretype JCEKS/)

    const unknown = read({ 'ssl.truststore.type': 'BCFKS', 'ssl.truststore.location': stores.truststoreJks })
    assert.deepEqual(unknown.problems.problems.map(p => [p.key, p.value]), [['client.properties: ssl.truststore.type', 'BCFKS']])

    const garbage = join(certificates.dir, 'garbage.jks')
    writeFileSync(garbage, 'not a store')
    const notAStore = read({ 'ssl.truststore.location': garbage })
    assert.match(notAStore.problems.problems[0]?.message ?? '', /is not a key store/)
  }
)

test('a missing store file names the location key and the path', () => {
  const { problems } = read({
    'ssl.truststore.location': join(certificates.dir, 'nope.jks'),
    'ssl.keystore.location': join(certificates.dir, 'nope-keystore.jks'),
    'ssl.keystore.password': PW.keystore,
  })
  assert.deepEqual(problems.problems.map(p => [p.key, p.message]), [
    ['client.properties: ssl.truststore.location', 'file not found; give the path of a readable store file'],
    ['client.properties: ssl.keystore.location', 'file not found; give the path of a readable store file'],
  ])
})
