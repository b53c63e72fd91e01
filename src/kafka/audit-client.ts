import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { Admin, Kafka as KafkaClient } from '@kafka-mirror-sidecar/kafkajs'
import type { ClusterConnection } from '../config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { silentLogger } from '../shared/logger.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import { createKafkaClient } from './client.js'
import { toClusterError } from './errors.js'
import {
  createInternalCluster,
  filterAbortedMessages,
  forwardedBatchOf,
  type BatchForwardingHook,
  type InternalBroker,
  type InternalCluster,
} from './kafkajs-internals.js'
import { rawBatchHook, RawRecordBatch } from './raw-record-batch.js'

const { AssignerProtocol } = kafkajs

/** Options of a short-lived client for command-line checks: fail fast instead of retrying for minutes. */
export interface AuditClientOptions {
  /** TCP connect timeout unless the connection sets one; default 3000. */
  readonly connectionTimeoutMs?: number
  /** Per-request timeout unless the connection sets one; default 15000. */
  readonly requestTimeoutMs?: number
  /** kafkajs retries for connection-level work; default 1. */
  readonly retries?: number
  readonly logger?: Logger
}

/** Isolation of reads: committed data only (as a read_committed consumer), or everything up to the high watermark. */
export type Isolation = 'read_committed' | 'read_uncommitted'
const ISOLATION = { read_uncommitted: 0, read_committed: 1 } as const

/** An offset query: earliest, latest (log end offset / high watermark), or the first offset at or after a timestamp. */
export type OffsetSpec = 'earliest' | 'latest' | { readonly timestampMs: number }

/** One Fetch answer for a partition: data records only (control records and aborted transactions removed). */
export interface FetchedRecords {
  readonly records: KafkaRecord[]
  /** Offset to fetch next: past every batch returned, control batches and compacted gaps included. */
  readonly nextOffset: number
  readonly highWatermark: number
  readonly logStartOffset: number
  /** The last stable offset: below it every transaction is decided (read_committed reads stop there). */
  readonly lastStableOffset?: number
}

/** What one Fetch asks for. */
export interface FetchOptions {
  /** Bytes asked (the broker returns at least one batch); default 4 MiB. */
  readonly maxBytes?: number
  /** Default `read_committed`. */
  readonly isolation?: Isolation
  /** How long the broker may wait for data; default 100. */
  readonly maxWaitMs?: number
}

/** One Fetch answer for a partition with its data batches undecoded (`AuditClient.fetchBatches`). */
export interface FetchedBatches extends Omit<FetchedRecords, 'records'> {
  /** In offset order: v2 batches as `RawRecordBatch`es (the first may start before the fetch offset), records of older formats decoded. */
  readonly batches: ReadonlyArray<RawRecordBatch | KafkaRecord>
}

/** A consumer group as its coordinator describes it; state `Dead` (and no members) when it does not exist. */
export interface AuditGroupDescription {
  /** `Stable`, `Empty`, `PreparingRebalance`, `CompletingRebalance`, or `Dead`. */
  readonly state: string
  /** The assignment strategy (`range`, `cooperative-sticky`...); empty when none. */
  readonly protocol: string
  readonly members: ReadonlyArray<{
    readonly memberId: string
    readonly clientHost: string
    readonly clientId: string
    /** The member's partitions, decoded from its consumer-protocol assignment. */
    readonly assignment: ReadonlyArray<{ readonly topic: string, readonly partition: number }>
  }>
}

function decodeAssignment (buffer: Buffer | undefined): Array<{ topic: string, partition: number }> {
  if (buffer === undefined || buffer.length === 0) return []
  const decoded = AssignerProtocol.MemberAssignment.decode(buffer)
  if (decoded === null) return []
  return Object.entries(decoded.assignment).flatMap(([topic, partitions]) => partitions.map(partition => ({ topic, partition })))
}

/**
 * A short-lived client for audits: an admin plus direct Fetch and ListOffsets (kafkajs has no
 * consumer without a group, and a throwaway group would show up in the audited cluster's group
 * list). Every kafkajs error leaving it is a `MirrorError`. `close()` is safe to call twice.
 */
export class AuditClient {
  readonly kafka: KafkaClient
  readonly admin: Admin
  readonly #cluster: InternalCluster
  #connected = false
  #closed = false
  readonly #knownTopics = new Map<string, Promise<void>>()

  constructor (
    readonly connection: ClusterConnection,
    options: AuditClientOptions = {}
  ) {
    const logger = options.logger ?? silentLogger
    this.kafka = createKafkaClient(
      {
        ...connection,
        connectionTimeoutMs: connection.connectionTimeoutMs ?? options.connectionTimeoutMs ?? 3_000,
        requestTimeoutMs: connection.requestTimeoutMs ?? options.requestTimeoutMs ?? 15_000,
      },
      logger,
      { retries: options.retries ?? 1, maxRetryTimeMs: 1_000 }
    )
    this.admin = this.kafka.admin()
    this.#cluster = createInternalCluster(this.kafka, { metadataMaxAge: 300_000 })
  }

