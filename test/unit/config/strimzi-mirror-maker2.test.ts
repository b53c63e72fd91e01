import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { MirrorConfig } from '../../../src/config/mirror-config.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { printableConfig } from '../../../src/config/print-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { configFromStrimzi } from '../../../src/config/strimzi-mirror-maker2.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const settings = sidecarSettingsFromFlags({}, new ProblemList())

/** A folder laid out as Kubernetes secret volumes: `<secretName>/<key>` files. */
function secretsDir (secrets: Record<string, Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'strimzi-secrets-'))
  for (const [name, keys] of Object.entries(secrets)) {
    mkdirSync(join(dir, name))
    for (const [key, value] of Object.entries(keys)) writeFileSync(join(dir, name, key), value)
  }
  return dir
}

function resourceFile (yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'kmm2-')), 'kmm2.yaml')
  writeFileSync(path, yaml)
  return path
}

/** A self-signed certificate and its key (PEM), made by openssl. */
function certificate (name: string): { cert: string, key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cert-'))
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', `/CN=${name}`],
    { stdio: 'ignore' }
  )
  return { cert: execFileSync('cat', [join(dir, 'cert.pem')], { encoding: 'utf8' }), key: execFileSync('cat', [join(dir, 'key.pem')], { encoding: 'utf8' }) }
}

const V1 = `apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata:
  name: mm2
spec:
  version: 4.1.0
  replicas: 2
  target:
    alias: b
    bootstrapServers: b-kafka-bootstrap:9093
    groupId: mm2-group
    tls:
      trustedCertificates:
        - secretName: b-cluster-ca-cert
          certificate: ca.crt
    authentication:
      type: scram-sha-512
      username: mirror
      passwordSecret:
        secretName: mirror-user
        password: password
  mirrors:
    - source:
        alias: a
        bootstrapServers: a-kafka-bootstrap:9093
        tls:
          trustedCertificates:
            - secretName: a-cluster-ca-cert
              pattern: "*.crt"
      topicsPattern: "orders.*|payments"
      topicsExcludePattern: ".*-tmp"
      groupsPattern: "billing.*"
      sourceConnector:
        tasksMax: 3
        config:
          replication.policy.class: org.apache.kafka.connect.mirror.IdentityReplicationPolicy
          sync.topic.acls.enabled: "false"
          config.properties.exclude: "segment\\\\.bytes"
      checkpointConnector:
        config:
          sync.group.offsets.enabled: "true"
`

test('a v1 resource with TLS trusted certificates and SCRAM-SHA-512 from Secret files gives one flow with its patterns and connector configs', () => {
  const caA = certificate('a-ca')
  const caB = certificate('b-ca')
  const dir = secretsDir({
    'a-cluster-ca-cert': { 'ca.crt': caA.cert, 'ca.password': 'not a cert' },
    'b-cluster-ca-cert': { 'ca.crt': caB.cert },
    'mirror-user': { password: 'p"w\\d\n' },
  })
  const config = configFromStrimzi(resourceFile(V1), { settings, secretsDir: dir })
  assert.equal(config.flows.length, 1)
  const flow = config.flows[0]
  assert.ok(flow !== undefined)
  assert.equal(flow.name, 'a->b')
  assert.deepEqual(flow.source.brokers, ['a-kafka-bootstrap:9093'])
  assert.equal(flow.source.tls?.ca, caA.cert.trim(), 'only the key matching *.crt is trusted')
  assert.equal(flow.source.sasl, undefined)
  assert.equal(flow.target.tls?.ca, caB.cert.trim())
  assert.equal(flow.target.sasl?.mechanism, 'scram-sha-512')
  assert.equal((flow.target.sasl as { username: string }).username, 'mirror')
  assert.equal(
    (flow.target.sasl as { password: string }).password,
    'p"w\\d',
    "the file's trailing newline is not part of the password; quotes and backslashes survive"
  )
  assert.equal(flow.topics.include, 'orders.*|payments')
  assert.equal(flow.topics.exclude, '.*-tmp')
  assert.ok(flow.topics.matches('orders-eu') && !flow.topics.matches('orders-tmp'))
  assert.equal(flow.groupSync.groups.include, 'billing.*')
  assert.equal(flow.groupSync.enabled, true)
  assert.equal(flow.numStreams, 3)
  assert.deepEqual(flow.replicationPolicy, { kind: 'identity' })
  assert.equal(flow.syncTopicAcls, false)
  assert.equal(flow.topicConfigFilter.copies('segment.bytes'), false)
  assert.equal(flow.topicConfigFilter.copies('min.insync.replicas'), true)
  assert.deepEqual(config.ignoredKeys, ['spec.replicas', 'spec.target.groupId', 'spec.version'])
  assert.ok(!JSON.stringify(printableConfig(config)).includes('p\\"w'), '--print-config shows no password')
})

