import assert from 'node:assert/strict'
import { join, dirname } from 'node:path'
import { test } from 'node:test'
import { auditKeys, committedOffsets, produce, readAll, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { MitKdc, REALM } from '../helpers/kdc.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { mm2File } from '../helpers/mm2-file.js'
import { startKerberosCluster } from '../helpers/secured-cluster.js'
import { spawnSidecarArgs, waitMirroring, writeProperties, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const KRB5_LOGIN_MODULE = 'com.sun.security.auth.module.Krb5LoginModule'
const FAST = { 'refresh.topics.interval.seconds': '1', 'offset.flush.interval.ms': '500', 'replication.factor': '1' }
const SIDECAR_FLAGS = ['--metrics.port', '0', '--metrics.host', '127.0.0.1']

test(
  "GSSAPI (Kerberos) with a real MIT KDC and a broker's GSSAPI listener: an mm2.properties mirror authenticates source and target with two keytabs and copies a topic, mirror-check verify reads both; a missing keytab, a keytab without the principal, an out-of-date keytab and an expired principal each exit 2 with one line before anything is copied; no key in any output",
  { timeout: 300_000 },
  async t => {
    const kdc = await MitKdc.start(t)
    const { cluster, kerberosBootstrap } = await startKerberosCluster(t, kdc)
    const env = { KRB5_CONFIG: kdc.krb5Conf }
    const sourcePrincipal = `mirror-source@${REALM}`
    const targetPrincipal = `mirror-target@${REALM}`
    const sourceKeytab = await kdc.principalWithKeytab(sourcePrincipal)
    const targetKeytab = await kdc.principalWithKeytab(targetPrincipal)
    const client = (keytab: string, principal: string): Record<string, string> => ({
      'bootstrap.servers': kerberosBootstrap,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'GSSAPI',
      'sasl.kerberos.service.name': 'kafka',
      'sasl.jaas.config': `${KRB5_LOGIN_MODULE} required useKeyTab=true storeKey=true keyTab="${keytab}" principal="${principal}";`,
    })
    const prefixed = (alias: string, entries: Record<string, string>): Record<string, string> =>
      Object.fromEntries(Object.entries(entries).map(([k, v]) => [`${alias}.${k}`, v]))
    // Source A and target B are the same cluster, both through the GSSAPI listener, as two principals: the copy lands in A.<topic>.
    const topic = uniqueName('kerberos')
    const copy = `A.${topic}`
    await withAdmin(cluster, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
    const group = uniqueName('kerberos-mm2')
    const mm2 = (source: Record<string, string>, target: Record<string, string>): string =>
      mm2File({
        clusters: 'A, B',
        ...prefixed('A', source),
        ...prefixed('B', target),
        'A->B.enabled': 'true',
        'A->B.topics': topic,
        'A.consumer.group.id': group,
        ...FAST,
      })
    const batch = (from: number): Array<{ partition: number, key: string, value: string }> =>
      Array.from({ length: 40 }, (_, i) => ({ partition: (from + i) % 2, key: `k${from + i}`, value: `v${from + i}` }))
    await produce(cluster, topic, batch(0))
    const runs: SidecarProcess[] = []
    const outputs: string[] = []

    // Keytabs that cannot work: the two the KDC refuses are made first, then made stale or expired.
    const staleKeytab = await kdc.principalWithKeytab(`mirror-stale@${REALM}`, 'stale.keytab')
    await kdc.exportKeytab(`mirror-stale@${REALM}`, 'stale-renewed.keytab')
    const expiredKeytab = await kdc.principalWithKeytab(`mirror-expired@${REALM}`)
    await kdc.kadmin(`modprinc -expire "2020-01-01 00:00:00 UTC" mirror-expired@${REALM}`)
    const missingKeytab = join(dirname(sourceKeytab), 'no-such.keytab')
    const refusals: Array<{ name: string, source: Record<string, string>, line: RegExp }> = [
      {
        name: 'a missing keytab file',
        source: client(missingKeytab, sourcePrincipal),
        line: /^mirror-sidecar: A\.sasl\.jaas\.config: option keyTab ".*no-such\.keytab" does not exist; give the path of the client's keytab file/,
      },
      {
        name: 'a keytab without the principal',
        source: client(targetKeytab, sourcePrincipal),
        line: /^mirror-sidecar: A\.sasl\.jaas\.config: the keytab ".*mirror-target-EXAMPLE-TEST\.keytab" has no key of principal "mirror-source@EXAMPLE\.TEST" \(it holds keys of mirror-target@EXAMPLE\.TEST only\)/,
      },
      {
        name: 'an out-of-date keytab',
        source: client(staleKeytab, `mirror-stale@${REALM}`),
        line: /A\.sasl\.jaas\.config: the KDC refused the key of principal "mirror-stale@EXAMPLE\.TEST" in keytab ".*stale\.keytab" \(.+\): the keytab is out of date/,
      },
      {
        name: 'an expired principal',
        source: client(expiredKeytab, `mirror-expired@${REALM}`),
        line: /A\.sasl\.jaas\.config: the KDC refused principal "mirror-expired@EXAMPLE\.TEST" \(Client's entry in database has expired\); ask the Kerberos administrator to renew/,
      },
    ]
    for (const refusal of refusals) {
      const refused = spawnSidecarArgs(t, [mm2(refusal.source, client(targetKeytab, targetPrincipal)), '--clusters', 'B', ...SIDECAR_FLAGS], env)
      runs.push(refused)
      assert.equal(await refused.exited, 2, `${refusal.name}: ${refused.stderr()}`)
      const lines = refused.stderr().trim().split('\n')
      const last = lines.at(-1) ?? ''
      t.diagnostic(`${refusal.name}: ${last}`)
      assert.match(last, refusal.line, refusal.name)
      assert.ok(
        lines.every(line => !/^\s+at /.test(line)),
        `${refusal.name}: no stack trace`
      )
      assert.equal(await totalRecords(cluster, copy).catch(() => 0n), 0n, `${refusal.name}: nothing copied`)
    }

    // MirrorMaker 1 flags: --consumer.config and --producer.config take the same keys.
    const mm1 = spawnSidecarArgs(
      t,
      [
        '--consumer.config',
        writeProperties({ ...client(missingKeytab, sourcePrincipal), 'group.id': group }, 'consumer.properties'),
        '--producer.config',
        writeProperties(client(targetKeytab, targetPrincipal), 'producer.properties'),
        '--whitelist',
        topic,
        ...SIDECAR_FLAGS,
      ],
      env
    )
    runs.push(mm1)
    assert.equal(await mm1.exited, 2, mm1.stderr())
    assert.match(mm1.stderr(), /consumer\.properties: sasl\.jaas\.config: option keyTab ".*no-such\.keytab" does not exist/)

    const sidecar = spawnSidecarArgs(
      t,
      [mm2(client(sourceKeytab, sourcePrincipal), client(targetKeytab, targetPrincipal)), '--clusters', 'B', ...SIDECAR_FLAGS],
      env
    )
    runs.push(sidecar)
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(cluster, copy).catch(() => 0n)) === 40n, { timeoutMs: 60_000, message: 'the first 40 records copied' })
    await produce(cluster, topic, batch(40))
    await waitUntil(async () => (await totalRecords(cluster, copy)) === 80n, { timeoutMs: 60_000, message: 'the next 40 records copied' })
    await waitUntil(async () => [...(await committedOffsets(cluster, group, topic)).values()].every(offset => offset === 40n), {
      timeoutMs: 30_000,
      message: 'the mirror group committed every copied record',
    })
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-3000))
    assert.deepEqual(auditKeys(await readAll(cluster, copy), 80), { missing: 0, duplicates: 0 })
    assert.doesNotMatch(sidecar.stderr(), /"level":"error"/)

    // mirror-check through the same keys as --*-command-config: each side with its own principal.
    const sourceConfig = writeProperties(client(sourceKeytab, sourcePrincipal), 'source.properties')
    const targetConfig = writeProperties(client(targetKeytab, targetPrincipal), 'target.properties')
    const verify = await runMirrorCheck(
      [
        'verify',
        '--source-command-config',
        sourceConfig,
        '--target-command-config',
        targetConfig,
        '--topic',
        topic,
        '--target-topic',
        copy,
        '--group',
        group,
        '--format',
        'json',
      ],
      { env }
    )
    outputs.push(verify.stdout, verify.stderr)
    assert.equal(verify.code, 0, verify.stderr.slice(-2000))
    assert.equal((JSON.parse(verify.stdout) as { total: { checked: number } }).total.checked, 80)
    const offsets = await runMirrorCheck(['offsets', '--command-config', sourceConfig, '--group', group, '--format', 'json'], { env })
    outputs.push(offsets.stdout, offsets.stderr)
    assert.equal(offsets.code, 0, offsets.stderr)
    assert.deepEqual(
      (JSON.parse(offsets.stdout) as Array<{ partitions: Array<{ currentOffset: number }> }>)[0]?.partitions.map(p => p.currentOffset),
      [40, 40]
    )
    const expired = await runMirrorCheck(['offsets', '--command-config', writeProperties(client(expiredKeytab, `mirror-expired@${REALM}`)), '--group', group], {
      env,
    })
    outputs.push(expired.stdout, expired.stderr)
    assert.equal(expired.code, 2, expired.stderr)
    assert.match(
      expired.stderr.trim(),
      /^mirror-check: .*sasl\.jaas\.config: the KDC refused principal "mirror-expired@EXAMPLE\.TEST" \(Client's entry in database has expired\)/
    )
    assert.equal(expired.stderr.trim().split('\n').length, 1, expired.stderr)

    const printed = spawnSidecarArgs(
      t,
      [mm2(client(sourceKeytab, sourcePrincipal), client(targetKeytab, targetPrincipal)), '--clusters', 'B', '--print-config'],
      env
    )
    runs.push(printed)
    assert.equal(await printed.exited, 0, printed.stderr())
    const shown = JSON.parse(printed.stdout()) as { flows: Array<{ source: { sasl: Record<string, unknown> } }> }
    assert.deepEqual(shown.flows[0]?.source.sasl, {
      mechanism: 'GSSAPI',
      serviceName: 'kafka',
      principal: sourcePrincipal,
      credentials: 'keytab',
      keyTab: sourceKeytab,
    })

    const everything = [...runs.map(r => r.stdout() + r.stderr()), ...outputs].join('\n')
    const keys = [sourceKeytab, targetKeytab, staleKeytab, expiredKeytab].flatMap(keytab => MitKdc.keysOf(keytab))
    assert.ok(keys.length >= 8, `keys read from the keytabs: ${keys.length}`)
    for (const key of keys) assert.equal(everything.includes(key), false, `a key of a keytab appeared in the output: ${key.slice(0, 4)}...`)
  }
)