  /** Runs a Kafka call, converting its errors. */
  async call<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation()
    } catch (error) {
      throw toClusterError(error, this.connection)
    }
  }

  async connect (): Promise<void> {
    if (this.#connected) return
    await this.call(async () => {
      await this.admin.connect()
      await this.#cluster.connect()
    })
    this.#connected = true
  }

  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await Promise.allSettled([this.admin.disconnect(), this.#cluster.disconnect()])
  }

  /** The broker coordinating `groupId`. */
  async groupCoordinator (groupId: string): Promise<{ nodeId: number, host: string, port: number }> {
    return await this.call(() =>
      this.#serial(async () => {
        // The coordinator lookup picks any known broker: the pool is empty until metadata was read once.
        await this.#cluster.refreshMetadata()
        return (await this.#cluster.findGroupCoordinatorMetadata({ groupId })).coordinator
      })
    )
  }

  /** `groupId` as its coordinator describes it, with each member's assignment decoded. */
  async describeGroup (groupId: string): Promise<AuditGroupDescription> {
    const described = await this.call(() => this.admin.describeGroups([groupId]))
    const description = described.groups.find(g => g.groupId === groupId)
    return {
      state: description?.state ?? 'Dead',
      protocol: description?.protocol ?? '',
      members: (description?.members ?? []).map(m => ({
        memberId: m.memberId,
        clientHost: m.clientHost,
        clientId: m.clientId,
        assignment: decodeAssignment(m.memberAssignment),
      })),
    }
  }

  /** The cluster's id as Metadata names it (KIP-78): what a completeness certificate names the cluster by. */
  async clusterId (): Promise<string> {
    return (await this.call(() => this.admin.describeCluster())).clusterId
  }

  /** Whether `topic` exists on the cluster. */
  async hasTopic (topic: string): Promise<boolean> {
    return (await this.call(() => this.admin.listTopics())).includes(topic)
  }

  /** Partition numbers of `topic`, sorted; a `MirrorError` naming `flag` when the topic does not exist. */
  async partitionsOf (topic: string, flag = '--topic'): Promise<number[]> {
    const topics = await this.call(() => this.admin.listTopics())
    if (!topics.includes(topic)) {
      throw new MirrorError(
        ErrorCodes.CONFIG,
        `${flag} "${topic}": no such topic on the ${this.connection.alias} cluster (${this.connection.brokers.join(',')}); check the name`
      )
    }
    const metadata = await this.call(() => this.admin.fetchTopicMetadata({ topics: [topic] }))
    return (metadata.topics[0]?.partitions ?? []).map(p => p.partitionId).sort((a, b) => a - b)
  }

  /** Adds `topic` to the metadata once: concurrent refreshes would replace connected brokers in kafkajs' pool and leak their sockets. */
  async #ensureTopic (topic: string): Promise<void> {
    let known = this.#knownTopics.get(topic)
    if (known === undefined) {
      const previous = [...this.#knownTopics.values()]
      known = Promise.allSettled(previous).then(() => this.call(() => this.#cluster.addMultipleTargetTopics([topic])))
      known.catch(() => this.#knownTopics.delete(topic))
      this.#knownTopics.set(topic, known)
    }
    await known
  }

  #queue: Promise<unknown> = Promise.resolve()

  /** Runs broker requests one at a time: concurrent requests through kafkajs' internal cluster leave sockets open after disconnect. */
  #serial<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(operation, operation)
    this.#queue = run.catch(() => undefined)
    return run
  }

  async #leaders (topic: string, partitions: readonly number[]): Promise<Array<[InternalBroker, number[]]>> {
    await this.#ensureTopic(topic)
    const byLeader = this.#cluster.findLeaderForPartitions(topic, [...partitions])
    return await Promise.all(
      Object.entries(byLeader).map(async ([nodeId, list]) => [await this.#cluster.findBroker({ nodeId }), list] as [InternalBroker, number[]])
    )
  }

  /**
   * Offsets of `partitions` per `spec`. `latest` with `read_uncommitted` is the high watermark,
   * as `kafka-consumer-groups` shows it as LOG-END-OFFSET; with `read_committed` it is the last
   * stable offset. A timestamp with no record at or after it gives the log end offset.
   */
  async listOffsets (topic: string, partitions: readonly number[], spec: OffsetSpec, isolation: Isolation = 'read_uncommitted'): Promise<Map<number, number>> {
    const timestamp = spec === 'earliest' ? -2 : spec === 'latest' ? -1 : spec.timestampMs
    return await this.call(() =>
      this.#serial(async () => {
        const result = new Map<number, number>()
        for (const [broker, list] of await this.#leaders(topic, partitions)) {
          const { responses } = await broker.listOffsets({
            isolationLevel: ISOLATION[isolation],
            topics: [{ topic, partitions: list.map(partition => ({ partition, timestamp: String(timestamp) })) }],
          })
          for (const response of responses) for (const p of response.partitions) result.set(p.partition, Number(p.offset))
        }
        if (typeof spec === 'object') {
          const missing = [...result].filter(([, offset]) => offset < 0).map(([p]) => p)
          if (missing.length > 0) {
            for (const [broker, list] of await this.#leaders(topic, missing)) {
              const { responses } = await broker.listOffsets({
                isolationLevel: ISOLATION[isolation],
                topics: [{ topic, partitions: list.map(partition => ({ partition, timestamp: '-1' })) }],
              })
              for (const response of responses) for (const p of response.partitions) result.set(p.partition, Number(p.offset))
            }
          }
        }
        return result
      })
    )
  }

  /**
   * One Fetch of `partition` from `offset` (at most about `maxBytes`; at least one batch).
   * Skips control records and, with `read_committed`, records of aborted transactions.
   */
  async fetch (topic: string, partition: number, offset: number, options: FetchOptions = {}): Promise<FetchedRecords> {
    const fetched = await this.#fetchOnce(topic, partition, offset, options, undefined)
    // kafkajs' messages as they are (the patched decoder adds `headerList`): they are KafkaRecords.
    return { ...fetched, records: fetched.items as KafkaRecord[] }
  }

  /**
   * `fetch` with the data batches left undecoded: each v2 batch is a `RawRecordBatch` (a view of
   * the response; read its records with `visit` from `offset` on), older formats are decoded
   * records. Control batches and, with `read_committed`, aborted transactions are skipped as by
   * `fetch`. What the audit reads: no record objects for kafkajs to build and collect.
   */
  async fetchBatches (topic: string, partition: number, offset: number, options: FetchOptions = {}): Promise<FetchedBatches> {
    const fetched = await this.#fetchOnce(topic, partition, offset, options, rawBatchHook)
    return { ...fetched, batches: fetched.items as Array<RawRecordBatch | KafkaRecord> }
  }

  async #fetchOnce (
    topic: string,
    partition: number,
    offset: number,
    { maxBytes = 4 * 1024 * 1024, isolation = 'read_committed', maxWaitMs = 100 }: FetchOptions,
    hook: BatchForwardingHook | undefined
  ): Promise<Omit<FetchedRecords, 'records'> & { items: unknown[] }> {
    return await this.call(() =>
      this.#serial(async () => {
        const [leader] = await this.#leaders(topic, [partition])
        if (leader === undefined) {
          throw new MirrorError(ErrorCodes.KAFKA, `${topic}-${partition}: no leader on the ${this.connection.alias} cluster`, { retriable: true })
        }
        // With a hook, the patched Fetch decoder offers it every v2 batch (RawRecordBatch views).
        const response = await leader[0].fetch({
          replicaId: -1,
          isolationLevel: ISOLATION[isolation],
          maxWaitTime: maxWaitMs,
          minBytes: 1,
          maxBytes,
          topics: [{ topic, partitions: [{ partition, fetchOffset: String(offset), maxBytes }] }],
          ...(hook === undefined ? {} : { forwardRecordBatch: hook }),
        })
        const data = response.responses[0]?.partitions[0]
        if (data === undefined) return { items: [], nextOffset: offset, highWatermark: offset, logStartOffset: offset, lastStableOffset: offset }
        let nextOffset = offset
        for (const m of data.messages) {
          const raw = forwardedBatchOf<RawRecordBatch>(m)
          const batchEnd = raw !== undefined ? raw.endOffset : Number(m.batchContext.firstOffset) + m.batchContext.lastOffsetDelta + 1
          nextOffset = Math.max(nextOffset, Number(m.offset) + 1, batchEnd)
        }
        const kept = (
          isolation === 'read_committed' ? filterAbortedMessages({ messages: data.messages, abortedTransactions: data.abortedTransactions }) : data.messages
        ).filter(m => !m.isControlRecord && Number(m.offset) >= offset)
        return {
          // A batch the hook took is handed over as itself, not as the kafkajs message standing for it.
          items: kept.map(m => forwardedBatchOf<RawRecordBatch>(m) ?? m),
          nextOffset,
          highWatermark: Number(data.highWatermark),
          logStartOffset: Number(data.lastStartOffset),
          lastStableOffset: Number((data as { lastStableOffset?: string }).lastStableOffset ?? data.highWatermark),
        }
      })
    )
  }
}
