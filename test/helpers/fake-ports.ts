import { DEFAULT_TOPIC_CONFIG_FILTER } from '../../src/config/topic-config-filter.js'
import type { FlowConfig } from '../../src/config/mirror-config.js'
import { createTopicFilter } from '../../src/config/topic-filter.js'
import type { KafkaRecord } from '../../src/shared/kafka-record.js'
import { partitionKey } from '../../src/shared/partition-key.js'
import type {
  CommitOffset,
  FetchControl,
  FlowPorts,
  NewTopic,
  TopicAcl,
  PartitionAck,
  PartitionWrite,
  RecordSink,
  RecordSource,
  SourceListener,
  TopicCatalog,
  TopicDescription,
} from '../../src/ports/ports.js'
import { PartialSendError } from '../../src/ports/partial-send-error.js'
import type { ForwardedBatch } from '../../src/ports/forwarded-batch.js'
import { ErrorCodes, MirrorError } from '../../src/shared/errors.js'

/**
 * In-memory implementations of the pipeline's ports, for unit tests of its logic (no broker).
 * They behave as the Kafka adapters promise to: one request per `send`, consecutive target
 * offsets per partition, commits only through `commit`.
 */

/** A flow configuration with small, fast settings; override what a test is about. */
export function fakeFlowConfig (overrides: Partial<FlowConfig> = {}): FlowConfig {
  const connection = (alias: string) => ({ alias, brokers: [`${alias}:9092`], clientId: 'test', requestTimeoutMs: 300 })
  return {
    name: 'source->target',
    source: connection('source'),
    target: connection('target'),
    consumer: {
      groupId: 'mirror',
      autoOffsetReset: 'earliest',
      maxPollRecords: 500,
      fetchMaxBytes: 1 << 20,
      maxPartitionFetchBytes: 1 << 20,
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 20,
      fetchMaxWaitMs: 500,
      fetchMinBytes: 1,
      fetchSessions: true,
      groupProtocol: 'classic',
    },
    producer: { acks: -1, compression: 'none', compressionSet: false, batchSizeBytes: 1 << 20, lingerMs: 0, idempotent: true, maxRequestSizeBytes: 1 << 20 },
    topics: createTopicFilter(/^.*$/u, undefined, '.*', undefined),
    replicationPolicy: { kind: 'identity' },
    numStreams: 1,
    numProducers: 2,
    queueMaxRecords: 10_000,
    queueMaxBytes: 1 << 26,
    offsetCommitIntervalMs: 60_000,
    abortOnSendFailure: true,
    passThrough: 'off',
    refreshTopicsIntervalMs: 60_000,
    syncTopicConfigs: false,
    topicConfigFilter: DEFAULT_TOPIC_CONFIG_FILTER,
    syncTopicConfigsIntervalMs: 600_000,
    syncTopicAcls: false,
    syncTopicAclsIntervalMs: 600_000,
    replicationFactor: 1,
    offsetSyncs: { enabled: false, topic: 'offset-syncs', replicationFactor: 1 },
    groupSync: {
      enabled: false,
      groups: { include: '.*', exclude: undefined, matches: () => true },
      intervalMs: 10_000,
      emitCheckpoints: false,
      checkpointIntervalMs: 10_000,
      checkpointsTopic: 'checkpoints',
      checkpointsReplicationFactor: 1,
    },
    heartbeats: { enabled: false, intervalMs: 1000, topic: 'heartbeats', replicationFactor: 1 },
    ...overrides,
  }
}

/** Records `from .. from + count - 1`, each with a value naming its offset. */
export function records (from: number, count: number): KafkaRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: String(from + i),
    key: null,
    value: Buffer.from(`v${from + i}`),
    timestamp: String(1_700_000_000_000 + from + i),
  }))
}

/** A forwarded batch over `records` (consecutive offsets): what a record source hands over undecoded. */
export class FakeForwardedBatch implements ForwardedBatch {
  readonly baseOffset: bigint
  readonly recordCount: number
  readonly sizeBytes: number
  readonly firstTimestampMs: number
  readonly maxTimestampMs: number
  readonly codec = 'lz4'
  readonly mergeable: boolean = false
  decodes = 0
  constructor (readonly records: readonly KafkaRecord[]) {
    this.baseOffset = BigInt((records[0] as KafkaRecord).offset)
    this.recordCount = records.length
    this.sizeBytes = 100 * records.length
    this.firstTimestampMs = Number((records[0] as KafkaRecord).timestamp)
    this.maxTimestampMs = Number((records[records.length - 1] as KafkaRecord).timestamp)
  }

