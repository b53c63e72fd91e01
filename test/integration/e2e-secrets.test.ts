import assert from 'node:assert/strict'
import { test } from 'node:test'
import { deleteTopicIfExists, produce, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { SCRAM_USERS, startSecuredCluster } from '../helpers/secured-cluster.js'
import { spawnSidecarArgs, waitMirroring, writeProperties } from '../helpers/sidecar.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const FAST = ['--offset.commit.interval.ms', '500', '--refresh.topics.interval.ms', '1000', '--metrics.port', '0', '--metrics.host', '127.0.0.1']

test(
  'a SASL password written in the --consumer.config file appears nowhere: debug logs, --print-config, /metrics, a failed login',
  { timeout: 150_000 },
  async t => {
    const { target } = await sharedClusters()
    const secured = await startSecuredCluster(t, 'e2e-secrets')
    const password = SCRAM_USERS.alice
    const wrongPassword = 'wrong-pass-93ad7e'
    // Topics on the secured cluster go with it (its folder is removed when the test ends).
    const topic = uniqueName('secret')
    await withAdmin(secured.cluster, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(
      secured.cluster,
      topic,
      Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` }))
    )

    const sourceConfig = (secret: string): string =>
      writeProperties(
        {
          'bootstrap.servers': secured.saslSslBootstrap,
          'group.id': uniqueName('e2e-secrets'),
          'auto.offset.reset': 'earliest',
          'security.protocol': 'SASL_SSL',
          'sasl.mechanism': 'SCRAM-SHA-512',
          'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="${secret}";`,
          'ssl.truststore.type': 'PEM',
          'ssl.truststore.location': secured.certificates.caPem,
        },
        'secured-source.properties'
      )
    const producerConfig = writeProperties({ 'bootstrap.servers': target.bootstrap, acks: 'all' }, 'target.properties')
    const args = (secret: string, ...more: string[]): string[] => [
      '--consumer.config',
      sourceConfig(secret),
      '--producer.config',
      producerConfig,
      '--whitelist',
      topic,
      ...FAST,
      ...more,
    ]

    const printed = spawnSidecarArgs(t, args(password, '--print-config'))
    assert.equal(await printed.exited, 0, printed.stderr())
    const shown = JSON.parse(printed.stdout()) as { flows: Array<{ source: { sasl?: Record<string, unknown> } }> }
    assert.deepEqual(shown.flows[0]?.source.sasl, { mechanism: 'SCRAM-SHA-512', username: 'alice', password: '[redacted]' })

    const sidecar = spawnSidecarArgs(t, args(password, '--log.level', 'debug'))
    const port = await sidecarHttpPort(sidecar)
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 20n, {
      timeoutMs: 30_000,
      message: 'records copied out of the secured cluster',
    })
    const exposition = await scrape(port)
    const openMetrics = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { accept: 'application/openmetrics-text' } })).text()
    const probes = await Promise.all(['/healthz', '/readyz', '/nowhere'].map(async path => await (await fetch(`http://127.0.0.1:${port}${path}`)).text()))
    assert.match(exposition, /kafka_mirror_produced_records_total\{[^}]*\} 20\b/, 'the scrape is of a mirror that worked')
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
    assert.ok(
      sidecar
        .stderr()
        .split('\n')
        .filter(line => line.includes('"level":"debug"')).length > 50,
      'debug logging (kafkajs requests included) was on'
    )

    const refused = spawnSidecarArgs(t, args(wrongPassword, '--log.level', 'debug'))
    assert.equal(await refused.exited, 2, refused.stderr().slice(-2000))
    // At debug level kafkajs may still log a disconnect after the final line, so look for the line itself.
    const final = refused
      .stderr()
      .split('\n')
      .filter(line => line.startsWith('mirror-sidecar: '))
    assert.equal(final.length, 1, refused.stderr().slice(-2000))
    assert.match(final[0] as string, /source cluster.*authentication failed/)

    const outputs: Array<[string, string]> = [
      ['--print-config stdout', printed.stdout()],
      ['--print-config stderr', printed.stderr()],
      ['debug log', sidecar.stderr()],
      ['stdout', sidecar.stdout()],
      ['/metrics', exposition],
      ['/metrics (OpenMetrics)', openMetrics],
      ['/healthz /readyz 404', probes.join('\n')],
      ['failed login log', refused.stderr() + refused.stdout()],
    ]
    for (const [where, text] of outputs) {
      assert.equal(text.includes(password), false, `the password appears in ${where}`)
      assert.equal(text.includes(wrongPassword), false, `the wrong password appears in ${where}`)
    }
  }
)
