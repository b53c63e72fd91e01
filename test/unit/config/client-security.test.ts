import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { test } from 'node:test'
import { securityFromProperties } from '../../../src/config/client-security.js'
import { resolveConfigProviders } from '../../../src/config/config-providers.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { parseJaasConfig } from '../../../src/config/jaas.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { ProblemList } from '../../../src/config/values.js'
import { makeCertificates, STORE_PASSWORDS } from '../../helpers/secured-cluster.js'

const SETTINGS = { metricsPort: 0, metricsHost: '127.0.0.1', logLevel: 'info', drainTimeoutMs: 1000 } as const

test('JAAS values follow Java quoting: escapes, single quotes, comments; problems never echo the line', () => {
  const problems = new ProblemList()
  const entry = parseJaasConfig(
    'k',
    'org.apache.kafka.common.security.scram.ScramLoginModule required /* c */ username=alice password="p\\"w\\\\d;x" extra=\'s q\';',
    problems
  )
  assert.deepEqual(problems.problems, [])
  assert.equal(entry?.options.get('username'), 'alice')
  assert.equal(entry?.options.get('password'), 'p"w\\d;x')
  assert.equal(entry?.options.get('extra'), 's q')
  parseJaasConfig('sasl.jaas.config', 'x.Module required password=123secret;', problems)
  assert.equal(problems.problems.length, 1)
  assert.doesNotMatch(JSON.stringify(problems.problems), /123secret/)
})

test('SASL credentials and TLS keys are hidden from JSON and inspect but reach the client', () => {
  const problems = new ProblemList()
  const props = parseProperties(
    'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2-x";\nretries=5\nssl.truststore.location=/nope\n'
  )
  const security = securityFromProperties(props, '', problems)
  assert.deepEqual(problems.problems, [])
  assert.equal(security.sasl?.mechanism === 'plain' ? security.sasl.password : undefined, 'hunter2-x')
  assert.doesNotMatch(JSON.stringify(security), /hunter2/)
  assert.doesNotMatch(inspect(security, { depth: 5 }), /hunter2/)
  assert.deepEqual(problems.ignored, ['ssl.truststore.location'])
})

test('mm2 precedence: A->B.consumer.* over A.consumer.* over A.<key> over consumer.*; providers resolve; Connect internals are ignored', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mm2-unit-'))
  writeFileSync(join(dir, 'secrets.properties'), 'pw=from-file\n')
  const path = join(dir, 'mm2.properties')
  writeFileSync(path, [
    'clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true',
    'consumer.max.poll.records = 10', 'A.consumer.max.poll.records = 20', 'A->B.consumer.max.poll.records = 30',
    'consumer.fetch.max.bytes = 1000', 'A.consumer.session.timeout.ms = 20000',
    'B.security.protocol = SASL_PLAINTEXT', 'B.sasl.mechanism = SCRAM-SHA-256',
    `B.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="\${file:${join(dir, 'secrets.properties')}:pw}";`,
    'replication.policy.separator = _', 'A->B.tasks.max = 3', 'offset.storage.topic = x', 'key.converter = y', 'A.config.storage.replication.factor = 1',
    'sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 5',
  ].join('\n'))
  const config = configFromMm2(path, { settings: SETTINGS })
  const flow = config.flows[0]
  assert.equal(config.flows.length, 1)
  assert.equal(flow?.consumer.maxPollRecords, 30)
  assert.equal(flow?.consumer.fetchMaxBytes, 1000)
  assert.equal(flow?.consumer.sessionTimeoutMs, 20000)
  assert.equal(flow?.consumer.groupId, 'mirror-sidecar.A-to-B')
  assert.equal(flow?.target.sasl?.mechanism === 'scram-sha-256' ? flow.target.sasl.password : undefined, 'from-file')
  assert.equal(flow?.source.sasl, undefined)
  assert.deepEqual(flow?.replicationPolicy, { kind: 'default', separator: '_' })
  assert.equal(flow?.numStreams, 3)
  assert.deepEqual([flow?.groupSync.enabled, flow?.groupSync.intervalMs, flow?.groupSync.checkpointsTopic], [true, 5000, 'A.checkpoints.internal'])
  assert.equal(flow?.offsetSyncs.topic, 'mirror-offset-syncs.A.internal')
  assert.equal(flow?.topics.matches('orders'), true)
  assert.equal(flow?.topics.matches('orders-internal'), false)
  assert.equal(flow?.topics.matches('x.replica'), false)
  assert.deepEqual(
    flow?.mm2Positions,
    { offsetsTopic: 'x', key: 'offset.storage.topic', connector: 'MirrorSourceConnector' },
    "Connect's offsets topic: where the takeover reads MirrorMaker 2's positions"
  )
  assert.deepEqual(config.ignoredKeys, ['A.config.storage.replication.factor', 'key.converter'])
})