test('a v1beta2 resource (clusters, connectCluster, sourceCluster/targetCluster) with TLS client authentication and SCRAM-SHA-256', () => {
  const ca = certificate('ca')
  const user = certificate('user')
  const dir = secretsDir({ 'src-ca': { 'ca.crt': ca.cert }, 'src-user': { 'user.crt': user.cert, 'user.key': user.key }, 'tgt-user': { password: 'secret' } })
  const config = configFromStrimzi(resourceFile(`apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata: { name: mm2 }
spec:
  connectCluster: tgt
  clusters:
    - alias: src
      bootstrapServers: src:9093
      tls: { trustedCertificates: [ { secretName: src-ca, certificate: ca.crt } ] }
      authentication: { type: tls, certificateAndKey: { secretName: src-user, certificate: user.crt, key: user.key } }
      config: { ssl.endpoint.identification.algorithm: "", sasl.jaas.config: "dropped", security.protocol: PLAINTEXT }
    - alias: tgt
      bootstrapServers: tgt:9092
      authentication: { type: scram-sha-256, username: mirror, passwordSecret: { secretName: tgt-user, password: password } }
  mirrors:
    - sourceCluster: src
      targetCluster: tgt
      topicsBlacklistPattern: "skip.*"
      heartbeatConnector: { config: { heartbeats.topic.replication.factor: 1 } }
`), { settings, secretsDir: dir })
  const flow = config.flows[0]
  assert.equal(flow?.name, 'src->tgt')
  assert.equal(flow?.source.tls?.cert, user.cert.trim())
  assert.equal(flow?.source.tls?.key, user.key.trim())
  assert.equal(flow?.source.tls?.checkServerIdentity !== undefined, true, 'ssl.endpoint.identification.algorithm "" turns host name checks off')
  assert.equal(flow?.target.tls, undefined)
  assert.equal(flow?.target.sasl?.mechanism, 'scram-sha-256')
  assert.equal(flow?.topics.exclude, 'skip.*')
  assert.deepEqual(flow?.topics.include, '.*')
  assert.equal(flow?.source.sasl, undefined)
  assert.deepEqual(
    config.ignoredKeys,
    ['spec.clusters[0].config.sasl.jaas.config', 'spec.clusters[0].config.security.protocol', 'spec.mirrors[0].heartbeatConnector'],
    'security keys in config are dropped, as Strimzi drops them'
  )
})

