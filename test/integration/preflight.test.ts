import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { parseAllDocuments } from 'yaml'
import type { LocalCluster } from '../../scripts/local-kafka/local-cluster.js'
import { uniqueName, withAdmin, withFreshPortsOnBindError } from '../helpers/kafka.js'
import { mm2File } from '../helpers/mm2-file.js'
import { spawnSidecarArgs, writeProperties } from '../helpers/sidecar.js'

const { AclOperationTypes: O, AclPermissionTypes: P, AclResourceTypes: R, ResourcePatternTypes: T } = kafkajs

const USER = { name: 'mirror', password: 'mirror-secret-9b2d' } as const

/**
 * One broker with Kafka's StandardAuthorizer: its PLAINTEXT listener's principal (ANONYMOUS, the
 * test's admin) is a super user; the SASL_PLAINTEXT listener takes the SCRAM-SHA-512 user `mirror`,
 * who has no right until the test grants it.
 */
async function startAuthorizedCluster (t: TestContext): Promise<{ cluster: LocalCluster, saslBootstrap: string }> {
  const { LocalCluster, freePortPair, portAnswers } = await import('../../scripts/local-kafka/clusters.js')
  return await withFreshPortsOnBindError(async from => {
    let port = await freePortPair(from)
    while (await portAnswers(port + 2)) port = await freePortPair(port + 3)
    const cluster = new LocalCluster({
      name: `preflight-${port}`,
      port,
      heap: '384m',
      extraListeners: [{ name: 'SASL_PLAINTEXT', port: port + 2, securityProtocol: 'SASL_PLAINTEXT' }],
      brokerProperties: {
        'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
        'super.users': 'User:ANONYMOUS',
        'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
        'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      },
      formatArgs: ['--add-scram', `SCRAM-SHA-512=[name=${USER.name},password=${USER.password}]`],
    })
    t.after(() => cluster.stop({ graceMs: 2_000 }))
    await cluster.start()
    return { value: { cluster, saslBootstrap: `127.0.0.1:${port + 2}` }, port }
  })
}

interface Grant {
  readonly label: string
  readonly resourceType: number
  readonly name: string
  readonly pattern: number
  readonly operation: number
}

function aclOf (grant: Grant): kafkajs.AclEntry {
  return {
    resourceType: grant.resourceType,
    resourceName: grant.name,
    resourcePatternType: grant.pattern,
    principal: `User:${USER.name}`,
    host: '*',
    operation: grant.operation,
    permissionType: P.ALLOW,
  }
}

test('preflight against one broker with an authorizer and a SASL user', { timeout: 240_000 }, async t => {
  const { cluster, saslBootstrap } = await startAuthorizedCluster(t)
  await t.test('names each right the run misses, with the kafka-acls line that grants it', async t => { await rightsScenario(t, cluster, saslBootstrap) })
  await t.test('refuses an existing target topic whose settings refuse or change the copy', async t => { await settingsScenario(t, cluster) })
})

async function rightsScenario (t: TestContext, cluster: LocalCluster, saslBootstrap: string): Promise<void> {
  const topic = uniqueName('preflight')
  const group = uniqueName('preflight-group')
  await withAdmin(cluster, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] }))
  const client = {
    'bootstrap.servers': saslBootstrap,
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': 'SCRAM-SHA-512',
    'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="${USER.name}" password="${USER.password}";`,
  }
  // MirrorMaker 1 flags with source and target the same cluster: the copied topic keeps its name on the target.
  const consumerConfig = writeProperties({ ...client, 'group.id': group }, 'source.properties')
  const producerConfig = writeProperties(client, 'target.properties')
  const offsetSyncs = 'mirror-offset-syncs.source.internal'
  const grants: Grant[] = [
    { label: `Read on topic ${topic}`, resourceType: R.TOPIC, name: topic, pattern: T.LITERAL, operation: O.READ },
    { label: `Write on topic ${topic}`, resourceType: R.TOPIC, name: topic, pattern: T.LITERAL, operation: O.WRITE },
    { label: `Alter on topic ${topic}`, resourceType: R.TOPIC, name: topic, pattern: T.LITERAL, operation: O.ALTER },
    // Topic config sync (always on with MirrorMaker 1 flags): AlterConfigs implies DescribeConfigs.
    { label: `AlterConfigs on topic ${topic}`, resourceType: R.TOPIC, name: topic, pattern: T.LITERAL, operation: O.ALTER_CONFIGS },
    { label: `Read on group ${group}`, resourceType: R.GROUP, name: group, pattern: T.LITERAL, operation: O.READ },
    { label: `Create on topic ${offsetSyncs}`, resourceType: R.TOPIC, name: offsetSyncs, pattern: T.LITERAL, operation: O.CREATE },
    { label: `Read on topic ${offsetSyncs}`, resourceType: R.TOPIC, name: offsetSyncs, pattern: T.LITERAL, operation: O.READ },
    { label: `Write on topic ${offsetSyncs}`, resourceType: R.TOPIC, name: offsetSyncs, pattern: T.LITERAL, operation: O.WRITE },
  ]
  await withAdmin(cluster, admin => admin.createAcls({ acl: grants.map(aclOf) }))
  const preflight = async (...extra: string[]): Promise<{ code: number | string, stdout: string, stderr: string }> => {
    const run = spawnSidecarArgs(t, [
      'preflight', '--consumer.config', consumerConfig, '--producer.config', producerConfig, '--whitelist', topic,
      '--sync.topic.acls.enabled', 'false', ...extra,
    ])
    const code = await run.exited
    return { code, stdout: run.stdout(), stderr: run.stderr() }
  }

  const complete = await preflight()
  assert.equal(complete.code, 0, complete.stdout + complete.stderr)
  assert.match(complete.stdout, /preflight: nothing missing/)
  assert.match(complete.stdout, new RegExp(`will create ${offsetSyncs}`))

  // One right taken away at a time (Read implies Describe, so taking Read leaves no Describe either): the run's table names it and how to grant it.
  for (const grant of grants) {
    await withAdmin(cluster, admin => admin.deleteAcls({ filters: [aclOf(grant)] }))
    const missing = await preflight()
    await withAdmin(cluster, admin => admin.createAcls({ acl: [aclOf(grant)] }))
    assert.equal(missing.code, 1, `${grant.label} taken away:\n${missing.stdout}${missing.stderr}`)
    const [operation, , type, name] = grant.label.split(' ')
    const flag = type === 'group' ? '--group' : '--topic'
    const line = `kafka-acls --bootstrap-server ${saslBootstrap} --add --allow-principal User:${USER.name} --operation ${operation} ${flag} ${name}`
    const named = missing.stdout.split('\n').some(row => row.includes(`${operation} on ${type} ${name}`) && row.endsWith(line))
    assert.ok(named, `${grant.label} not named:\n${missing.stdout}`)
  }

  // The same run as JSON and as Strimzi KafkaUser resources, with Write on the topic taken away.
  await withAdmin(cluster, admin => admin.deleteAcls({ filters: [aclOf(grants[1]!)] }))
  const json = await preflight('--format', 'json')
  assert.equal(json.code, 1)
  type Missing = { operation: string, resource: { name: string }, grant: string }
  const report = JSON.parse(json.stdout) as { flows: Array<{ clusters: Array<{ role: string, missing: Missing[] }> }> }
  const targetMissing = report.flows[0]!.clusters.find(c => c.role === 'target')!.missing
  assert.deepEqual(targetMissing.map(m => `${m.operation} ${m.resource.name}`), [`Write ${topic}`])
  const strimzi = await preflight('--format', 'strimzi')
  assert.equal(strimzi.code, 1)
  type Acl = { resource: { type: string, name?: string }, operations: string[] }
  const users = parseAllDocuments(strimzi.stdout).map(d => d.toJS() as { kind: string, metadata: { name: string }, spec: { authorization: { acls: Acl[] } } })
  assert.deepEqual(users.map(u => `${u.kind} ${u.metadata.name}`), ['KafkaUser mirror', 'KafkaUser mirror'])
  const targetAcls = users[1]!.spec.authorization.acls
  assert.deepEqual(targetAcls.find(a => a.resource.name === topic)?.operations.sort(), ['Alter', 'AlterConfigs', 'DescribeConfigs', 'Describe', 'Write'].sort())
}

