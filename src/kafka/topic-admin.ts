import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { Admin } from '@kafka-mirror-sidecar/kafkajs'
import type { NewTopic, TopicAcl, TopicCatalog, TopicDescription } from '../ports/ports.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { retry } from '../shared/retry.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import type { IncrementalAlterConfigsUse } from '../config/mirror-config.js'
import { toMirrorError } from './errors.js'
import { controllerRequestBroker, createInternalCluster, isUnsupportedRequest, type InternalCluster } from './kafkajs-internals.js'
import { INCREMENTAL_ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS_VERSIONS, incrementalAlterTopicConfigs, type ConfigChange } from './incremental-alter-configs.js'

const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ConfigResourceTypes, ResourcePatternTypes } = kafkajs

/** DescribeConfigs' config source of a value from the broker's server.properties (kafkajs' `configSource.js`, not exported). */
const STATIC_BROKER_CONFIG = 4
/** DescribeConfigs' config source of a value set on the topic itself. */
const DYNAMIC_TOPIC_CONFIG = 1

/** kafkajs' operation codes are a plain object at run time (no reverse mapping): the name of `code`. */
function operationName (code: number): string | undefined {
  return Object.entries(AclOperationTypes as unknown as Record<string, number>).find(([, value]) => value === code)?.[0]
}

/**
 * Partitions one CreateTopics request may hold: a KRaft controller refuses a request that makes
 * more than 10,000 records at once (POLICY_VIOLATION, "Excessively large number of partitions per
 * request"); half of that leaves room for the topics' config records.
 */
export const MAX_PARTITIONS_PER_CREATE_TOPICS = 5_000

/** Metadata rounds `createTopics` waits for new partitions' leaders (backoff 0.1 s doubling to 2 s: about a minute). */
const LEADER_WAIT_ATTEMPTS = 35

/** `topics` cut into requests of at most `maxPartitions` partitions each (a larger topic goes alone). */
export function createTopicsBatches<T extends { readonly partitions: number }> (topics: readonly T[], maxPartitions = MAX_PARTITIONS_PER_CREATE_TOPICS): T[][] {
  const batches: T[][] = []
  let current: T[] = []
  let partitions = 0
  for (const topic of topics) {
    if (current.length > 0 && partitions + topic.partitions > maxPartitions) {
      batches.push(current)
      current = []
      partitions = 0
    }
    current.push(topic)
    partitions += topic.partitions
  }
  if (current.length > 0) batches.push(current)
  return batches
}

/** Admin requests on one cluster, behind start()/stop(). */
export class TopicAdmin implements TopicCatalog {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  #admin: Admin | undefined
  /** kafkajs' cluster of the admin's client, connected at the first request kafkajs' admin has no method for. */
  #cluster: Promise<InternalCluster> | undefined
  #createCluster: (() => InternalCluster) | undefined
  /** Whether `setTopicConfigs` sends IncrementalAlterConfigs: not with `never`, nor once the cluster answered that it does not know it (before Kafka 2.3). */
  #incrementalAlterConfigs = true

  /** `use.incremental.alter.configs`: how `setTopicConfigs` writes (see `FlowConfig.incrementalAlterConfigs`). */
  readonly #incrementalUse: IncrementalAlterConfigsUse

  constructor (connection: ClusterConnection, logger: Logger, incrementalAlterConfigs: IncrementalAlterConfigsUse = 'requested') {
    this.#connection = connection
    this.#logger = logger
    this.#incrementalUse = incrementalAlterConfigs
    this.#incrementalAlterConfigs = incrementalAlterConfigs !== 'never'
  }

