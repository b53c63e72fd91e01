import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { auditKeys, produce, readAll, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { mm2File } from '../helpers/mm2-file.js'
import { JAVA_STORE_PASSWORDS, makeJavaStores, startSecuredCluster, type SecuredCluster } from '../helpers/secured-cluster.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { spawnSidecarArgs, waitMirroring, writeProperties, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const RECORDS = 60
const FAST = { 'refresh.topics.interval.seconds': '1', 'offset.flush.interval.ms': '500', 'replication.factor': '1' }
const SIDECAR_FLAGS = ['--metrics.port', '0', '--metrics.host', '127.0.0.1']
const WRONG_PASSWORD = 'not-the-jks-password-0d'

/** Java client keys of a cluster's mutual-TLS listener with keytool-made JKS stores and no store type key (Java's default, JKS). */
function jksClient (cluster: SecuredCluster): Record<string, string> {
  const stores = makeJavaStores(cluster.certificates)
  return {
    'bootstrap.servers': cluster.mtlsBootstrap,
    'security.protocol': 'SSL',
    'ssl.truststore.location': stores.truststoreJks,
    'ssl.truststore.password': JAVA_STORE_PASSWORDS.truststore,
    'ssl.keystore.location': stores.clientKeystoreJks,
    'ssl.keystore.password': JAVA_STORE_PASSWORDS.keystore,
    'ssl.key.password': JAVA_STORE_PASSWORDS.key,
  }
}

function prefixed (alias: string, entries: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).map(([k, v]) => [`${alias}.${k}`, v]))
}

test(
  'an mm2.properties with JKS truststores and keystores (no type key) mirrors between two clusters requiring client certificates; a wrong password exits 2 naming key and file; no password in any output',
  { timeout: 240_000 },
  async t => {
    // One after the other: started together, both probe the same free ports and race for them.
    const a = await startSecuredCluster(t, 'jks-a')
    const b = await startSecuredCluster(t, 'jks-b')
    const clientA = jksClient(a)
    const clientB = jksClient(b)
    const topic = uniqueName('jks')
    await withAdmin(a.cluster, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
    await produce(
      a.cluster,
      topic,
      Array.from({ length: RECORDS }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` }))
    )
    const group = uniqueName('jks-mm2')
    const mm2 = (overrides: Record<string, string> = {}): string =>
      mm2File({
        clusters: 'A, B',
        ...prefixed('A', clientA),
        ...prefixed('B', clientB),
        'A->B.enabled': 'true',
        'A->B.topics': topic,
        'A.consumer.group.id': group,
        ...FAST,
        ...overrides,
      })
    const runs: SidecarProcess[] = []
    const run = (args: readonly string[]): SidecarProcess => {
      const sidecar = spawnSidecarArgs(t, args)
      runs.push(sidecar)
      return sidecar
    }
    const outputs: string[] = []

    const sidecar = run([mm2(), '--clusters', 'B', ...SIDECAR_FLAGS])
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(b.cluster, `A.${topic}`).catch(() => 0n)) === BigInt(RECORDS), {
      timeoutMs: 60_000,
      message: `${RECORDS} records in A.${topic} on B`,
    })
    outputs.push(await scrape(await sidecarHttpPort(sidecar)))
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
    const copied = await readAll(b.cluster, `A.${topic}`)
    assert.deepEqual(auditKeys(copied, RECORDS), { missing: 0, duplicates: 0 })

    // mirror-check reads both clusters through the same JKS stores given as --*-command-config.
    const verify = await runMirrorCheck([
      'verify',
      '--source-command-config',
      writeProperties(clientA, 'a.properties'),
      '--target-command-config',
      writeProperties(clientB, 'b.properties'),
      '--topic',
      topic,
      '--target-topic',
      `A.${topic}`,
      '--group',
      group,
      '--format',
      'json',
    ])
    outputs.push(verify.stdout, verify.stderr)
    assert.equal(verify.code, 0, verify.stderr.slice(-2000))
    const verified = JSON.parse(verify.stdout) as { passed: boolean, total: { checked: number, missing: number } }
    assert.deepEqual([verified.passed, verified.total.checked, verified.total.missing], [true, RECORDS, 0])

    // --print-config shows the stores' paths but no password and no key.
    const printed = run([mm2(), '--clusters', 'B', '--print-config'])
    assert.equal(await printed.exited, 0, printed.stderr())
    assert.match(printed.stdout(), /"flows"/)

    // A wrong store password and a wrong key password: exit 2, one line naming the key and the file, before anything connects.
    const failures: Array<[Record<string, string>, RegExp]> = [
      [
        { 'B.ssl.keystore.password': WRONG_PASSWORD },
        /^mirror-sidecar: B\.ssl\.keystore\.password: does not open the JKS keystore \S+client-keystore\.jks \(wrong password\)/,
      ],
      [
        { 'A.ssl.key.password': WRONG_PASSWORD },
        /^mirror-sidecar: A\.ssl\.key\.password: does not decrypt the private key in the JKS keystore \S+client-keystore\.jks \(wrong password\)/,
      ],
      [
        { 'A.ssl.truststore.password': WRONG_PASSWORD },
        /^mirror-sidecar: A\.ssl\.truststore\.password: does not open the JKS truststore \S+truststore\.jks \(wrong password\)/,
      ],
    ]
    for (const [overrides, expected] of failures) {
      const failed = run([mm2(overrides), '--clusters', 'B', ...SIDECAR_FLAGS])
      assert.equal(await failed.exited, 2, failed.stderr())
      const lines = failed.stderr().trim().split('\n')
      assert.match(lines.at(-1) ?? '', expected)
      assert.doesNotMatch(failed.stderr(), /"msg":"(connected|mirroring)"/, 'nothing connected')
    }

    // No output of any run (stdout, stderr, /metrics, --print-config, mirror-check) holds a password or key material.
    const everything = [...runs.map(r => r.stderr() + r.stdout()), ...outputs].join('\n')
    assert.ok(everything.length > 1000)
    const keyLine = readFileSync(a.certificates.clientKeyPem, 'utf8').split('\n')[1] as string
    for (const secret of [...Object.values(JAVA_STORE_PASSWORDS), WRONG_PASSWORD, keyLine]) {
      assert.equal(everything.includes(secret), false, `a secret appeared in the output: ${secret.slice(0, 4)}...`)
    }
  }
)
