import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { SCRAM_USERS, startSecuredCluster } from '../helpers/secured-cluster.js'
import { spawnSidecarArgs, waitMirroring, writeProperties, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const FAST = ['--offset.commit.interval.ms', '500', '--refresh.topics.interval.ms', '1000', '--metrics.port', '0', '--metrics.host', '127.0.0.1']
const SCRAM_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule'

test(
  'mirrors into and out of a SASL_SSL (SCRAM-SHA-512) cluster; bad credentials, trust and mechanism exit 2 naming the cluster; no secret is printed',
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const secured = await startSecuredCluster(t)
    const password = SCRAM_USERS.alice
    const secretsFile = writeProperties({ 'alice.password': password }, 'secrets.properties')
    const clientKeyLine = readFileSync(secured.certificates.clientKeyPem, 'utf8').split('\n')[1] as string
    const runs: SidecarProcess[] = []
    const keep = (sidecar: SidecarProcess): SidecarProcess => {
      runs.push(sidecar)
      return sidecar
    }
    const securedClient = (overrides: Record<string, string> = {}): Record<string, string> => ({
      'bootstrap.servers': secured.saslSslBootstrap,
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'SCRAM-SHA-512',
      'sasl.jaas.config': `${SCRAM_MODULE} required username="alice" password="\${env:MIRROR_TEST_SCRAM_PASSWORD}";`,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': secured.certificates.caPem,
      ...overrides,
    })
    const env = { MIRROR_TEST_SCRAM_PASSWORD: password }

    // Plaintext source -> secured target, password from ${env:...}.
    const outbound = await createTopic(t, source, { partitions: 2 })
    await produce(
      source,
      outbound,
      Array.from({ length: 50 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` }))
    )
    const consumerConfig = writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': uniqueName('sec-out') }, 'source.properties')
    const producerConfig = writeProperties(securedClient(), 'secured.properties')
    const out = keep(spawnSidecarArgs(t, ['--consumer.config', consumerConfig, '--producer.config', producerConfig, '--whitelist', outbound, ...FAST], env))
    await waitMirroring(out)
    await waitUntil(async () => (await totalRecords(secured.cluster, outbound).catch(() => 0n)) === 50n, {
      timeoutMs: 60_000,
      message: 'records copied into the secured cluster',
    })
    out.child.kill('SIGTERM')
    assert.equal(await out.exited, 0, out.stderr())

    // Secured source -> plaintext target, password from ${file:...}.
    // Topics on the secured cluster go with it (its folder is removed when the test ends).
    const inbound = uniqueName('inbound')
    await withAdmin(secured.cluster, admin =>
      admin.createTopics({ waitForLeaders: true, topics: [{ topic: inbound, numPartitions: 1, replicationFactor: 1 }] })
    )
    t.after(() => deleteTopicIfExists(target, inbound))
    await produce(
      secured.cluster,
      inbound,
      Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `back-${i}` }))
    )
    const securedConsumer = writeProperties(
      securedClient({
        'group.id': uniqueName('sec-in'),
        'sasl.jaas.config': `${SCRAM_MODULE} required username="alice" password="\${file:${secretsFile}:alice.password}";`,
      }),
      'secured-source.properties'
    )
    const plainTarget = writeProperties({ 'bootstrap.servers': target.bootstrap }, 'target.properties')
    const back = keep(
      spawnSidecarArgs(t, ['--consumer.config', securedConsumer, '--producer.config', plainTarget, '--whitelist', inbound, '--log.level', 'debug', ...FAST])
    )
    await waitMirroring(back)
    await waitUntil(async () => (await totalRecords(target, inbound).catch(() => 0n)) === 20n, {
      timeoutMs: 60_000,
      message: 'records copied out of the secured cluster',
    })
    assert.deepEqual(
      (await readAll(target, inbound)).map(r => r.value?.toString()),
      Array.from({ length: 20 }, (_, i) => `back-${i}`)
    )
    back.child.kill('SIGTERM')
    assert.equal(await back.exited, 0, back.stderr())

    // --print-config of a run with secrets (SASL password and a client key) shows them redacted.
    const mtls = writeProperties(
      {
        'bootstrap.servers': secured.mtlsBootstrap,
        'security.protocol': 'SSL',
        'ssl.truststore.type': 'PEM',
        'ssl.truststore.location': secured.certificates.caPem,
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.key': readFileSync(secured.certificates.clientKeyPem, 'utf8').replace(/\n/g, '\\n'),
        'ssl.keystore.certificate.chain': readFileSync(secured.certificates.clientCertPem, 'utf8').replace(/\n/g, '\\n'),
      },
      'mtls.properties'
    )
    const printed = keep(
      spawnSidecarArgs(
        t,
        ['--consumer.config', securedConsumer, '--consumer.config', mtls, '--producer.config', producerConfig, '--whitelist', 'x', '--print-config'],
        env
      )
    )
    assert.equal(await printed.exited, 0, printed.stderr())
    const shown = JSON.parse(printed.stdout()) as { flows: Array<{ source: Record<string, unknown>, target: Record<string, unknown> }> }
    assert.deepEqual(shown.flows[0]?.source.sasl, { mechanism: 'SCRAM-SHA-512', username: 'alice', password: '[redacted]' })
    assert.equal((shown.flows[1]?.source.tls as Record<string, unknown>).clientKey, '[redacted]')

    // Each failure: exit 2, one message naming the cluster alias and the reason.
    const failures: Array<[string, Record<string, string>, Record<string, string>, RegExp]> = [
      ['wrong password', {}, { MIRROR_TEST_SCRAM_PASSWORD: 'not-the-password-7' }, /target cluster.*authentication failed.*check the username and password/],
      ['untrusted certificate', { 'ssl.truststore.location': secured.certificates.otherCaPem }, env, /target cluster.*certificate.*not trusted/],
      ['wrong mechanism', { 'sasl.mechanism': 'SCRAM-SHA-256' }, env, /target cluster.*wrong SASL mechanism/],
    ]
    for (const [name, overrides, runEnv, expected] of failures) {
      const config = writeProperties(securedClient(overrides), 'bad.properties')
      const failed = keep(spawnSidecarArgs(t, ['--consumer.config', consumerConfig, '--producer.config', config, '--whitelist', outbound, ...FAST], runEnv))
      assert.equal(await failed.exited, 2, `${name}: ${failed.stderr()}`)
      const last = failed.stderr().trim().split('\n').at(-1) ?? ''
      assert.match(last, /^mirror-sidecar: /, name)
      assert.match(last, expected, name)
    }

    // Nothing printed by any run holds a secret: logs (debug level included), errors, --print-config.
    assert.equal(runs.length, 6)
    const everything = runs.map(run => run.stderr() + run.stdout()).join('\n')
    assert.ok(everything.length > 1000)
    for (const secret of [password, 'not-the-password-7', clientKeyLine]) {
      assert.equal(everything.includes(secret), false, `a secret appeared in the output: ${secret.slice(0, 4)}...`)
    }
  }
)