test(
  'PKCS12 client keystore and truststore open with their passwords; a wrong or missing keystore password names ssl.keystore.password without echoing it',
  () => {
    const certificates = makeCertificates()
    process.env.MIRROR_UNIT_P12_PASSWORD = STORE_PASSWORDS.keystore
    const read = (keystorePassword: string | undefined): { problems: ProblemList, tls: ReturnType<typeof securityFromProperties>['tls'] } => {
      const problems = new ProblemList()
      const lines = ['security.protocol=SSL', 'ssl.keystore.type=PKCS12', `ssl.keystore.location=${certificates.clientKeystoreP12}`,
        'ssl.truststore.type=PKCS12', `ssl.truststore.location=${certificates.truststoreP12}`, `ssl.truststore.password=${STORE_PASSWORDS.truststore}`,
        ...(keystorePassword === undefined ? [] : [`ssl.keystore.password=${keystorePassword}`])]
      const properties = resolveConfigProviders(parseProperties(lines.join('\n') + '\n'), '', problems)
      return { problems, tls: securityFromProperties(properties, 'mtls.properties: ', problems).tls }
    }

    const good = read('${env:MIRROR_UNIT_P12_PASSWORD}')
    assert.deepEqual(good.problems.problems, [])
    assert.ok(good.tls?.pfx instanceof Buffer)
    assert.equal(good.tls?.passphrase, STORE_PASSWORDS.keystore)
    assert.match(String(good.tls?.ca), /^-----BEGIN CERTIFICATE-----/)
    assert.doesNotMatch(JSON.stringify(good.tls) + inspect(good.tls, { depth: 5 }), new RegExp(STORE_PASSWORDS.keystore))

    const wrongLiteral = read('wrong-p12-pw-9x')
    assert.deepEqual(wrongLiteral.problems.problems.map(p => [p.key, p.value]), [['mtls.properties: ssl.keystore.password', undefined]])
    assert.match(wrongLiteral.problems.problems[0]?.message ?? '', /does not open the PKCS12 keystore .*client-keystore\.p12 \(wrong password\)/)
    assert.doesNotMatch(JSON.stringify(wrongLiteral.problems.problems), /wrong-p12-pw-9x/)

    process.env.MIRROR_UNIT_P12_PASSWORD = 'wrong-p12-pw-9x'
    const wrongReference = read('${env:MIRROR_UNIT_P12_PASSWORD}')
    assert.deepEqual(
      wrongReference.problems.problems.map(p => [p.key, p.value]),
      [['mtls.properties: ssl.keystore.password', '${env:MIRROR_UNIT_P12_PASSWORD}']]
    )
    assert.doesNotMatch(JSON.stringify(wrongReference.problems.problems), /wrong-p12-pw-9x/)

    const missing = read(undefined)
    assert.deepEqual(missing.problems.problems.map(p => p.key), ['mtls.properties: ssl.keystore.password'])
    assert.match(missing.problems.problems[0]?.message ?? '', /^missing; .*set ssl\.keystore\.password/)
    delete process.env.MIRROR_UNIT_P12_PASSWORD

    // A store from OpenSSL 1.x or an older keytool (RC2/3DES): the right password, yet OpenSSL 3 refuses it.
    const legacyStore = join(certificates.dir, 'legacy.p12')
    execFileSync('openssl', [
      'pkcs12',
      '-export',
      '-legacy',
      '-inkey',
      certificates.clientKeyPem,
      '-in',
      certificates.clientCertPem,
      '-out',
      legacyStore,
      '-passout',
    `pass:${STORE_PASSWORDS.keystore}`,
    ])
    const problems = new ProblemList()
    securityFromProperties(
      parseProperties(`security.protocol=SSL\nssl.keystore.location=${legacyStore}\nssl.keystore.password=${STORE_PASSWORDS.keystore}\n`),
      '',
      problems
    )
    assert.deepEqual(problems.problems.map(p => p.key), ['ssl.keystore.location'])
    assert.match(problems.problems[0]?.message ?? '', /legacy encryption .*openssl pkcs12 -legacy -in /)
  }
)
