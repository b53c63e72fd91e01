import assert from 'node:assert/strict'
import { test } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/local-cluster.js'
import { startExtraCluster, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const { AclOperationTypes: O, AclPermissionTypes: P, AclResourceTypes: R, ResourcePatternTypes: T } = kafkajs

/** Brokers with Kafka's StandardAuthorizer; the PLAINTEXT principal (ANONYMOUS: tests and the mirror) is a super user. */
const AUTHORIZER = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' }

async function aclsOf (cluster: LocalCluster, topic: string): Promise<string[]> {
  const described = await withAdmin(cluster, admin =>
    admin.describeAcls({ resourceType: R.TOPIC, resourceName: topic, resourcePatternType: T.LITERAL, operation: O.ANY, permissionType: P.ANY })
  )
  const name = (table: Record<string, number>, code: number): string => Object.entries(table).find(([, v]) => v === code)?.[0] ?? String(code)
  return described.resources
    .flatMap(r =>
      r.acls.map(
        acl =>
          `${name(P as unknown as Record<string, number>, acl.permissionType)} ${acl.principal} ${name(O as unknown as Record<string, number>, acl.operation)}`
      )
    )
    .sort()
}

test(
  "ACLs of mirrored topics follow on the target with MirrorMaker 2's rule: ALLOW WRITE left out, ALLOW ALL as READ, DENY kept (brokers with an authorizer)",
  { timeout: 180_000 },
  async t => {
    const source = await startExtraCluster(t, 'acl-source', AUTHORIZER)
    const target = await startExtraCluster(t, 'acl-target', AUTHORIZER)
    // Created directly: the clusters are removed with the test (a deletion hook would run after they stopped).
    const topic = uniqueName('acl')
    await withAdmin(source, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] }))
    const acl = (principal: string, operation: number, permissionType: number) => ({
      resourceType: R.TOPIC,
      resourceName: topic,
      resourcePatternType: T.LITERAL,
      principal,
      host: '*',
      operation,
      permissionType,
    })
    await withAdmin(source, admin =>
      admin.createAcls({
        acl: [acl('User:alice', O.READ, P.ALLOW), acl('User:alice', O.WRITE, P.ALLOW), acl('User:bob', O.ALL, P.ALLOW), acl('User:eve', O.READ, P.DENY)],
      })
    )
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('acl'), include: topic, args: ['--sync.topic.acls.interval.seconds', '1'] })
    await waitMirroring(sidecar)
    const port = await sidecarHttpPort(sidecar)
    const expected = ['ALLOW User:alice READ', 'ALLOW User:bob READ', 'DENY User:eve READ']
    await waitUntil(async () => JSON.stringify(await aclsOf(target, topic).catch(() => [])) === JSON.stringify(expected), {
      timeoutMs: 60_000,
      message: 'the target topic to get the ACLs',
    })
    // The counter moves once CreateAcls answered, which can be after the ACLs are visible on the target.
    await waitUntil(async () => sampleSum(await scrape(port), 'kafka_mirror_topic_acls_synced_total') === 3, {
      timeoutMs: 30_000,
      message: 'kafka_mirror_topic_acls_synced_total to count the 3 ACLs written',
    })
    // A new ACL on the source follows; ACLs are never removed from the target.
    await withAdmin(source, admin => admin.createAcls({ acl: [acl('User:carol', O.DESCRIBE, P.ALLOW)] }))
    await waitUntil(async () => (await aclsOf(target, topic)).includes('ALLOW User:carol DESCRIBE'), { timeoutMs: 30_000, message: 'the new ACL to follow' })
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)
