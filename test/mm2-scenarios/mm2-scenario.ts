import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import type { TestContext } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { javaCheckpoints, javaRemoteConsumerOffsets, type JavaTranslatedOffset } from '../helpers/java-client.js'
import { deleteTopicIfExists, endOffsets, produce, readAll, uniqueName, withAdmin } from '../helpers/kafka.js'
import { mm2File } from '../helpers/mm2-file.js'
import { spawnSidecarArgs, type SidecarProcess } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

/**
 * The clusters of MirrorMaker 2's integration tests (`MirrorConnectorsIntegrationBaseTest`), by
 * their aliases there: `primary` and `backup`.
 */
export const PRIMARY = 'primary'
export const BACKUP = 'backup'
export const NUM_PARTITIONS = 10
export const NUM_RECORDS_PER_PARTITION = 10
export const NUM_RECORDS_PRODUCED = NUM_PARTITIONS * NUM_RECORDS_PER_PARTITION

/** One cluster of a scenario: the test reaches it through `cluster` (plaintext), the sidecar through `bootstrap` and `clientProperties`. */
export interface ScenarioCluster {
  readonly cluster: LocalCluster
  readonly bootstrap: string
  /** `<alias>.<key>` lines for mm2.properties (security settings), as MirrorMaker 2's SSL test writes them. */
  readonly mm2Properties?: Readonly<Record<string, string>>
}

/** Writes records to a topic: a plain idempotent producer, or a transactional one (`MirrorConnectorsIntegrationTransactionsTest`). */
export type RecordWriter = (cluster: LocalCluster, topic: string, messages: Message[]) => Promise<void>

export const plainWriter: RecordWriter = produce

/** One transaction per call, as `MirrorConnectorsIntegrationTransactionsTest.produceMessages`. */
export const transactionalWriter: RecordWriter = async (cluster, topic, messages) => {
  const producer = createKafkaClient(cluster.connection('test-tx-producer')).producer({
    allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1, transactionalId: uniqueName('embedded-kafka'),
  })
  await producer.connect()
  try {
    const transaction = await producer.transaction()
    try {
      await transaction.send({ topic, acks: -1, messages })
      await transaction.commit()
    } catch (error) {
      await transaction.abort()
      throw error
    }
  } finally {
    await producer.disconnect()
  }
}

/**
 * Names of one scenario: MirrorMaker 2's fixed names (`test-topic-1`, `consumer-group-...`) behind
 * a prefix of its own, so scenarios sharing the clusters never see each other's topics or groups.
 */
export class ScenarioNames {
  readonly run = uniqueName('mm2s')
  topic (name: string): string { return `${this.run}-${name}` }
  group (name: string): string { return `${this.run}-consumer-group-${name}` }
}

/** MirrorMaker 2's remote topic name: `<alias>.<topic>` (DefaultReplicationPolicy) or `<topic>` (IdentityReplicationPolicy). */
export type RemoteTopicName = (topic: string, alias: string) => string
export const defaultRemoteTopic: RemoteTopicName = (topic, alias) => `${alias}.${topic}`
export const identityRemoteTopic: RemoteTopicName = topic => topic

/**
 * `MirrorConnectorsIntegrationBaseTest.basicMM2Config` and `startClusters` as mm2.properties for
 * the sidecar: both flows named, `backup->primary` enabled when `twoWay`, intervals of one second,
 * replication factor 1, `config.properties.exclude = delete\.retention\..*`. Each flow gets a
 * consumer group of its own on its source (the sidecar's position), so every scenario starts fresh.
 */