  async decode (): Promise<readonly KafkaRecord[]> { this.decodes++; return this.records }
}

/** Resolves once `condition` holds, checking after every turn of the event loop; rejects after `timeoutMs`. */
export async function until (condition: () => boolean, message: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`)
    await new Promise(resolve => setTimeout(resolve, 1))
  }
}

export class FakeTopicCatalog implements TopicCatalog {
  readonly topics: Map<string, number>
  readonly created: NewTopic[] = []
  constructor (readonly alias: string, topics: Record<string, number> = {}) {
    this.topics = new Map(Object.entries(topics))
  }

  async start (): Promise<void> {}
  async stop (): Promise<void> {}
  /** Calls of `describeTopics` (each one Metadata request on a real cluster). */
  describeCalls = 0
  async describeTopics (): Promise<TopicDescription[]> {
    this.describeCalls++
    return [...this.topics].map(([name, partitions]) => ({ name, partitions }))
  }

  /** Topic configs set explicitly, per topic. */
  readonly configs = new Map<string, Record<string, string>>()
  /** Topic configs at their default value, per topic (returned with `withDefaults`). */
  readonly defaults = new Map<string, Record<string, string>>()
  async topicConfigs (topics: readonly string[], withDefaults = false): Promise<Map<string, Record<string, string>>> {
    return new Map(topics.flatMap(topic => {
      const set = this.configs.get(topic)
      const defaults = withDefaults ? this.defaults.get(topic) : undefined
      return set === undefined && defaults === undefined ? [] : [[topic, { ...defaults, ...set }] as const]
    }))
  }

  async createTopics (topics: readonly NewTopic[]): Promise<void> {
    for (const topic of topics) { this.topics.set(topic.name, topic.partitions); this.created.push(topic) }
  }

  async createPartitions (topic: string, count: number): Promise<void> { this.topics.set(topic, count) }
  readonly configsSet: Array<{ topic: string, configs: Readonly<Record<string, string>>, removedKeys?: readonly string[] }> = []
  readonly acls: TopicAcl[] = []
  async topicAcls (topics: readonly string[]): Promise<TopicAcl[] | undefined> { return this.acls.filter(acl => topics.includes(acl.topic)) }
  async createTopicAcls (acls: readonly TopicAcl[]): Promise<void> { this.acls.push(...acls) }
  async setTopicConfigs (topic: string, configs: Readonly<Record<string, string>>, removedKeys: readonly string[] = []): Promise<void> {
    this.configsSet.push({ topic, configs, ...(removedKeys.length === 0 ? {} : { removedKeys }) })
  }
}

/** What one delivered batch's control saw. */
export interface DeliveryControl extends FetchControl {
  heartbeats: number
  active: boolean
}

/**
 * The source group, driven by the test: `deliver` hands a batch to the pipeline as the consumer
 * would and resolves when the pipeline let go of it (the consumer fetches again only then).
 */
export class FakeRecordSource implements RecordSource {
  connected = false
  listener: SourceListener | undefined
  readonly commits: CommitOffset[][] = []
  #owned = new Set<string>()
  /** When set, `commit` rejects with it. */
  commitError: Error | undefined
  stopped = false

  constructor (readonly partitionsOf: (topic: string) => number) {}

  owned (): ReadonlySet<string> { return this.#owned }

  async start (topics: readonly string[], listener: SourceListener): Promise<void> {
    this.listener = listener
    this.connected = true
    const owned = new Set<string>()
    for (const topic of topics) for (let p = 0; p < this.partitionsOf(topic); p++) owned.add(partitionKey(topic, p))
    this.assign(owned)
  }

  /** A rebalance: this process now owns `owned`. */
  assign (owned: ReadonlySet<string>): void {
    this.#owned = new Set(owned)
    this.listener?.onAssignment(this.#owned)
  }

  /** Hands over `batch` undecoded (pass-through). */
  deliverForwarded (topic: string, partition: number, batch: FakeForwardedBatch, control: DeliveryControl = fetchControl()): Promise<void> {
    const listener = this.listener
    if (listener === undefined) throw new Error('source not started')
    return listener.onBatch({ topic, partition, highWatermark: batch.baseOffset + BigInt(batch.recordCount), records: [], forwarded: batch }, control)
  }

  deliver (topic: string, partition: number, batch: readonly KafkaRecord[], control: DeliveryControl = fetchControl()): Promise<void> {
    const listener = this.listener
    if (listener === undefined) throw new Error('source not started')
    const last = batch[batch.length - 1]
    return listener.onBatch({ topic, partition, highWatermark: BigInt(last === undefined ? 0 : Number(last.offset) + 1), records: batch }, control)
  }

  async commit (offsets: readonly CommitOffset[]): Promise<void> {
    if (this.commitError !== undefined) throw this.commitError
    this.commits.push(offsets.map(o => ({ topic: o.topic, partition: o.partition, offset: o.offset })))
  }

  /** The last offset committed for the partition, or undefined. */
  committed (topic: string, partition: number): bigint | undefined {
    let offset: bigint | undefined
    for (const commit of this.commits) for (const o of commit) if (o.topic === topic && o.partition === partition) offset = o.offset
    return offset
  }

  /** Every `seek` asked for, in order. */
  readonly seeks: CommitOffset[][] = []
  seek (offsets: readonly CommitOffset[]): void { this.seeks.push(offsets.map(o => ({ topic: o.topic, partition: o.partition, offset: o.offset }))) }

  pause (): void {}
  async stop (): Promise<void> { this.stopped = true; this.connected = false }
}

export function fetchControl (): DeliveryControl {
  const control: DeliveryControl = {
    heartbeats: 0,
    active: true,
    heartbeat: async () => { control.heartbeats++ },
    isActive: () => control.active,
  }
  return control
}

/** A gate a test opens: sends wait at it while it is closed. */
export class Gate {
  #open = false
  #waiters: Array<() => void> = []
  get open (): boolean { return this.#open }
  close (): void { this.#open = false }
  release (): void { this.#open = true; for (const wake of this.#waiters.splice(0)) wake() }
  wait (): Promise<void> { return this.#open ? Promise.resolve() : new Promise(resolve => this.#waiters.push(resolve)) }
}

/** The target's log of every partition, shared by the sinks of one flow (one cluster). */
export class FakeTarget {
  /** Source offsets (as the record value tells) written per target partition, in target offset order. */
  readonly logs = new Map<string, string[]>()
  /** Which sink wrote each partition. */
  readonly writers = new Map<string, Set<number>>()
  /** Forwarded batches written as they were. */
  forwardedWrites = 0
  /** Partitions in a request now, with the sink sending it. */
  readonly #inFlight = new Map<string, number>()
  /** Times a request held a partition another request held at the same time (order could break). */
  overlaps = 0

  /** A sink starts a request for `writes`; returns what ends it. */
  requestStarted (sink: number, writes: readonly PartitionWrite[]): () => void {
    const keys = [...new Set(writes.map(write => partitionKey(write.topic, write.partition)))]
    for (const key of keys) {
      if (this.#inFlight.has(key)) this.overlaps++
      this.#inFlight.set(key, sink)
    }
    return () => { for (const key of keys) if (this.#inFlight.get(key) === sink) this.#inFlight.delete(key) }
  }

  values (topic: string, partition: number): string[] { return this.logs.get(partitionKey(topic, partition)) ?? [] }

  append (sink: number, write: PartitionWrite): bigint {
    const key = partitionKey(write.topic, write.partition)
    const log = this.logs.get(key) ?? []
    this.logs.set(key, log)
    const base = BigInt(log.length)
    const records = write.forwarded === undefined ? write.records : (write.forwarded as FakeForwardedBatch).records
    for (const record of records) log.push(record.value?.toString() ?? '')
    if (write.forwarded !== undefined) this.forwardedWrites++
    const writers = this.writers.get(key) ?? new Set()
    writers.add(sink)
    this.writers.set(key, writers)
    return base
  }
}

/**
 * One producer lane's target. A send waits at `gate` (open by default) and, like a request to a
 * broker that does not answer, fails retriably after its timeout; `failNext` makes the next sends
 * fail retriably; `failAfterFirstPartition` makes the next one fail after writing one partition;
 * `refuse` makes any request holding that source offset fail for good. A send that writes a
 * partition again writes it again (no sequence numbers here): duplicates show in `FakeTarget`.
 */
export class FakeRecordSink implements RecordSink {
  connected = false
  readonly gate = new Gate()
  sends = 0
  #failures = 0
  #partialFailures = 0
  readonly #refused = new Set<string>()

  constructor (readonly id: number, readonly target: FakeTarget) { this.gate.release() }

  failNext (times: number): void { this.#failures += times }
  /** The next send writes its first partition, then fails retriably for the rest (another broker did not answer). */
  failAfterFirstPartition (): void { this.#partialFailures++ }
  refuse (offset: number): void { this.#refused.add(String(offset)) }
  /** Requests holding a forwarded batch fail for good (as a broker refuses a batch too large for the topic). */
  refuseForwarded = false

  async start (): Promise<void> { this.connected = true }
  async stop (): Promise<void> { this.connected = false }

  async send (writes: readonly PartitionWrite[], timeoutMs: number): Promise<PartitionAck[]> {
    this.sends++
    const ended = this.target.requestStarted(this.id, writes)
    try {
      return await this.#send(writes, timeoutMs)
    } finally {
      ended()
    }
  }

  async #send (writes: readonly PartitionWrite[], timeoutMs: number): Promise<PartitionAck[]> {
    if (!this.gate.open) {
      let timer: NodeJS.Timeout | undefined
      const timedOut = await Promise.race([
        this.gate.wait().then(() => false),
        new Promise<boolean>(resolve => { timer = setTimeout(() => resolve(true), timeoutMs) }),
      ])
      clearTimeout(timer)
      if (timedOut) throw new MirrorError(ErrorCodes.SEND_FAILED, 'request timed out', { retriable: true, kafkaCode: 'REQUEST_TIMED_OUT' })
    }
    if (this.#failures > 0) {
      this.#failures--
      throw new MirrorError(ErrorCodes.SEND_FAILED, 'not leader', { retriable: true, kafkaCode: 'NOT_LEADER_OR_FOLLOWER' })
    }
    if (this.#partialFailures > 0 && writes.length > 1) {
      this.#partialFailures--
      const [first] = writes as [PartitionWrite]
      const written = [{ topic: first.topic, partition: first.partition, baseOffset: this.target.append(this.id, first) }]
      throw new PartialSendError(new MirrorError(ErrorCodes.SEND_FAILED, 'request timed out', { retriable: true, kafkaCode: 'REQUEST_TIMED_OUT' }), written)
    }
    const partitions = new Set<string>()
    for (const write of writes) {
      // The broker takes one record batch per partition per request: a forwarded batch must be alone.
      const key = partitionKey(write.topic, write.partition)
      if (partitions.has(key) && writes.some(w => w.forwarded !== undefined && partitionKey(w.topic, w.partition) === key)) {
        throw new MirrorError(ErrorCodes.SEND_FAILED, `two record batches for ${key} in one request`, { kafkaCode: 'INVALID_RECORD' })
      }
      partitions.add(key)
      if (write.forwarded !== undefined && this.refuseForwarded) {
        throw new MirrorError(ErrorCodes.SEND_FAILED, 'batch too large for the topic', { kafkaCode: 'MESSAGE_TOO_LARGE' })
      }
      for (const record of write.records) {
        if (this.#refused.has(record.offset)) throw new MirrorError(ErrorCodes.SEND_FAILED, 'record too large', { kafkaCode: 'MESSAGE_TOO_LARGE' })
      }
    }
    return writes.map(write => ({ topic: write.topic, partition: write.partition, baseOffset: this.target.append(this.id, write) }))
  }
}

/** Ports for one flow over in-memory topics `{ name: partitions }` on both clusters. */
export function fakePorts (
  topics: Record<string, number>,
  lanes = 2
): FlowPorts & {
  readonly sources: FakeRecordSource[]
  readonly sinkFakes: FakeRecordSink[]
  readonly target: FakeTarget
  readonly current: () => FakeRecordSource
} {
  const sourceTopics = new FakeTopicCatalog('source', topics)
  const targetTopics = new FakeTopicCatalog('target', topics)
  const target = new FakeTarget()
  const sinkFakes = Array.from({ length: lanes }, (_, i) => new FakeRecordSink(i, target))
  const sources: FakeRecordSource[] = []
  return {
    source: () => {
      const source = new FakeRecordSource(topic => sourceTopics.topics.get(topic) ?? 0)
      sources.push(source)
      return source
    },
    sinks: sinkFakes,
    sourceTopics,
    targetTopics,
    sources,
    sinkFakes,
    target,
    current: () => sources[sources.length - 1] as FakeRecordSource,
  }
}