test('a resource gives the same configuration as the mm2.properties file with the same keys', () => {
  const viaStrimzi = configFromStrimzi(resourceFile(`apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
spec:
  target: { alias: B, bootstrapServers: "b1:9092" }
  mirrors:
    - source: { alias: A, bootstrapServers: "a1:9092", config: { consumer.max.poll.records: 500 } }
      topicsPattern: "orders.*, payments"
      sourceConnector: { config: { refresh.topics.interval.seconds: 60 } }
`), { settings })
  const viaFile = configFromMm2(
    writeProperties(
      {
        clusters: 'B, A',
        'B.bootstrap.servers': 'b1:9092',
        'A.bootstrap.servers': 'a1:9092',
        'A.consumer.max.poll.records': '500',
        'B.security.protocol': 'PLAINTEXT',
        'A.security.protocol': 'PLAINTEXT',
        'A->B.enabled': 'true',
        'A->B.topics': 'orders.*, payments',
        'A->B.refresh.topics.interval.seconds': '60',
      },
      'mm2.properties'
    ),
    { settings }
  )
  const withoutPositions = (config: MirrorConfig): unknown => printableConfig({ ...config, flows: config.flows.map(({ mm2Positions: _, ...flow }) => flow) })
  assert.deepEqual(withoutPositions(viaStrimzi), withoutPositions(viaFile))
  // Where MirrorMaker 2 kept its positions differs: Strimzi runs Connect in distributed mode, with its own topic and connector names.
  assert.deepEqual(viaStrimzi.flows[0]?.mm2Positions, {
    offsetsTopic: 'mirrormaker2-cluster-offsets',
    key: 'spec.target.offsetStorageTopic',
    connector: 'A->B.MirrorSourceConnector',
  })
  assert.deepEqual(viaFile.flows[0]?.mm2Positions, { offsetsTopic: 'mm2-offsets.A.internal', key: 'offset.storage.topic', connector: 'MirrorSourceConnector' })
})

test(
  "Connect's offsets topic of the takeover: spec.target.offsetStorageTopic (v1), the target's config offset.storage.topic (v1beta2); in mm2.properties the top-level offset.storage.topic over <target>.offset.storage.topic",
  () => {
    const v1 = configFromStrimzi(
      resourceFile(`apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
spec:
  target: { alias: B, bootstrapServers: "b1:9092", groupId: g, offsetStorageTopic: my-offsets, configStorageTopic: c, statusStorageTopic: s }
  mirrors: [ { source: { alias: A, bootstrapServers: "a1:9092" } } ]
`),
      { settings }
    )
    assert.deepEqual(v1.flows[0]?.mm2Positions, { offsetsTopic: 'my-offsets', key: 'spec.target.offsetStorageTopic', connector: 'A->B.MirrorSourceConnector' })
    assert.ok(!(v1.ignoredKeys ?? []).includes('spec.target.offsetStorageTopic'), String(v1.ignoredKeys))
    const v1beta2 = configFromStrimzi(
      resourceFile(`apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
spec:
  connectCluster: B
  clusters: [ { alias: A, bootstrapServers: "a:9092" }, { alias: B, bootstrapServers: "b:9092", config: { offset.storage.topic: beta-offsets } } ]
  mirrors: [ { sourceCluster: A, targetCluster: B } ]
`),
      { settings }
    )
    assert.deepEqual(v1beta2.flows[0]?.mm2Positions, {
      offsetsTopic: 'beta-offsets',
      key: 'spec.clusters[1].config.offset.storage.topic',
      connector: 'A->B.MirrorSourceConnector',
    })
    const file = (extra: Record<string, string>): MirrorConfig =>
      configFromMm2(
        writeProperties(
          { clusters: 'A, B', 'A.bootstrap.servers': 'a:9092', 'B.bootstrap.servers': 'b:9092', 'A->B.enabled': 'true', ...extra },
          'mm2.properties'
        ),
        { settings }
      )
    assert.equal(file({ 'B.offset.storage.topic': 'per-target' }).flows[0]?.mm2Positions?.offsetsTopic, 'per-target')
    assert.equal(
      file({ 'B.offset.storage.topic': 'per-target', 'offset.storage.topic': 'top' }).flows[0]?.mm2Positions?.offsetsTopic,
      'top',
      "MirrorMakerConfig.workerConfig applies the top-level key over the cluster's"
    )
    assert.throws(() => file({ 'offset.storage.topic': 'no spaces' }), /offset\.storage\.topic "no spaces": expected a topic name/)
  }
)

