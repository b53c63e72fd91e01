import kafkajs from 'kafkajs'
import type { Admin } from 'kafkajs'
import type { NewTopic, TopicCatalog, TopicDescription } from '../pipeline/ports.js'
import { ErrorCodes } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { toMirrorError } from './errors.js'

const { ConfigResourceTypes } = kafkajs

/** Admin requests on one cluster, behind start()/stop(). */
export class TopicAdmin implements TopicCatalog {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  #admin: Admin | undefined

  constructor (connection: ClusterConnection, logger: Logger) {
    this.#connection = connection
    this.#logger = logger
  }

  get alias (): string { return this.#connection.alias }

  async start (): Promise<void> {
    const admin = createKafkaClient(this.#connection, this.#logger).admin({ retry: { retries: 3, initialRetryTime: 300 } })
    try {
      await admin.connect()
    } catch (error) {
      throw toMirrorError(error, `cannot connect to the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`, ErrorCodes.KAFKA, this.#connection)
    }
    this.#admin = admin
  }

  #client (): Admin {
    if (this.#admin === undefined) throw new Error('TopicAdmin used before start()')
    return this.#admin
  }

  /** Every topic with its partition count. */
  async describeTopics (names?: readonly string[]): Promise<TopicDescription[]> {
    try {
      const admin = this.#client()
      const topics = names === undefined ? await admin.listTopics() : [...names]
      if (topics.length === 0) return []
      const metadata = await admin.fetchTopicMetadata({ topics })
      return metadata.topics.map(t => ({ name: t.name, partitions: t.partitions.length }))
    } catch (error) {
      throw toMirrorError(error, `listing topics on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  async listTopicNames (): Promise<string[]> {
    try {
      return await this.#client().listTopics()
    } catch (error) {
      throw toMirrorError(error, `listing topics on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  /** The explicitly set (non-default) values of `keys` for each topic. */
  async topicConfigs (topics: readonly string[], keys: readonly string[]): Promise<Map<string, Record<string, string>>> {
    const result = new Map<string, Record<string, string>>()
    if (topics.length === 0) return result
    try {
      const described = await this.#client().describeConfigs({
        includeSynonyms: false,
        resources: topics.map(name => ({ type: ConfigResourceTypes.TOPIC, name, configNames: [...keys] })),
      })
      for (const resource of described.resources) {
        const configs: Record<string, string> = {}
        for (const entry of resource.configEntries) {
          if (!entry.isDefault && entry.configValue !== null && entry.configValue !== undefined) configs[entry.configName] = entry.configValue
        }
        result.set(resource.resourceName, configs)
      }
      return result
    } catch (error) {
      throw toMirrorError(error, `reading topic configs on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  async createTopics (topics: readonly NewTopic[]): Promise<void> {
    if (topics.length === 0) return
    try {
      await this.#client().createTopics({
        waitForLeaders: true,
        topics: topics.map(t => ({
          topic: t.name,
          numPartitions: t.partitions,
          replicationFactor: t.replicationFactor,
          configEntries: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
        })),
      })
    } catch (error) {
      // Another mirror instance may have created it first.
      const converted = toMirrorError(error, `creating topics ${topics.map(t => t.name).join(', ')} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
      if (converted.kafkaCode === 'TOPIC_ALREADY_EXISTS') return
      throw converted
    }
  }

  async createPartitions (topic: string, count: number): Promise<void> {
    try {
      await this.#client().createPartitions({ topicPartitions: [{ topic, count }] })
    } catch (error) {
      throw toMirrorError(error, `adding partitions to ${topic} on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }

  async stop (): Promise<void> {
    const admin = this.#admin
    this.#admin = undefined
    await admin?.disconnect()
  }
}
