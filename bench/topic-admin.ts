import { setTimeout as sleep } from 'node:timers/promises'
import type { ClusterConnection } from '../src/config/cluster-connection.js'
import type { LocalCluster } from '../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../src/kafka/client.js'

type Admin = ReturnType<ReturnType<typeof createKafkaClient>['admin']>

/** What the admin needs of a local cluster, single-node (`LocalCluster`) or several nodes (`NodeCluster`). */
export interface AdminCluster {
  readonly options: { readonly name: string }
  readonly bootstrap: string
  connection (clientId?: string): ClusterConnection
}

/**
 * One connected admin client of a local cluster: topic create/delete and end offsets. Topics it
 * creates have `replicationFactor` replicas (default 1, the single-node clusters).
 */
export class TopicAdmin<C extends AdminCluster = LocalCluster> {
  readonly #admin: Admin
  #connected = false

  constructor (readonly cluster: C, readonly replicationFactor = 1) {
    this.#admin = createKafkaClient(cluster.connection(`bench-admin-${cluster.options.name}`)).admin()
  }

  async start (): Promise<void> {
    await this.#admin.connect()
    this.#connected = true
  }

  async stop (): Promise<void> {
    if (!this.#connected) return
    this.#connected = false
    await this.#admin.disconnect()
  }

  /** The connected kafkajs admin, for requests this class does not wrap (offsets of many topics, group offsets). */
  get admin (): Admin { return this.#admin }

  /**
   * Creates new, empty `topics` of `partitions` partitions each, in one request, with topic `configs`. Does not wait for
   * leaders: kafkajs' `waitForLeaders` gives up on the UNKNOWN_TOPIC_OR_PARTITION a KRaft broker
   * answers for a moment after creating many topics; the caller waits for their offsets instead.
   */
  async createTopics (topics: readonly string[], partitions: number, configs: Readonly<Record<string, string>> = {}): Promise<void> {
    const configEntries = Object.entries(configs).map(([name, value]) => ({ name, value }))
    await this.#admin.createTopics({
      waitForLeaders: false,
      topics: topics.map(topic => ({ topic, numPartitions: partitions, replicationFactor: this.replicationFactor, configEntries })),
    })
  }

  async listTopics (): Promise<string[]> {
    return await this.#admin.listTopics()
  }

  /** Deletes `topics` that exist and waits until the broker no longer lists them. */
  async deleteTopics (topics: readonly string[]): Promise<void> {
    const existing = new Set(await this.#admin.listTopics())
    const present = topics.filter(topic => existing.has(topic))
    if (present.length === 0) return
    await this.#admin.deleteTopics({ topics: present, timeout: 30_000 })
    const deadline = Date.now() + 60_000
    while (present.some(topic => existing.has(topic))) {
      if (Date.now() > deadline) throw new Error(`topics ${present.join(', ')} still listed 60 s after deletion`)
      await sleep(200)
      const listed = new Set(await this.#admin.listTopics())
      for (const topic of [...existing]) if (!listed.has(topic)) existing.delete(topic)
    }
  }

  /**
   * Creates an empty topic, first deleting any topic of that name (and retrying while deletion
   * completes); `configs` are topic settings such as `{ 'cleanup.policy': 'compact' }`.
   */
  async recreateTopic (topic: string, partitions: number, configs: Readonly<Record<string, string>> = {}): Promise<void> {
    const configEntries = Object.entries(configs).map(([name, value]) => ({ name, value }))
    await this.deleteTopics([topic])
    const deadline = Date.now() + 60_000
    for (;;) {
      try {
        await this.#admin.createTopics({
          waitForLeaders: true,
          topics: [{ topic, numPartitions: partitions, replicationFactor: this.replicationFactor, configEntries }],
        })
        if ((await this.endOffsetTotal(topic)) === 0) return
      } catch (error) {
        if (Date.now() > deadline) throw error
      }
      await sleep(250)
    }
  }

  /** Records between log start offset and high watermark, per partition number (offset gaps of a compacted log included). */
  async partitionOffsetSpans (topic: string): Promise<Map<number, number>> {
    const offsets = await this.#admin.fetchTopicOffsets(topic)
    return new Map(offsets.map(partition => [partition.partition, Number(partition.high) - Number(partition.low)]))
  }

  /** Sum over partitions of the high watermark (records on the topic when it starts at offset 0). */
  async endOffsetTotal (topic: string): Promise<number> {
    const offsets = await this.#admin.fetchTopicOffsets(topic)
    return offsets.reduce((sum, partition) => sum + Number(partition.high) - Number(partition.low), 0)
  }
}
