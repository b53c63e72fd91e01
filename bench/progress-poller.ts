import { setTimeout as sleep } from 'node:timers/promises'
import { createKafkaClient } from '../src/kafka/client.js'
import { createInternalCluster, type InternalCluster } from '../src/kafka/kafkajs-internals.js'
import type { PartitionPoll } from './partition-stalls.js'
import type { AdminCluster } from './topic-admin.js'

/**
 * One kept connection to a cluster that reads the end offsets of one topic's partitions:
 * ListOffsets (latest) per leader, with the isolation level given (read_committed: the last
 * stable offset, what a read_committed reader can see; on a topic without transactions the high
 * watermark).
 */
export class EndOffsetReader {
  readonly #cluster: InternalCluster
  #connected = false

  constructor (cluster: AdminCluster, readonly topic: string, readonly partitions: number, readonly readCommitted: boolean) {
    this.#cluster = createInternalCluster(createKafkaClient(cluster.connection('bench-progress')), { metadataMaxAge: 5_000 })
  }

  async start (): Promise<void> {
    await this.#cluster.connect()
    this.#connected = true
    await this.#cluster.addMultipleTargetTopics([this.topic])
  }

  async stop (): Promise<void> {
    if (!this.#connected) return
    this.#connected = false
    await this.#cluster.disconnect()
  }

  /** Every partition's end offset, by partition number; undefined when a partition has no leader or answered an error. */
  async ends (): Promise<number[] | undefined> {
    try {
      await this.#cluster.refreshMetadataIfNecessary()
      const leaders = this.#cluster.findLeaderForPartitions(this.topic, Array.from({ length: this.partitions }, (_, p) => p))
      const ends = new Array<number>(this.partitions).fill(-1)
      for (const [leader, partitions] of Object.entries(leaders)) {
        const broker = await this.#cluster.findBroker({ nodeId: leader })
        const { responses } = await broker.listOffsets({
          replicaId: -1,
          isolationLevel: this.readCommitted ? 1 : 0,
          topics: [{ topic: this.topic, partitions: partitions.map(partition => ({ partition, timestamp: '-1' })) }],
        })
        for (const { partitions: answered } of responses) {
          for (const { partition, offset, errorCode } of answered) if (errorCode === 0) ends[partition] = Number(offset)
        }
      }
      return ends.every(end => end >= 0) ? ends : undefined
    } catch {
      // A leader moving or a connection dropped: this poll is skipped (the gap shows as the poll gap); the next one asks for metadata again.
      await this.#cluster.refreshMetadata().catch(() => undefined)
      return undefined
    }
  }
}

/**
 * Polls the source's high watermarks and the target's end offsets (read_committed) of one topic
 * every `intervalMs` until stopped, keeping every poll where both answered.
 */
export class ProgressPoller {
  readonly polls: PartitionPoll[] = []
  readonly #source: EndOffsetReader
  readonly #target: EndOffsetReader
  #running: Promise<void> | undefined
  #stopping = false

  constructor (source: AdminCluster, target: AdminCluster, topic: string, partitions: number, readonly intervalMs: number) {
    this.#source = new EndOffsetReader(source, topic, partitions, false)
    this.#target = new EndOffsetReader(target, topic, partitions, true)
  }

  async start (): Promise<void> {
    await this.#source.start()
    await this.#target.start()
    this.#running = this.#loop()
  }

  async stop (): Promise<void> {
    this.#stopping = true
    await this.#running
    await this.#source.stop()
    await this.#target.stop()
  }

  async #loop (): Promise<void> {
    while (!this.#stopping) {
      const startedMs = performance.now()
      const source = await this.#source.ends()
      const target = await this.#target.ends()
      if (source !== undefined && target !== undefined) this.polls.push({ atMs: performance.now(), source, target })
      await sleep(Math.max(0, this.intervalMs - (performance.now() - startedMs)))
    }
  }
}
