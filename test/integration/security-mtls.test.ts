import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { auditKeys, createTopic, produce, readAll, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { STORE_PASSWORDS, startSecuredCluster } from '../helpers/secured-cluster.js'
import { spawnSidecarArgs, waitMirroring, writeProperties, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const FAST = ['--offset.commit.interval.ms', '500', '--refresh.topics.interval.ms', '1000', '--metrics.port', '0', '--metrics.host', '127.0.0.1']
const RECORDS = 40
const WRONG_PASSWORD = 'not-the-p12-password-5c'

test(
  'mirrors into an SSL cluster requiring client certificates (PEM and PKCS12 stores); missing, foreign or locked certificates exit 2 naming the key and cluster; no secret is printed',
  { timeout: 120_000 },
  async t => {
    const { source } = await sharedClusters()
    const secured = await startSecuredCluster(t)
    const certificates = secured.certificates
    const secretsFile = writeProperties({ 'truststore.password': STORE_PASSWORDS.truststore }, 'secrets.properties')
    const env = { MIRROR_TEST_KEYSTORE_PASSWORD: STORE_PASSWORDS.keystore }
    const runs: SidecarProcess[] = []
    const run = (args: readonly string[], runEnv: NodeJS.ProcessEnv = env): SidecarProcess => {
      const sidecar = spawnSidecarArgs(t, [...args, ...FAST], runEnv)
      runs.push(sidecar)
      return sidecar
    }
    const mtlsClient = (stores: Record<string, string>): Record<string, string> => ({
      'bootstrap.servers': secured.mtlsBootstrap,
      'security.protocol': 'SSL',
      ...stores,
    })
    const pemStores = {
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certificates.clientKeystorePem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certificates.caPem,
    }
    const p12Stores = {
      'ssl.keystore.type': 'PKCS12',
      'ssl.keystore.location': certificates.clientKeystoreP12,
      'ssl.keystore.password': '${env:MIRROR_TEST_KEYSTORE_PASSWORD}',
      'ssl.truststore.type': 'PKCS12',
      'ssl.truststore.location': certificates.truststoreP12,
      'ssl.truststore.password': `\${file:${secretsFile}:truststore.password}`,
    }
    const noCertificate = { 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certificates.caPem }
    const pemConfig = writeProperties(mtlsClient(pemStores), 'mtls-pem.properties')

    // Plaintext source -> mTLS target, once per store format, each with its own topic.
    const topics: string[] = []
    for (const [name, stores] of [
      ['PEM keystore (key + chain) + PEM truststore', pemStores],
      ['PKCS12 keystore + PKCS12 truststore, passwords from ${env:...} and ${file:...}', p12Stores],
    ] as const) {
      await t.test(name, async () => {
        const topic = await createTopic(t, source, { partitions: 2 })
        topics.push(topic)
        await produce(
          source,
          topic,
          Array.from({ length: RECORDS }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` }))
        )
        const consumerConfig = writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': uniqueName('mtls') }, 'source.properties')
        const producerConfig = writeProperties(mtlsClient(stores), 'mtls.properties')
        const sidecar = run(['--consumer.config', consumerConfig, '--producer.config', producerConfig, '--whitelist', topic])
        await waitMirroring(sidecar)
        await waitUntil(async () => (await totalRecords(secured.cluster, topic).catch(() => 0n)) === BigInt(RECORDS), {
          timeoutMs: 30_000,
          message: `${RECORDS} records in the mTLS cluster`,
        })
        sidecar.child.kill('SIGTERM')
        assert.equal(await sidecar.exited, 0, sidecar.stderr())
        const copied = await readAll(secured.cluster, topic)
        assert.equal(copied.length, RECORDS)
        assert.deepEqual(auditKeys(copied, RECORDS), { missing: 0, duplicates: 0 })
      })
    }
    const topic = topics[0] as string

    await t.test('mirror-check reads the mTLS cluster with --target-command-config', async () => {
      const result = await runMirrorCheck([
        'verify',
        '--source',
        source.bootstrap,
        '--target',
        secured.mtlsBootstrap,
        '--target-command-config',
        pemConfig,
        '--topic',
        topic,
        '--group',
        uniqueName('no-mirror'),
        '--format',
        'json',
      ])
      assert.equal(result.code, 0, result.stderr)
      const json = JSON.parse(result.stdout) as { total: { checked: number, missing: number, extra: number, changed: number } }
      assert.deepEqual(
        { checked: json.total.checked, missing: json.total.missing, extra: json.total.extra, changed: json.total.changed },
        { checked: RECORDS, missing: 0, extra: 0, changed: 0 }
      )
      const refused = await runMirrorCheck([
        'offsets',
        '--bootstrap-server',
        secured.mtlsBootstrap,
        '--command-config',
        writeProperties(mtlsClient(noCertificate)),
        '--group',
        'any',
      ])
      assert.equal(refused.code, 2, refused.stderr)
      assert.match(refused.stderr.trim(), /^mirror-check: the source cluster .*refused the TLS handshake .*none is configured; set ssl\.keystore\.location/)
    })

    // Each failure: exit 2 and one last line naming the cluster (or its config file) and the key to fix.
    const consumerConfig = writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': uniqueName('mtls-bad') }, 'source.properties')
    const failures: Array<[string, Record<string, string>, NodeJS.ProcessEnv, RegExp]> = [
      [
        'no client certificate',
        noCertificate,
        env,
        /^mirror-sidecar: cannot connect to the target cluster \(127\.0\.0\.1:\d+\): the broker refused the TLS handshake \(alert "bad certificate"\): the listener requires a TLS client certificate.*none is configured; set ssl\.keystore\.location/,
      ],
      [
        'wrong PKCS12 keystore password',
        p12Stores,
        { MIRROR_TEST_KEYSTORE_PASSWORD: WRONG_PASSWORD },
        /^mirror-sidecar: \S+\/mtls\.properties: ssl\.keystore\.password "\$\{env:MIRROR_TEST_KEYSTORE_PASSWORD\}": does not open the PKCS12 keystore \S+client-keystore\.p12 \(wrong password\)/,
      ],
      [
        'client certificate signed by another CA',
        { ...pemStores, 'ssl.keystore.location': certificates.foreignClientKeystorePem },
        env,
        /^mirror-sidecar: cannot connect to the target cluster .*refused the TLS handshake .*did not accept the client certificate of ssl\.keystore\.location/,
      ],
    ]
    for (const [name, stores, runEnv, expected] of failures) {
      await t.test(name, async sub => {
        const producerConfig = writeProperties(mtlsClient(stores), 'mtls.properties')
        const failed = run(['--consumer.config', consumerConfig, '--producer.config', producerConfig, '--whitelist', topic], runEnv)
        assert.equal(await failed.exited, 2, failed.stderr())
        const lines = failed.stderr().trim().split('\n')
        sub.diagnostic(lines.at(-1) ?? '')
        assert.match(lines.at(-1) ?? '', expected)
        assert.doesNotMatch(failed.stderr(), /\n\s+at /, 'no stack trace')
      })
    }

    // Nothing printed by any run holds a secret: store passwords, the wrong password, key material.
    assert.equal(runs.length, 5)
    const everything = runs.map(r => r.stderr() + r.stdout()).join('\n')
    const keyLine = readFileSync(certificates.clientKeyPem, 'utf8').split('\n')[1] as string
    for (const secret of [STORE_PASSWORDS.keystore, STORE_PASSWORDS.truststore, WRONG_PASSWORD, keyLine]) {
      assert.equal(everything.includes(secret), false, `a secret appeared in the output: ${secret.slice(0, 4)}...`)
    }
  }
)
