import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { AuditClient } from './audit-client.js'
import { DESCRIBE_PRODUCERS, DESCRIBE_PRODUCERS_VERSIONS, describeProducersRequest, type PartitionProducers } from './describe-producers.js'
import { createInternalCluster, leaderRequestBrokers, type InternalCluster } from './kafkajs-internals.js'

const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs

/** One ACL binding on a topic resource: the resource pattern and the entry, in Kafka's words. */
export interface TopicAclBinding {
  readonly resourceName: string
  readonly patternType: 'LITERAL' | 'PREFIXED'
  readonly principal: string
  readonly host: string
  /** `ALL`, `WRITE`, `READ`, ... */
  readonly operation: string
  readonly permission: 'ALLOW' | 'DENY'
}

const operationName = (code: number): string | undefined =>
  Object.entries(AclOperationTypes as unknown as Record<string, number>).find(([, value]) => value === code)?.[0]

function entryOf (binding: TopicAclBinding) {
  return {
    resourceType: AclResourceTypes.TOPIC,
    resourceName: binding.resourceName,
    resourcePatternType: binding.patternType === 'PREFIXED' ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal: binding.principal,
    host: binding.host,
    operation: (AclOperationTypes as unknown as Record<string, number>)[binding.operation] ?? AclOperationTypes.UNKNOWN,
    permissionType: binding.permission === 'DENY' ? AclPermissionTypes.DENY : AclPermissionTypes.ALLOW,
  }
}

/**
 * The requests of a write fence on one cluster, through an audit client's connection: the ACLs
 * that apply to topics (DescribeAcls), creating and deleting exact bindings (CreateAcls,
 * DeleteAcls), and the producers each partition leader knows (DescribeProducers, KIP-664, sent
 * by `describe-producers.ts`). `close()` is safe to call twice; the audit client is the caller's.
 */
export class FenceAdmin {
  readonly #client: AuditClient
  #cluster: InternalCluster | undefined
  #closed = false

  constructor (client: AuditClient) {
    this.#client = client
  }

  /**
   * Every binding that applies to `topic` (literal, prefixed and the `*` wildcard: DescribeAcls
   * with the MATCH pattern filter); undefined when the cluster runs no authorizer (SECURITY_DISABLED).
   */
  async topicAcls (topic: string): Promise<TopicAclBinding[] | undefined> {
    try {
      const described = await this.#client.admin.describeAcls({
        resourceType: AclResourceTypes.TOPIC,
        resourceName: topic,
        resourcePatternType: ResourcePatternTypes.MATCH,
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      })
      const bindings: TopicAclBinding[] = []
      for (const resource of described.resources) {
        const patternType = resource.resourcePatternType === ResourcePatternTypes.PREFIXED ? 'PREFIXED' : 'LITERAL'
        for (const acl of resource.acls) {
          const permission = acl.permissionType === AclPermissionTypes.DENY ? 'DENY' : acl.permissionType === AclPermissionTypes.ALLOW ? 'ALLOW' : undefined
          const operation = operationName(acl.operation)
          if (permission === undefined || operation === undefined) continue
          bindings.push({ resourceName: resource.resourceName, patternType, principal: acl.principal, host: acl.host, operation, permission })
        }
      }
      return bindings
    } catch (error) {
      if ((error as { type?: string }).type === 'SECURITY_DISABLED') return undefined
      return await this.#client.call(() => Promise.reject(error))
    }
  }

  async createAcls (bindings: readonly TopicAclBinding[]): Promise<void> {
    if (bindings.length === 0) return
    await this.#client.call(() => this.#client.admin.createAcls({ acl: bindings.map(entryOf) }))
  }

  /** Deletes exactly `bindings` (each filter names every field, so no other binding matches it). */
  async deleteAcls (bindings: readonly TopicAclBinding[]): Promise<void> {
    if (bindings.length === 0) return
    await this.#client.call(() => this.#client.admin.deleteAcls({ filters: bindings.map(entryOf) }))
  }

  /** The producers each partition's leader holds state for. */
  async describeProducers (topic: string, partitions: readonly number[]): Promise<PartitionProducers[]> {
    return await this.#client.call(async () => {
      const cluster = await this.#requestCluster()
      const answers: PartitionProducers[] = []
      for (const [broker, list] of await leaderRequestBrokers(cluster, topic, partitions)) {
        answers.push(...(await broker.send(DESCRIBE_PRODUCERS, DESCRIBE_PRODUCERS_VERSIONS, describeProducersRequest(topic, list))) as PartitionProducers[])
      }
      return answers.sort((a, b) => a.partition - b.partition)
    })
  }

  async #requestCluster (): Promise<InternalCluster> {
    if (this.#cluster === undefined) {
      const cluster = createInternalCluster(this.#client.kafka)
      await cluster.connect()
      this.#cluster = cluster
    }
    return this.#cluster
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#cluster?.disconnect()
  }
}
