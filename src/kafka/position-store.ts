import { setTimeout as sleep } from 'node:timers/promises'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import type { ExactlyOnceConfig } from '../config/mirror-config.js'
import { partitionKey } from '../shared/partition-key.js'
import type { PositionStore } from '../ports/ports.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { AuditClient } from './audit-client.js'
import { InternalTopicWriter } from './internal-topic.js'
import { decodePosition } from './position-record.js'

const { ConfigResourceTypes } = kafkajs

/**
 * The positions of an exactly-once flow on the target: partition 0 of a compacted topic
 * (`mirror-positions.<source alias>.internal`), written by the producer lanes inside their
 * transactions. `read` reads it as committed (read_committed) up to the end it had when the read
 * began, waiting while an open transaction holds the last stable offset below that end.
 */
export class KafkaPositionStore implements PositionStore {
  readonly #connection: ClusterConnection
  readonly #config: ExactlyOnceConfig
  readonly #groupId: string
  readonly #logger: Logger
  #client: AuditClient | undefined
  /** Newest position of each partition of this group read so far, and the offset reading goes on from. */
  readonly #known = new Map<string, bigint>()
  #readUpTo = 0
  #reading: Promise<unknown> = Promise.resolve()

  constructor (connection: ClusterConnection, config: ExactlyOnceConfig, groupId: string, logger: Logger) {
    this.#connection = connection
    this.#config = config
    this.#groupId = groupId
    this.#logger = logger
  }

  async start (): Promise<void> {
    const client = new AuditClient(this.#connection, { logger: this.#logger, retries: 3, requestTimeoutMs: 30_000 })
    await client.connect()
    this.#client = client
    await this.#checkTransactions(client)
    const writer = new InternalTopicWriter(this.#connection, this.#logger)
    try {
      await writer.start()
      // Read whole each time a lane is taken: a segment rolled every 10 minutes lets compaction keep it small
      // (with Kafka's 7-day default the active segment would hold a week of positions).
      await writer.ensureCompactedTopic(
        this.#config.positionsTopic,
        { replicationFactor: this.#config.positionsReplicationFactor, key: 'offset-syncs.topic.replication.factor' },
        { 'segment.ms': '600000' }
      )
    } finally {
      await writer.stop()
    }
  }

  /** A target whose transaction state log cannot be created (more replicas than brokers) would make every transaction wait for ever: refused here. */
  async #checkTransactions (client: AuditClient): Promise<void> {
    const { brokers } = await client.call(() => client.admin.describeCluster())
    let replicationFactor: number | undefined
    try {
      const described = await client.admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: String(brokers[0]?.nodeId ?? 0), configNames: ['transaction.state.log.replication.factor'] }],
      })
      replicationFactor = Number(described.resources[0]?.configEntries.find(e => e.configName === 'transaction.state.log.replication.factor')?.configValue)
    } catch (error) {
      this.#logger.warn('cannot read the target\'s transaction.state.log.replication.factor; going on', { error: (error as Error).message })
      return
    }
    if (Number.isSafeInteger(replicationFactor) && replicationFactor > brokers.length) {
      throw new MirrorError(
        ErrorCodes.CONFIG,
        `${this.#config.key}: the ${this.#connection.alias} cluster cannot run transactions: its transaction.state.log.replication.factor is ${replicationFactor} but it has ${brokers.length} broker(s); set transaction.state.log.replication.factor to at most ${brokers.length} on its brokers, or turn exactly-once off`
      )
    }
  }

  /** The positions of `partitions` as last written (read from the positions topic). */
  async read (partitions: readonly string[]): Promise<Map<string, bigint>> {
    // One read at a time (lanes are taken in parallel): each goes on from where the one before ended, in log order.
    const run = this.#reading.then(() => this.#read(partitions))
    this.#reading = run.catch(() => { /* the chain only orders reads: this read's failure reaches its caller through `run` */ })
    return await run
  }

  /**
   * Reads on from where the last read ended (the topic only grows; compaction keeps the newest
   * record of each key, which this store has read already or reads now), so taking several lanes
   * reads the topic once, and each later acquisition only what was committed since.
   */
  async #read (partitions: readonly string[]): Promise<Map<string, bigint>> {
    const client = this.#client
    if (client === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'the position store is not started', { retriable: true })
    const topic = this.#config.positionsTopic
    const end = (await client.listOffsets(topic, [0], 'latest')).get(0) ?? 0
    const earliest = (await client.listOffsets(topic, [0], 'earliest')).get(0) ?? 0
    if (end < this.#readUpTo) {
      // The topic is shorter than what was read: recreated. Read it anew.
      this.#known.clear()
      this.#readUpTo = 0
    }
    let offset = Math.max(earliest, this.#readUpTo)
    const deadline = Date.now() + this.#config.transactionTimeoutMs + 10_000
    while (offset < end) {
      const fetched = await client.fetch(topic, 0, offset, { isolation: 'read_committed', maxWaitMs: 100 })
      for (const record of fetched.records) {
        const position = decodePosition(record.key, record.value)
        if (position === undefined || position.group !== this.#groupId) continue
        this.#known.set(partitionKey(position.topic, position.partition), position.offset)
      }
      if (fetched.nextOffset > offset) {
        offset = fetched.nextOffset
        continue
      }
      // Nothing returned: what is left below the end is transaction markers (decided), unless the
      // last stable offset is below it (a transaction begun before the read is still open).
      if ((fetched.lastStableOffset ?? 0) >= end) break
      if (Date.now() > deadline) {
        throw new MirrorError(
          ErrorCodes.KAFKA,
          `reading ${topic} on the ${this.#connection.alias} cluster: offset ${offset} stayed undecided (an open transaction) past the transaction timeout`,
          { retriable: true }
        )
      }
      await sleep(20)
    }
    // Everything below `end` is decided and read: the next read starts there.
    this.#readUpTo = Math.max(this.#readUpTo, end)
    const found = new Map<string, bigint>()
    for (const key of partitions) {
      const position = this.#known.get(key)
      if (position !== undefined) found.set(key, position)
    }
    return found
  }

  async stop (): Promise<void> {
    const client = this.#client
    this.#client = undefined
    await client?.close()
  }
}