export function scenarioMm2Properties (
  names: ScenarioNames,
  primary: ScenarioCluster,
  backup: ScenarioCluster,
  options: { twoWay: boolean, extra?: Readonly<Record<string, string>> }
): Record<string, string> {
  return {
    clusters: `${PRIMARY}, ${BACKUP}`,
    [`${PRIMARY}.bootstrap.servers`]: primary.bootstrap,
    [`${BACKUP}.bootstrap.servers`]: backup.bootstrap,
    ...primary.mm2Properties,
    ...backup.mm2Properties,
    [`${PRIMARY}->${BACKUP}.enabled`]: 'true',
    [`${BACKUP}->${PRIMARY}.enabled`]: String(options.twoWay),
    [`${PRIMARY}->${BACKUP}.consumer.group.id`]: `${names.run}-mirror-${PRIMARY}`,
    [`${BACKUP}->${PRIMARY}.consumer.group.id`]: `${names.run}-mirror-${BACKUP}`,
    topics: `${names.topic('test-topic-.*')}, ${PRIMARY}.${names.topic('test-topic-.*')}, ${BACKUP}.${names.topic('test-topic-.*')}`,
    groups: names.group('.*'),
    'sync.topic.acls.enabled': 'false',
    'emit.checkpoints.interval.seconds': '1',
    'emit.heartbeats.interval.seconds': '1',
    'refresh.topics.interval.seconds': '1',
    'refresh.groups.interval.seconds': '1',
    'checkpoints.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    'replication.factor': '1',
    // MirrorMaker 2's tests flush every 5 s; 500 ms keeps the scenarios short.
    'offset.flush.interval.ms': '500',
    'config.properties.exclude': 'delete\\.retention\\..*',
    'sync.topic.configs.interval.seconds': '1',
    ...options.extra,
  }
}

/** Runs `mirror-sidecar mm2.properties` (the real process); killed when the test ends. */
export function startSidecar (t: TestContext, properties: Record<string, string>): { sidecar: SidecarProcess, file: string } {
  const file = mm2File(properties)
  const sidecar = spawnSidecarArgs(t, [file, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
  // DEBUG_MM2S=/tmp/prefix keeps each sidecar's log as /tmp/prefix-<pid>.log, for a failure to read after the run.
  t.after(() => { if (process.env.DEBUG_MM2S !== undefined) writeFileSync(`${process.env.DEBUG_MM2S}-${sidecar.child.pid}.log`, sidecar.stderr()) })
  return { sidecar, file }
}

/** Stops the sidecar with SIGTERM (drain, last commit) and asserts it exited 0. */
export async function stopSidecar (sidecar: SidecarProcess): Promise<void> {
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-3000))
}

/** Deletes, when the test ends, every topic of the scenario on `clusters` (the ones the sidecar created among them). */
export function cleanUpScenarioTopics (t: TestContext, names: ScenarioNames, clusters: readonly LocalCluster[]): void {
  t.after(async () => {
    for (const cluster of clusters) {
      // A cluster the test started for itself is stopped by a hook registered before this one
      // (hooks run in the order registered), and its topics went with it: nothing to delete there.
      if (await cluster.pid() === undefined) continue
      const topics = await withAdmin(cluster, admin => admin.listTopics())
      for (const topic of topics.filter(name => name.includes(names.run))) await deleteTopicIfExists(cluster, topic)
    }
  })
}

/** Creates `topic` on `cluster` (replication factor 1) and waits for its leaders. */
export async function createScenarioTopic (
  cluster: LocalCluster,
  topic: string,
  partitions: number,
  configs: Readonly<Record<string, string>> = {}
): Promise<void> {
  await withAdmin(cluster, async admin => {
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
      })
    } catch (error) {
      // As in createTopic (helpers/kafka.ts): kafkajs' wait for leaders gives up when the metadata does not list the new topic yet.
      if ((error as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error
    }
  })
  await waitUntil(
    async () => {
      const { topics } = await withAdmin(cluster, admin => admin.fetchTopicMetadata({ topics: [topic] }))
      const found = topics[0]?.partitions ?? []
      return found.length === partitions && found.every(p => p.leader >= 0)
    },
    { timeoutMs: 30_000, message: `the leaders of ${topic}` }
  )
}

/** `numPerPartition` records in each of partitions `0..partitions-1`, keys `k<i>` unique over the call (for `auditKeys`), values `<tag>-<i>`. */
export function scenarioRecords (tag: string, partitions = NUM_PARTITIONS, numPerPartition = NUM_RECORDS_PER_PARTITION): Message[] {
  const records: Message[] = []
  for (let r = 0; r < numPerPartition; r++) {
    for (let p = 0; p < partitions; p++) {
      const i = records.length
      records.push({ partition: p, key: `k${i}`, value: `${tag}-${i}` })
    }
  }
  return records
}

export async function waitForTopicCreated (cluster: LocalCluster, topic: string, timeoutMs = 30_000): Promise<void> {
  await waitUntil(async () => (await withAdmin(cluster, admin => admin.listTopics())).includes(topic), { timeoutMs, message: `topic ${topic} to be created` })
}

