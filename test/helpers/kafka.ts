import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import type { Admin, IHeaders, ITopicConfig, Message } from '@kafka-mirror-sidecar/kafkajs'
import { createKafkaClient } from '../../src/kafka/client.js'
import { clustersUp, type KafkaEndpoint, type LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { waitUntil } from './wait.js'

let shared: Promise<{ source: LocalCluster, target: LocalCluster }> | undefined

/** The two default local clusters, started on first use (and reused when already running). */
export function sharedClusters (): Promise<{ source: LocalCluster, target: LocalCluster }> {
  shared ??= clustersUp()
  return shared
}

export function uniqueName (prefix = 'test'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`
}

/** Runs `fn` with a connected admin client of `cluster`, then disconnects. */
export async function withAdmin<T> (cluster: KafkaEndpoint, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = createKafkaClient(cluster.connection('test-admin')).admin()
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.disconnect()
  }
}

export interface TopicOptions {
  readonly name?: string
  readonly partitions?: number
  readonly configs?: Readonly<Record<string, string>>
}

/**
 * `admin.createTopics` with `waitForLeaders`, and then the wait kafkajs gives up too early: its wait for
 * leaders throws when a broker's metadata does not list the new topic yet (UNKNOWN_TOPIC_OR_PARTITION,
 * seen on a loaded machine and on Kafka 3.3's KRaft brokers); the topics were created, so wait for their leaders.
 */
export async function createTopicsWithLeaders (admin: Admin, topics: ITopicConfig[]): Promise<void> {
  try {
    await admin.createTopics({ waitForLeaders: true, topics })
  } catch (error) {
    if ((error as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error
    for (const { topic, numPartitions, replicaAssignment } of topics) {
      const partitions = replicaAssignment?.length ?? numPartitions ?? 1
      await waitUntil(async () => {
        const { topics: found } = await admin.fetchTopicMetadata({ topics: [topic] })
        const listed = found[0]?.partitions ?? []
        return listed.length === partitions && listed.every(p => p.leader >= 0)
      }, { timeoutMs: 30_000, message: `the leaders of ${topic}` })
    }
  }
}

/** Creates a topic with a unique name on `cluster` and deletes it when the test ends. */
export async function createTopic (t: TestContext, cluster: KafkaEndpoint, options: TopicOptions = {}): Promise<string> {
  const topic = options.name ?? uniqueName()
  const partitions = options.partitions ?? 1
  await withAdmin(cluster, admin => createTopicsWithLeaders(admin, [{
    topic,
    numPartitions: partitions,
    replicationFactor: 1,
    configEntries: Object.entries(options.configs ?? {}).map(([name, value]) => ({ name, value })),
  }]))
  t.after(() => deleteTopicIfExists(cluster, topic))
  return topic
}

export async function deleteTopicIfExists (cluster: KafkaEndpoint, topic: string): Promise<void> {
  await withAdmin(cluster, async admin => {
    const topics = await admin.listTopics()
    if (topics.includes(topic)) await admin.deleteTopics({ topics: [topic] })
  })
}

/**
 * Sends `messages` to `topic` with acks=all and the idempotent producer (a retry after a
 * just-created topic's NOT_LEADER writes nothing twice), and waits for the acknowledgement.
 */
export async function produce (cluster: KafkaEndpoint, topic: string, messages: Message[]): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const producer = createKafkaClient(cluster.connection('test-producer'))
      .producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      await producer.send({ topic, acks: -1, messages })
      return
    } catch (error) {
      // A just-created topic whose leaders a busy broker has not taken up yet (NOT_LEADER after kafkajs' own
      // retries): sent again, whole, only when the failed send wrote no partition, so no record is written twice.
      const written = (error as { writtenPartitions?: unknown[] }).writtenPartitions
      if (Date.now() > deadline || written === undefined || written.length > 0 || !String((error as Error).message).includes('not the leader')) throw error
    } finally {
      await producer.disconnect()
    }
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}

/** A record as read back, with bytes kept as bytes. */
export interface ReadRecord {
  readonly partition: number
  readonly offset: string
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly timestamp: string
  readonly headers: IHeaders
}

/**
 * Reads `topic` up to the end offsets seen when called: from the earliest offset with a throwaway
 * group, or, with `groupId`, as that group from its committed offsets (the beginning where it has
 * none) without committing. Trailing transaction markers are stepped over.
 */
export async function readAll (cluster: KafkaEndpoint, topic: string, options: { groupId?: string } = {}): Promise<ReadRecord[]> {
  const kafka = createKafkaClient(cluster.connection('test-reader'))
  const ends = await withAdmin(cluster, admin => admin.fetchTopicOffsets(topic))
  const committed =
    options.groupId === undefined
      ? new Map<number, bigint>()
      : new Map(
        ((await withAdmin(cluster, admin => admin.fetchOffsets({ groupId: options.groupId as string, topics: [topic] })))[0]?.partitions ?? []).map(p => [
          p.partition,
          BigInt(p.offset),
        ])
      )
  const remaining = new Map(
    ends
      .filter(p => BigInt(p.high) > ((committed.get(p.partition) ?? -1n) >= 0n ? (committed.get(p.partition) as bigint) : BigInt(p.low)))
      .map(p => [p.partition, BigInt(p.high)])
  )
  const records: ReadRecord[] = []
  if (remaining.size === 0) return records
  const consumer = kafka.consumer({ groupId: options.groupId ?? uniqueName('reader'), allowAutoTopicCreation: false, maxWaitTimeInMs: 200 })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          const end = remaining.get(batch.partition)
          for (const m of batch.messages) {
            if (end === undefined || BigInt(m.offset) >= end) continue
            records.push({ partition: batch.partition, offset: m.offset, key: m.key, value: m.value, timestamp: m.timestamp, headers: m.headers ?? {} })
          }
          // The last offsets may be transaction markers, never handed over as messages.
          if (end !== undefined && BigInt(batch.lastOffset()) + 1n >= end) remaining.delete(batch.partition)
          if (remaining.size === 0) resolve()
        },
      }).catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return records.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)))
}

/** Sum of end offsets (high watermarks) of a topic. */
export async function endOffsets (cluster: KafkaEndpoint, topic: string): Promise<Map<number, bigint>> {
  const offsets = await withAdmin(cluster, admin => admin.fetchTopicOffsets(topic))
  return new Map(offsets.map(o => [o.partition, BigInt(o.high)]))
}

export async function totalRecords (cluster: KafkaEndpoint, topic: string): Promise<bigint> {
  const offsets = await withAdmin(cluster, admin => admin.fetchTopicOffsets(topic))
  return offsets.reduce((sum, o) => sum + BigInt(o.high) - BigInt(o.low), 0n)
}

/** Committed offsets of `groupId` for `topic`, by partition (-1n when none). */
export async function committedOffsets (cluster: KafkaEndpoint, groupId: string, topic: string): Promise<Map<number, bigint>> {
  const offsets = await withAdmin(cluster, admin => admin.fetchOffsets({ groupId, topics: [topic] }))
  return new Map((offsets[0]?.partitions ?? []).map(p => [p.partition, BigInt(p.offset)]))
}

/** Compares what two reads returned, field by field, ignoring offsets. */
export function recordView (r: ReadRecord): Record<string, unknown> {
  return {
    partition: r.partition,
    key: r.key?.toString('base64') ?? null,
    value: r.value?.toString('base64') ?? null,
    timestamp: r.timestamp,
    headers: Object.entries(r.headers).map(([k, v]) => [
      k,
      Array.isArray(v) ? v.map(x => Buffer.from(x).toString('base64')) : v === undefined ? null : Buffer.from(v).toString('base64'),
    ]),
  }
}

/**
 * Starts a cluster of its own for one test (a target to stop, a small message.max.bytes, ...) on
 * free ports from `TEST_EXTRA_PORTS` (default 39000) up; stopped and removed when the test ends.
 */
export async function startExtraCluster (t: TestContext, name: string, brokerProperties: Record<string, string> = {}): Promise<LocalCluster> {
  const { LocalCluster, freePortPair } = await import('../../scripts/local-kafka/clusters.js')
  return await withFreshPortsOnBindError(async from => {
    const port = await freePortPair(from)
    const cluster = new LocalCluster({ name: `${name}-${port}`, port, brokerProperties, heap: '384m' })
    t.after(() => cluster.stop({ graceMs: 2_000 }))
    await cluster.start()
    return { value: cluster, port }
  })
}

/**
 * Runs `start` on ports from `TEST_EXTRA_PORTS` (default 39000) up, and again on later ports when
 * the broker could not bind (a port probed free was taken before the broker bound it).
 */
export async function withFreshPortsOnBindError<T> (start: (fromPort: number) => Promise<{ value: T, port: number }>): Promise<T> {
  let from = Number(process.env.TEST_EXTRA_PORTS ?? 39000)
  for (let attempt = 1; ; attempt++) {
    try {
      return (await start(from)).value
    } catch (error) {
      if (attempt >= 3 || (error as { portInUse?: boolean }).portInUse !== true) throw error
      from += 10
    }
  }
}

/**
 * How a copy of keys `k0..k<expected-1>` turned out: keys absent from `records`, and extra copies
 * (a key seen more than once, or a key outside that range).
 */
export function auditKeys (records: ReadonlyArray<{ key: Buffer | null }>, expected: number): { missing: number, duplicates: number } {
  const seen = new Map<string, number>()
  for (const r of records) seen.set(String(r.key), (seen.get(String(r.key)) ?? 0) + 1)
  let missing = 0
  for (let i = 0; i < expected; i++) if (!seen.has(`k${i}`)) missing++
  let duplicates = 0
  for (const count of seen.values()) duplicates += count - 1
  return { missing, duplicates: duplicates + seen.size - (expected - missing) }
}