async function settingsScenario (t: TestContext, cluster: LocalCluster): Promise<void> {
  const topic = uniqueName('preflight-settings')
  await withAdmin(cluster, admin => admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: '2000000' }] },
      {
        topic: `A.${topic}`,
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [{ name: 'max.message.bytes', value: '500000' }, { name: 'message.timestamp.type', value: 'LogAppendTime' }],
      },
    ],
  }))
  // Two aliases of the one cluster (the admin listener, a super user: every right is there); A.<topic> is the target topic.
  const mm2 = mm2File({
    clusters: 'A, B',
    'A.bootstrap.servers': cluster.bootstrap,
    'B.bootstrap.servers': cluster.bootstrap,
    'A->B.enabled': 'true',
    'A->B.topics': topic,
  })
  const run = spawnSidecarArgs(t, ['preflight', mm2, '--principal', 'User:ANONYMOUS'])
  const code = await run.exited
  assert.equal(code, 1, run.stdout() + run.stderr())
  const rows = run.stdout().split('\n')
  const fixed = (problem: string, fix: string): boolean => rows.some(row => row.includes(`${problem} on topic A.${topic}`) && row.endsWith(fix))
  assert.ok(fixed('max.message.bytes=500000', `--entity-name A.${topic} --add-config max.message.bytes=2000000`), run.stdout())
  assert.ok(fixed('message.timestamp.type=LogAppendTime', '--add-config message.timestamp.type=CreateTime'), run.stdout())
  assert.match(run.stdout(), /preflight: 2 missing/)
}