/** The value of one config of `topic` (its default when not set on the topic). */
export async function topicConfig (cluster: LocalCluster, topic: string, name: string): Promise<string | undefined> {
  const described = await withAdmin(cluster, admin =>
    admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic, configNames: [name] }] })
  )
  return described.resources[0]?.configEntries.find(entry => entry.configName === name)?.configValue ?? undefined
}

/**
 * `waitForNewCheckpointOnAllPartitions`: Kafka's `MirrorClient.remoteConsumerOffsets` on `cluster`
 * until it answers for every partition of `topic`, each different from `last` when given.
 */
export async function waitForCheckpointOnAllPartitions (
  cluster: LocalCluster,
  group: string,
  remoteAlias: string,
  topic: string,
  last?: ReadonlyMap<number, number>,
  partitions = NUM_PARTITIONS
): Promise<Map<number, number>> {
  let found = new Map<number, number>()
  await waitUntil(
    async () => {
      const offsets = (await javaRemoteConsumerOffsets(cluster.bootstrap, remoteAlias, group, 3000)).filter(row => row.topic === topic)
      found = new Map(offsets.map(row => [row.partition, row.offset]))
      return Array.from({ length: partitions }, (_, p) => p).every(p => found.has(p) && (last === undefined || last.get(p) !== found.get(p)))
    },
    { timeoutMs: 60_000, intervalMs: 500, message: `checkpoints of ${group} on every partition of ${topic} from ${remoteAlias}` }
  )
  return found
}

/**
 * `assertMonotonicCheckpoints`: the checkpoints topic, read whole by Kafka's
 * `Checkpoint.deserializeRecord`, never goes back per group and partition, for the groups of the
 * scenario `names` (the topic is shared with the other scenarios, one of which rewinds its group).
 */
export async function assertMonotonicCheckpoints (cluster: LocalCluster, checkpointsTopic: string, names: ScenarioNames): Promise<void> {
  const last = new Map<string, number>()
  const checkpoints = (await javaCheckpoints(cluster.bootstrap, checkpointsTopic)).filter(checkpoint => checkpoint.group.startsWith(names.run))
  assert.ok(checkpoints.length > 0, `checkpoints of ${names.run}-* in ${checkpointsTopic}`)
  for (const checkpoint of checkpoints) {
    const key = JSON.stringify([checkpoint.group, checkpoint.topic, checkpoint.partition])
    const before = last.get(key)
    assert.ok(
      before === undefined || checkpoint.downstreamOffset >= before,
      `checkpoint was non-monotonic for ${key}: ${before} then ${checkpoint.downstreamOffset}`
    )
    last.set(key, checkpoint.downstreamOffset)
  }
}

/**
 * The sidecar's exact translation of a group that read every record of `sourceTopic`: on every
 * partition of `targetTopic`, one past the last record copied, whatever transaction markers the
 * source or the target hold after it (MirrorMaker 2 gives at most that, often less: it re-reads).
 */
export async function assertTranslatedToEnd (
  target: LocalCluster,
  targetTopic: string,
  translated: ReadonlyMap<number, number>,
  lastRecordOffsets: ReadonlyMap<number, bigint>
): Promise<void> {
  const ends = await endOffsets(target, targetTopic)
  for (const [partition, lastOffset] of lastRecordOffsets) {
    const offset = BigInt(translated.get(partition) ?? -1)
    assert.ok(
      offset >= lastOffset + 1n && offset <= (ends.get(partition) ?? -1n),
      `${targetTopic} partition ${partition}: translated to ${offset}, expected one past the last copied record (${lastOffset + 1n}) up to the end offset ${ends.get(partition)}`
    )
  }
}

export function byPartition (rows: readonly JavaTranslatedOffset[], topic: string): Map<number, number> {
  return new Map(rows.filter(row => row.topic === topic).map(row => [row.partition, row.offset]))
}

/**
 * The records of `topic` (read committed) a consumer starting at `offsets` would read: what a
 * group committed there reads again. Read from the beginning: a read from an offset after which
 * only transaction markers follow would wait for a record that never comes.
 */
export async function recordsFrom (cluster: LocalCluster, topic: string, offsets: ReadonlyMap<number, bigint>): Promise<string[]> {
  return (await readAll(cluster, topic)).filter(r => BigInt(r.offset) >= (offsets.get(r.partition) ?? 0n)).map(r => `${r.partition}@${r.offset}`)
}
