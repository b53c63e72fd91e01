import kafkajs, { type Admin } from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { ErrorCodes } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { createKafkaClient } from './client.js'
import { toMirrorError } from './errors.js'

const { ConfigResourceTypes } = kafkajs

/**
 * Reads `retention.ms` of the topics of one cluster, as the broker applies it (set on the topic,
 * or the broker's default): `start()` connects an admin client, `stop()` disconnects it.
 */
export class TopicRetentionReader {
  readonly #connection: ClusterConnection
  readonly #logger: Logger
  #admin: Admin | undefined

  constructor (connection: ClusterConnection, logger: Logger) {
    this.#connection = connection
    this.#logger = logger
  }

  async start (): Promise<void> {
    const admin = createKafkaClient(this.#connection, this.#logger).admin({ retry: { retries: 3, initialRetryTime: 300 } })
    await admin.connect()
    this.#admin = admin
  }

  async stop (): Promise<void> {
    const admin = this.#admin
    this.#admin = undefined
    await admin?.disconnect()
  }

  /** `retention.ms` of every topic `wanted` accepts, one DescribeConfigs request for all; -1 for a topic that keeps its records forever. */
  async retentionMs (wanted: (topic: string) => boolean): Promise<Map<string, number>> {
    const admin = this.#admin
    if (admin === undefined) throw new Error('TopicRetentionReader used before start()')
    try {
      const topics = (await admin.fetchTopicMetadata({ topics: [] })).topics.map(t => t.name).filter(wanted)
      const result = new Map<string, number>()
      if (topics.length === 0) return result
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: topics.map(name => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['retention.ms'] })),
      })
      for (const resource of described.resources) {
        const value = resource.configEntries.find(entry => entry.configName === 'retention.ms')?.configValue
        if (resource.errorCode === 0 && value !== undefined && value !== null && value !== '') result.set(resource.resourceName, Number(value))
      }
      return result
    } catch (error) {
      throw toMirrorError(error, `reading retention.ms of the topics on the ${this.#connection.alias} cluster failed`, ErrorCodes.KAFKA, this.#connection)
    }
  }
}
