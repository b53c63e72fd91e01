import kafkajs, { type Admin } from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import {
  authorizedOperationsRequest,
  COORDINATOR_KEY,
  FIND_COORDINATOR,
  FIND_COORDINATOR_VERSIONS,
  findCoordinatorRequest,
  DESCRIBE_GROUPS,
  DESCRIBE_GROUPS_VERSIONS,
  groupOperationsRequest,
  METADATA,
  METADATA_VERSIONS,
  type AuthorizedOperations,
  type GroupOperations,
} from './authorized-operations.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'
import { controllerRequestBroker, coordinatorRequestBroker, createInternalCluster, type InternalCluster, type RequestBroker } from './kafkajs-internals.js'

const { ConfigResourceTypes } = kafkajs

/** COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: the group's coordinator is moving or loading. */
const COORDINATOR_NOT_READY: ReadonlySet<number> = new Set([14, 15, 16])

/** Kafka's error codes of a group and a transactional id the principal may not describe. */
const GROUP_AUTHORIZATION_FAILED = 30
const TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53

/** A topic's configs the preflight compares, where the caller may describe them. */
export type TopicSettings = ReadonlyMap<string, Readonly<Record<string, string>>>

/**
 * Reads, without changing anything, what the mirror's principal may do on one cluster: its
 * authorized operations on the cluster, topics and groups (KIP-430, the broker's authorizer asked
 * for the caller itself: no DescribeAcls right needed), whether it may create a topic
 * (CreateTopics with `validate_only`), whether it may describe a transactional id
 * (FindCoordinator), topic configs, and the API versions of the broker. `start()` connects,
 * `stop()` disconnects (once-only).
 */
export class RightsProbe {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  #admin: Admin | undefined
  #cluster: InternalCluster | undefined
  #stopped = false

  constructor (connection: ClusterConnection, logger: Logger) {
    this.#connection = connection
    this.#logger = logger
  }