  get alias (): string { return this.#connection.alias }

  async start (): Promise<void> {
    const kafka = createKafkaClient(this.#connection, this.#logger)
    this.#createCluster = () => createInternalCluster(kafka)
    const admin = kafka.admin({ retry: { retries: 3, initialRetryTime: 300 } })
    try {
      await admin.connect()
    } catch (error) {
      throw toMirrorError(
        error,
        `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`,
        ErrorCodes.KAFKA,
        this.#connection
      )
    }
    this.#admin = admin
  }

  #client (): Admin {
    if (this.#admin === undefined) throw new Error('TopicAdmin used before start()')
    return this.#admin
  }

  /**
   * Every topic with its partition count, from one Metadata request for all topics (kafkajs'
   * `listTopics` is that same request; asking it and then for the named topics' metadata cost two
   * answers of every partition per cluster per refresh).
   */
  async describeTopics (): Promise<TopicDescription[]> {
    try {
      const metadata = await this.#client().fetchTopicMetadata({ topics: [] })
      return metadata.topics.map(t => ({ name: t.name, partitions: t.partitions.length }))
    } catch (error) {
      throw toMirrorError(error, `listing topics on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /**
   * The non-default configs of each topic, with `withDefaults` the default ones too, with
   * `setOnTopicOnly` only those set on the topic (`TopicCatalog.topicConfigs`): MirrorMaker 2's
   * `targetConfig` rule, which leaves out read-only, sensitive and static broker values.
   */
  async topicConfigs (topics: readonly string[], withDefaults = false, setOnTopicOnly = false): Promise<Map<string, Record<string, string>>> {
    const result = new Map<string, Record<string, string>>()
    if (topics.length === 0) return result
    try {
      const described = await this.#client().describeConfigs({
        includeSynonyms: false,
        resources: topics.map(name => ({ type: ConfigResourceTypes.TOPIC, name })),
      })
      for (const resource of described.resources) {
        const configs: Record<string, string> = {}
        for (const entry of resource.configEntries) {
          const source = (entry as { configSource?: number }).configSource
          if ((entry.isDefault && !withDefaults) || entry.readOnly || entry.isSensitive || source === STATIC_BROKER_CONFIG) continue
          if (setOnTopicOnly && source !== DYNAMIC_TOPIC_CONFIG) continue
          if (entry.configValue !== null && entry.configValue !== undefined) configs[entry.configName] = entry.configValue
        }
        result.set(resource.resourceName, configs)
      }
      return result
    } catch (error) {
      throw toMirrorError(error, `reading topic configs on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /** The ACLs on `topics` (literal names); undefined when the cluster has no authorizer (SECURITY_DISABLED). */
  async topicAcls (topics: readonly string[]): Promise<TopicAcl[] | undefined> {
    const wanted = new Set(topics)
    try {
      const described = await this.#client().describeAcls({
        resourceType: AclResourceTypes.TOPIC,
        resourcePatternType: ResourcePatternTypes.LITERAL,
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      })
      const acls: TopicAcl[] = []
      for (const resource of described.resources) {
        if (!wanted.has(resource.resourceName)) continue
        for (const acl of resource.acls) {
          const permission = acl.permissionType === AclPermissionTypes.DENY ? 'DENY' : acl.permissionType === AclPermissionTypes.ALLOW ? 'ALLOW' : undefined
          const operation = operationName(acl.operation)
          if (permission === undefined || operation === undefined) continue
          acls.push({ topic: resource.resourceName, principal: acl.principal, host: acl.host, operation, permission })
        }
      }
      return acls
    } catch (error) {
      if ((error as { type?: string }).type === 'SECURITY_DISABLED') return undefined
      throw toMirrorError(error, `reading topic ACLs on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  async createTopicAcls (acls: readonly TopicAcl[]): Promise<void> {
    if (acls.length === 0) return
    try {
      await this.#client().createAcls({
        acl: acls.map(acl => ({
          resourceType: AclResourceTypes.TOPIC,
          resourceName: acl.topic,
          resourcePatternType: ResourcePatternTypes.LITERAL,
          principal: acl.principal,
          host: acl.host,
          operation: (AclOperationTypes as unknown as Record<string, number>)[acl.operation] ?? AclOperationTypes.UNKNOWN,
          permissionType: acl.permission === 'DENY' ? AclPermissionTypes.DENY : AclPermissionTypes.ALLOW,
        })),
      })
    } catch (error) {
      throw toMirrorError(error, `creating topic ACLs on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /**
   * Sets `configs` on `topic` and takes `removedKeys` off it, every other config of the topic left
   * as it is: one IncrementalAlterConfigs request (`incremental-alter-configs.ts`), as MirrorMaker
   * 2 does by default. A cluster older than Kafka 2.3 does not know it; there the topic's dynamic
   * configs are read and written back whole with the change (AlterConfigs, the one request kafkajs
   * has), which loses a change another client makes between the two.
   */
  async setTopicConfigs (topic: string, configs: Readonly<Record<string, string>>, removedKeys: readonly string[] = []): Promise<void> {
    if (this.#incrementalAlterConfigs) {
      const changes: ConfigChange[] = [
        ...removedKeys.filter(key => !(key in configs)).map(name => ({ name, operation: 'delete' as const })),
        ...Object.entries(configs).map(([name, value]) => ({ name, operation: 'set' as const, value })),
      ]
      try {
        const broker = await controllerRequestBroker(await this.#requestCluster())
        await broker.send(INCREMENTAL_ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS_VERSIONS, incrementalAlterTopicConfigs(topic, changes))
        return
      } catch (error) {
        if (!isUnsupportedRequest(error)) {
          throw toMirrorError(error, `setting configs of topic ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
        }
        if (this.#incrementalUse === 'required') {
          throw new MirrorError(
            ErrorCodes.KAFKA,
            `the ${this.#connection.alias} cluster does not support IncrementalAlterConfigs (Kafka 2.3 and later) and use.incremental.alter.configs is ` +
              'required: set it to requested (or never) to write topic configs with AlterConfigs'
          )
        }
        this.#incrementalAlterConfigs = false
        this.#logger.info('the cluster does not support IncrementalAlterConfigs (Kafka 2.3 and later): topic configs are read and written back whole', {
          cluster: this.#connection.alias,
        })
      }
    }
    await this.#replaceTopicConfigs(topic, configs, removedKeys)
  }

  /** The topic's dynamic configs read, changed and written back whole (AlterConfigs). */
  async #replaceTopicConfigs (topic: string, configs: Readonly<Record<string, string>>, removedKeys: readonly string[]): Promise<void> {
    try {
      const described = await this.#client().describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] })
      const merged: Record<string, string> = {}
      for (const entry of described.resources[0]?.configEntries ?? []) {
        const source = (entry as { configSource?: number }).configSource
        if (source === DYNAMIC_TOPIC_CONFIG && entry.configValue !== null && entry.configValue !== undefined && !entry.isSensitive) {
          merged[entry.configName] = entry.configValue
        }
      }
      for (const key of removedKeys) delete merged[key]
      Object.assign(merged, configs)
      await this.#client().alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: Object.entries(merged).map(([name, value]) => ({ name, value })) }],
      })
    } catch (error) {
      throw toMirrorError(error, `setting configs of topic ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /**
   * Creates `topics`, in as many CreateTopics requests as the controller takes (see
   * `createTopicsBatches`); a topic another mirror instance created first is not an error.
   */
  async createTopics (topics: readonly NewTopic[]): Promise<void> {
    for (const batch of createTopicsBatches(topics)) {
      try {
        await this.#client().createTopics({
          // kafkajs' own wait gives up after a few metadata rounds: hundreds of new topics take longer.
          waitForLeaders: false,
          topics: batch.map(t => ({
            topic: t.name,
            numPartitions: t.partitions,
            replicationFactor: t.replicationFactor,
            configEntries: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
          })),
        })
      } catch (error) {
        const names = batch.length <= 5 ? batch.map(t => t.name).join(', ') : `${batch.slice(0, 5).map(t => t.name).join(', ')} and ${batch.length - 5} more`
        const converted = toMirrorError(error, `creating topics ${names} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
        if (converted.kafkaCode !== 'TOPIC_ALREADY_EXISTS') throw converted
      }
      await this.#waitForLeaders(batch.map(t => t.name))
    }
  }

  /**
   * Waits until every partition of `topics` has a leader, so the first produce request finds one
   * (a just-created partition answers NOT_LEADER_OR_FOLLOWER for a moment). Gives up after about
   * `LEADER_WAIT_ATTEMPTS` metadata rounds with a retriable error: the caller's next refresh tries again.
   */
  async #waitForLeaders (topics: readonly string[]): Promise<void> {
    await retry(async () => {
      let metadata
      try {
        metadata = await this.#client().fetchTopicMetadata({ topics: [...topics] })
      } catch (error) {
        throw toMirrorError(
          error,
          `waiting for the leaders of ${topics.length} new topics on the ${this.#connection.alias} cluster`,
          ErrorCodes.KAFKA,
          this.#connection
        )
      }
      const leaderless = metadata.topics.filter(t => t.partitions.length === 0 || t.partitions.some(p => p.leader < 0)).length
      if (leaderless > 0) {
        throw new MirrorError(
          ErrorCodes.KAFKA,
          `${leaderless} of ${topics.length} new topics on the ${this.#connection.alias} cluster have partitions without a leader yet`,
          { retriable: true, kafkaCode: 'LEADER_NOT_AVAILABLE' }
        )
      }
    }, { maxAttempts: LEADER_WAIT_ATTEMPTS, initialBackoffMs: 100, maxBackoffMs: 2_000, shouldRetry: () => true })
  }

  async createPartitions (topic: string, count: number): Promise<void> {
    try {
      await this.#client().createPartitions({ topicPartitions: [{ topic, count }] })
    } catch (error) {
      throw toMirrorError(error, `adding partitions to ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  #requestCluster (): Promise<InternalCluster> {
    if (this.#cluster !== undefined) return this.#cluster
    const createCluster = this.#createCluster
    if (createCluster === undefined) throw new Error('TopicAdmin used before start()')
    const connecting = (async () => {
      const cluster = createCluster()
      await cluster.connect()
      return cluster
    })()
    // A failed connect is the request's error; the next request connects again.
    connecting.catch(() => { if (this.#cluster === connecting) this.#cluster = undefined })
    this.#cluster = connecting
    return connecting
  }

  async stop (): Promise<void> {
    const admin = this.#admin
    const cluster = this.#cluster
    this.#admin = undefined
    this.#cluster = undefined
    await admin?.disconnect()
    // A cluster that never connected has nothing to close; its error went to the request that started it.
    const connected = await cluster?.catch(() => undefined)
    await connected?.disconnect()
  }
}