test('what cannot be honoured is refused, each problem naming the resource field', () => {
  const refused = (yaml: string, pattern: RegExp, secrets?: string): void => {
    assert.throws(() => configFromStrimzi(resourceFile(yaml), { settings, ...(secrets === undefined ? {} : { secretsDir: secrets }) }), pattern)
  }
  const target = '  target: { alias: B, bootstrapServers: "b:9092" }\n'
  const mirror = '  mirrors: [ { source: { alias: A, bootstrapServers: "a:9092" } } ]\n'
  refused(
    `apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n  connectCluster: B\n  clusters: []\n${target}${mirror}`,
    /spec\.clusters: is not in kafka\.strimzi\.io\/v1/
  )
  refused(
    `apiVersion: kafka.strimzi.io/v1alpha1\nkind: KafkaMirrorMaker2\nspec:\n${target}${mirror}`,
    /apiVersion "kafka\.strimzi\.io\/v1alpha1": expected kafka\.strimzi\.io\/v1beta2 or kafka\.strimzi\.io\/v1/
  )
  refused(
    `apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n  target: { alias: B, bootstrapServers: "b:9092", authentication: { type: custom, sasl: true } }\n${mirror}`,
    /spec\.target\.authentication\.(type "custom"|sasl)/
  )
  refused(
    `apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n${target}  mirrors: [ { source: { alias: A, bootstrapServers: "a:9092" }, sourceConnector: { pause: true } } ]\n`,
    /spec\.mirrors\[0\]\.sourceConnector\.pause "true": a paused connector cannot be honoured/
  )
  refused(`apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n  target: { alias: B, bootstrapServers: "b:9092", authentication: { type: scram-sha-512, username: u, passwordSecret: { secretName: gone, password: password } } }\n${mirror}`,
    /spec\.target\.authentication\.passwordSecret: key password of Secret gone: .*\/gone\/password: no such file/, secretsDir({}))
  refused(`apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n  target: { alias: B, bootstrapServers: "b:9092", authentication: { type: oauth, clientId: c, tokenEndpointUri: "https://idp/token", accessToken: { secretName: s, key: t }, clientSecret: { secretName: s, key: k } } }\n${mirror}`,
    /spec\.target\.authentication\.accessToken .*cannot be honoured with authentication type oauth/, secretsDir({ s: { k: 'x' } }))
  refused(
    `apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n${target}  mirrors: [ { source: { alias: A, bootstrapServers: "a:9092" }, sourceConnector: { tasksMax: none } } ]\n`,
    /spec\.mirrors\[0\]\.sourceConnector\.tasksMax "none": expected/
  )
  assert.throws(
    () => configFromStrimzi(resourceFile(`apiVersion: kafka.strimzi.io/v1\nkind: KafkaMirrorMaker2\nspec:\n${target}${mirror}`), { settings, clusters: ['A'] }),
    /--clusters "A": is not the target cluster of .* \(B\); give that alias or drop --clusters/
  )
  refused(
    'apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaMirrorMaker2\nspec:\n  connectCluster: B\n  clusters: [ { alias: A, bootstrapServers: "a:9092" }, { alias: B, bootstrapServers: "b:9092" }, { alias: C, bootstrapServers: "c:9092" } ]\n  mirrors: [ { sourceCluster: A, targetCluster: C } ]\n',
    /spec\.mirrors\[0\]\.targetCluster "C": is not the target cluster B/
  )
})

test('OAuth client credentials from a Secret become OAUTHBEARER settings', () => {
  const config = configFromStrimzi(resourceFile(`apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
spec:
  target: { alias: B, bootstrapServers: "b:9093", tls: {}, authentication: { type: oauth, clientId: mirror, tokenEndpointUri: "https://idp.example.com/token", scope: kafka, clientSecret: { secretName: oauth, key: secret } } }
  mirrors: [ { source: { alias: A, bootstrapServers: "a:9092" } } ]
`), { settings, secretsDir: secretsDir({ oauth: { secret: 'cs\n' } }) })
  const sasl = config.flows[0]?.target.sasl as { mechanism: string, clientId: string, clientSecret: string, tokenEndpointUrl: string, scope?: string }
  assert.equal(sasl.mechanism, 'oauthbearer')
  assert.equal(sasl.clientId, 'mirror')
  assert.equal(sasl.clientSecret, 'cs')
  assert.equal(sasl.tokenEndpointUrl, 'https://idp.example.com/token')
  assert.equal(sasl.scope, 'kafka')
})
