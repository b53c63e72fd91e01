import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import kafkajs, { type Producer } from '@kafka-mirror-sidecar/kafkajs'
import { saslCredentials } from '../../src/config/cluster-connection.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { startSecuredCluster, type SecuredCluster } from '../helpers/secured-cluster.js'
import { waitUntil } from '../helpers/wait.js'

const { AclOperationTypes: O, AclPermissionTypes: P, AclResourceTypes: R, ResourcePatternTypes: T } = kafkajs

/** Kafka's StandardAuthorizer; the PLAINTEXT principal (ANONYMOUS: the test's admin and the broker itself) is a super user. */
const AUTHORIZER = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' }
const USERS = { app: 'app-secret-7c21', mirror: 'mirror-secret-90de' } as const

interface FenceJson {
  mode: string
  acls: Array<{ action: string, binding: { resourceName: string, principal: string, operation: string, permission: string } }>
  proof?: { held: boolean, producers: Array<{ partition: number, producerId: string, afterFence: boolean }> }
}

/** An idempotent producer of `user` over the SASL_SSL listener (idempotent: the leader keeps its state, which DescribeProducers shows). */
async function producerOf (t: TestContext, secured: SecuredCluster, user: keyof typeof USERS): Promise<Producer> {
  const producer = createKafkaClient({
    alias: user,
    brokers: [secured.saslSslBootstrap],
    clientId: `fence-test-${user}`,
    tls: { ca: [readFileSync(secured.certificates.caPem, 'utf8')] },
    sasl: saslCredentials('scram-sha-512', user, USERS[user]),
    connectionTimeoutMs: 10_000,
  }).producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 0 } })
  await producer.connect()
  t.after(() => producer.disconnect())
  return producer
}

const send = async (producer: Producer, topic: string, value: string): Promise<void> => {
  await producer.send({ topic, acks: -1, messages: [{ value }] })
}

const TITLE = 'fence denies an application principal writes, the mirror principal keeps writing, rollback restores it (StandardAuthorizer, SASL users)'
test(TITLE, { timeout: 240_000 }, async t => {
  const secured = await startSecuredCluster(t, 'fence', { brokerProperties: AUTHORIZER, users: USERS })
  const cluster = secured.cluster
  const topic = uniqueName('fenced')
  await withAdmin(cluster, async admin => {
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] })
    await admin.createAcls({
      acl: ['User:app', 'User:mirror'].map(principal => ({
        resourceType: R.TOPIC,
        resourceName: topic,
        resourcePatternType: T.LITERAL,
        principal,
        host: '*',
        operation: O.WRITE,
        permissionType: P.ALLOW,
      })),
    })
  })
  const app = await producerOf(t, secured, 'app')
  const mirror = await producerOf(t, secured, 'mirror')
  await waitUntil(async () => { await send(app, topic, 'before'); return true }, { timeoutMs: 30_000, message: 'the application to write (ACLs applied)' })
  await send(mirror, topic, 'mirror-before')

  const stateFile = join(mkdtempSync(join(tmpdir(), 'fence-')), 'fence.json')
  const fence = (...flags: string[]) =>
    runMirrorCheck([
      'fence', '--source', cluster.bootstrap, '--topic', topic, '--allow-principal', 'User:mirror', '--state-file', stateFile, '--format', 'json', ...flags,
    ])

  const dry = await fence()
  assert.equal(dry.code, 0, dry.stderr)
  const plan = JSON.parse(dry.stdout) as FenceJson
  assert.deepEqual(plan.acls.map(a => [a.action, a.binding.principal, a.binding.operation, a.binding.permission]), [['create', 'User:app', 'WRITE', 'DENY']])
  assert.equal(existsSync(stateFile), false, 'a dry run writes nothing')

  const executed = await fence('--execute', '--settle-seconds', '2')
  assert.equal(executed.code, 0, executed.stderr)
  const report = JSON.parse(executed.stdout) as FenceJson
  t.diagnostic(`proof: ${JSON.stringify(report.proof)}`)
  assert.equal(report.proof?.held, true)
  assert.equal(report.proof?.producers.length, 2, 'DescribeProducers lists both idempotent producers')
  assert.ok(report.proof?.producers.every(p => !p.afterFence))
  assert.ok(existsSync(stateFile))

  await assert.rejects(send(app, topic, 'after-fence'), /authoriz/i, 'the application is refused')
  await send(mirror, topic, 'mirror-after-fence')

  const rolledBack = await fence('--rollback')
  assert.equal(rolledBack.code, 0, rolledBack.stderr)
  assert.deepEqual((JSON.parse(rolledBack.stdout) as FenceJson).acls.map(a => [a.action, a.binding.principal]), [['deleted', 'User:app']])
  assert.equal(existsSync(stateFile), false)
  const appAgain = await producerOf(t, secured, 'app')
  await waitUntil(async () => { await send(appAgain, topic, 'after-rollback'); return true }, { timeoutMs: 30_000, message: 'the application to write again' })
  const left = await withAdmin(cluster, admin =>
    admin.describeAcls({ resourceType: R.TOPIC, resourceName: topic, resourcePatternType: T.LITERAL, operation: O.ANY, permissionType: P.ANY })
  )
  const leftAcls = left.resources.flatMap(r => r.acls.map(a => `${a.principal} ${a.permissionType === P.ALLOW ? 'ALLOW' : 'DENY'}`)).sort()
  assert.deepEqual(leftAcls, ['User:app ALLOW', 'User:mirror ALLOW'], 'only the ALLOWs are left')
})

test('fence on a cluster without an authorizer: one line saying it is impossible there and what to do, exit 2', async () => {
  const { source } = await sharedClusters()
  const result = await runMirrorCheck(['fence', '--source', source.bootstrap, '--topic', '__consumer_offsets', '--allow-principal', 'User:mirror'])
  assert.equal(result.code, 2, result.stdout)
  assert.match(result.stderr, /^mirror-check: fence impossible on the source cluster \(.+\): it runs no authorizer \(DescribeAcls: SECURITY_DISABLED\)/)
  assert.match(result.stderr, /stop the applications' producers yourself/)
  assert.equal(result.stderr.split('\n').length, 2)
})