  async start (): Promise<void> {
    const kafka = createKafkaClient(this.#connection, this.#logger, { retries: 4, maxRetryTimeMs: 2_000 })
    const admin = kafka.admin({ retry: { retries: 1 } })
    const cluster = createInternalCluster(kafka)
    try {
      await admin.connect()
      this.#admin = admin
      await cluster.connect()
      this.#cluster = cluster
    } catch (error) {
      throw this.#failure(error, `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`)
    }
  }

  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    await Promise.allSettled([this.#admin?.disconnect(), this.#cluster?.disconnect()])
  }

  /** The topics the principal may see (a topic it may not describe is left out of the answer by the broker). */
  async topics (): Promise<string[]> {
    try {
      return (await this.#client().fetchTopicMetadata({ topics: [] })).topics.map(t => t.name)
    } catch (error) {
      throw this.#failure(error, `listing topics on the ${this.#connection.alias} cluster failed`)
    }
  }

  /** The API versions the broker that answers requests serves, by API key. */
  async apiVersions (): Promise<RequestBroker['apiVersions']> {
    return (await this.#requestBroker()).apiVersions
  }

  /** The principal's operations on the cluster and on each of `topics` (existing or not). */
  async authorizedOperations (topics: readonly string[]): Promise<AuthorizedOperations> {
    try {
      const broker = await this.#requestBroker()
      return await broker.send(METADATA, METADATA_VERSIONS, authorizedOperationsRequest(topics)) as AuthorizedOperations
    } catch (error) {
      throw this.#failure(error, `reading the authorized operations (Metadata v8, KIP-430) on the ${this.#connection.alias} cluster failed`)
    }
  }

  /**
   * The principal's operations on a consumer group, asked of its coordinator; asked again while the
   * coordinator moves or loads (a fresh cluster answers NOT_COORDINATOR until `__consumer_offsets` is ready).
   */
  async groupOperations (groupId: string): Promise<GroupOperations> {
    try {
      const found = await this.#findCoordinator(groupId, COORDINATOR_KEY.group)
      if (found === GROUP_AUTHORIZATION_FAILED) return { errorCode: GROUP_AUTHORIZATION_FAILED, operations: new Set() }
      return await retry(async () => {
        const broker = await coordinatorRequestBroker(this.#internalCluster(), groupId)
        const answer = await broker.send(DESCRIBE_GROUPS, DESCRIBE_GROUPS_VERSIONS, groupOperationsRequest(groupId)) as GroupOperations
        if (COORDINATOR_NOT_READY.has(answer.errorCode)) {
          throw new MirrorError(ErrorCodes.KAFKA, `coordinator of ${groupId} not ready (Kafka error ${answer.errorCode})`, { retriable: true })
        }
        return answer
      }, { maxAttempts: 8, initialBackoffMs: 250, maxBackoffMs: 2_000 })
    } catch (error) {
      if (authorizationFailure(error)) return { errorCode: GROUP_AUTHORIZATION_FAILED, operations: new Set() }
      const what = `reading the authorized operations of group ${groupId} (DescribeGroups v3, KIP-430)`
      throw this.#failure(error, `${what} on the ${this.#connection.alias} cluster failed`)
    }
  }

  /** Whether the principal may create `topic`: CreateTopics with `validate_only`, which creates nothing. */
  async mayCreateTopic (topic: string): Promise<boolean> {
    try {
      await this.#client().createTopics({ validateOnly: true, topics: [{ topic }] })
      return true
    } catch (error) {
      if (authorizationFailure(error)) return false
      // TOPIC_ALREADY_EXISTS and any other refusal past the authorizer: the right is there.
      if (kafkaErrorType(error) !== undefined) return true
      throw this.#failure(error, `checking topic creation (validate only) on the ${this.#connection.alias} cluster failed`)
    }
  }

  /**
   * Whether the principal may describe transactional id `id`: FindCoordinator of the id, which
   * the broker refuses with TRANSACTIONAL_ID_AUTHORIZATION_FAILED without that right. Write (which
   * implies Describe) has no request that checks it without side effects: InitProducerId would
   * fence the producer of a running mirror.
   */
  async mayDescribeTransactionalId (id: string): Promise<boolean> {
    try {
      return await this.#findCoordinator(id, COORDINATOR_KEY.transaction) !== TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    } catch (error) {
      throw this.#failure(error, `finding the transaction coordinator of ${id} on the ${this.#connection.alias} cluster failed`)
    }
  }

  /**
   * The configs `keys` of each of `topics` the principal may describe (DescribeConfigs per topic:
   * a topic it may not describe is left out instead of failing the others).
   */
  async topicSettings (topics: readonly string[], keys: readonly string[]): Promise<TopicSettings> {
    const result = new Map<string, Record<string, string>>()
    for (const topic of topics) {
      try {
        const described = await this.#client().describeConfigs({
          includeSynonyms: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [...keys] }],
        })
        for (const resource of described.resources) {
          const configs: Record<string, string> = {}
          for (const entry of resource.configEntries) {
            if (entry.configValue !== null && entry.configValue !== undefined) configs[entry.configName] = entry.configValue
          }
          result.set(resource.resourceName, configs)
        }
      } catch (error) {
        // A topic without DescribeConfigs or deleted meanwhile: its settings are not compared, the rights table names the missing right.
        if (!authorizationFailure(error) && kafkaErrorType(error) !== 'UNKNOWN_TOPIC_OR_PARTITION') {
          throw this.#failure(error, `reading the configs of ${topic} on the ${this.#connection.alias} cluster failed`)
        }
      }
    }
    return result
  }

  #client (): Admin {
    if (this.#admin === undefined) throw new Error('RightsProbe used before start()')
    return this.#admin
  }

  #internalCluster (): InternalCluster {
    if (this.#cluster === undefined) throw new Error('RightsProbe used before start()')
    return this.#cluster
  }

  /** FindCoordinator's error code for `key` (0 when found). */
  async #findCoordinator (key: string, keyType: number): Promise<number> {
    return await (await this.#requestBroker()).send(FIND_COORDINATOR, FIND_COORDINATOR_VERSIONS, findCoordinatorRequest(key, keyType)) as number
  }

  async #requestBroker (): Promise<RequestBroker> {
    return await controllerRequestBroker(this.#internalCluster())
  }

  #failure (error: unknown, message: string): Error {
    return toMirrorError(error, message, ErrorCodes.KAFKA, this.#connection)
  }
}

/** kafkajs' error type (`TOPIC_AUTHORIZATION_FAILED`, ...) of `error` or of the first error it aggregates. */
function kafkaErrorType (error: unknown): string | undefined {
  const e = error as { type?: string, errors?: unknown[], cause?: unknown } | null
  if (typeof e?.type === 'string') return e.type
  if (Array.isArray(e?.errors) && e.errors.length > 0) return kafkaErrorType(e.errors[0])
  return e?.cause === undefined ? undefined : kafkaErrorType(e.cause)
}

function authorizationFailure (error: unknown): boolean {
  return /_AUTHORIZATION_FAILED$/.test(kafkaErrorType(error) ?? '')
}
