import { performance } from 'node:perf_hooks'
import { randomBytes } from 'node:crypto'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { clustersUp, type LocalCluster } from '../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../src/kafka/client.js'
import { AuditClient } from '../src/kafka/audit-client.js'
import { verifyCopy } from '../src/check/verify/copy-verification.js'
import { totalCounts } from '../src/check/verify/verification-report.js'
import { Compressions, type Compression } from './compression.js'

/**
 * Read speed of `mirror-check verify` against a plain kafkajs consumer on the same data.
 * Usage: node dist/bench/verify-speed.js [records=200000] [valueBytes=512] [partitions=4] [compression=none]
 * (compression: none, gzip, snappy, lz4 or zstd, the producer's codec on both clusters).
 */
const records = Number(process.argv[2] ?? 200_000)
const valueBytes = Number(process.argv[3] ?? 512)
const partitions = Number(process.argv[4] ?? 4)
const compression = (process.argv[5] ?? 'none') as Compression
if (!Compressions.includes(compression)) throw new Error(`compression "${compression}": expected one of ${Compressions.join(', ')}`)
const CODEC = {
  none: kafkajs.CompressionTypes.None,
  gzip: kafkajs.CompressionTypes.GZIP,
  snappy: kafkajs.CompressionTypes.Snappy,
  lz4: kafkajs.CompressionTypes.LZ4,
  zstd: kafkajs.CompressionTypes.ZSTD,
} as const
// Timestamps of the last few minutes: older ones fall to the broker's 7-day retention during the run.
const baseTimestampMs = Date.now() - records

async function fill (cluster: LocalCluster, topic: string, payloads: Buffer[]): Promise<void> {
  const kafka = createKafkaClient(cluster.connection('bench-producer'))
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] })
  await admin.disconnect()
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const batch = 2000
  for (let i = 0; i < payloads.length; i += batch) {
    await producer.send({
      topic,
      acks: -1,
      compression: CODEC[compression],
      messages: payloads
        .slice(i, i + batch)
        .map((value, j) => ({
          partition: (i + j) % partitions,
          key: `k${i + j}`,
          value,
          timestamp: String(baseTimestampMs + i + j),
          headers: { seq: String(i + j) },
        })),
    })
  }
  await producer.disconnect()
}

async function drop (cluster: LocalCluster, topic: string): Promise<void> {
  const admin = createKafkaClient(cluster.connection('bench-admin')).admin()
  await admin.connect()
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
  await admin.disconnect()
}

async function plainConsumer (cluster: LocalCluster, topic: string): Promise<{ seconds: number, bytes: number }> {
  const consumer = createKafkaClient(cluster.connection('bench-consumer')).consumer({
    groupId: `bench-${randomBytes(4).toString('hex')}`,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxBytes: 16 * 1024 * 1024,
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  let seen = 0
  let bytes = 0
  const started = performance.now()
  await new Promise<void>(resolve => {
    void consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: partitions,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          seen++
          bytes +=
            (m.key?.length ?? 0) + (m.value?.length ?? 0) + Object.values(m.headers ?? {}).reduce((n, v) => n + (v === undefined ? 0 : (v as Buffer).length), 0)
        }
        if (seen >= records) resolve()
      },
    })
  })
  const seconds = (performance.now() - started) / 1000
  await consumer.disconnect()
  return { seconds, bytes }
}

async function verify (
  source: LocalCluster,
  target: LocalCluster,
  topic: string,
  digest: boolean
): Promise<{ seconds: number, bytes: number, checked: number, missing: number }> {
  const sourceClient = new AuditClient(source.connection('bench-verify'))
  const targetClient = new AuditClient(target.connection('bench-verify'))
  await Promise.all([sourceClient.connect(), targetClient.connect()])
  const started = performance.now()
  const result = await verifyCopy({
    source: sourceClient,
    target: targetClient,
    topic,
    targetTopic: topic,
    until: 'default',
    group: 'bench-no-mirror',
    ...(digest ? { digestRangeRecords: 1000 } : {}),
  })
  const seconds = (performance.now() - started) / 1000
  await Promise.all([sourceClient.close(), targetClient.close()])
  const total = totalCounts(result.partitions)
  return { seconds, bytes: total.bytes, checked: total.checked, missing: total.missing }
}

const { source, target } = await clustersUp()
const topic = `bench-verify-${randomBytes(4).toString('hex')}`
const payloads = Array.from({ length: records }, () => randomBytes(valueBytes))
console.log(`producing ${records} records of ${valueBytes} bytes (random, compression ${compression}) to ${partitions} partitions on both clusters...`)
await fill(source, topic, payloads)
await fill(target, topic, payloads)
try {
  const mb = (bytes: number): string => (bytes / 1_048_576).toFixed(1)
  const plain = await plainConsumer(source, topic)
  console.log(`plain kafkajs consumer (one cluster): ${mb(plain.bytes)} MB in ${plain.seconds.toFixed(2)} s = ${mb(plain.bytes / plain.seconds)} MB/s`)
  for (const digest of [false, true]) {
    const run = await verify(source, target, topic, digest)
    const ratio = (run.bytes / run.seconds) / (plain.bytes / plain.seconds)
    console.log(`verify${digest ? ' --digest' : ''}: ${run.checked} records, ${mb(run.bytes)} MB per cluster (${mb(2 * run.bytes)} MB read from both) in ${run.seconds.toFixed(2)} s = ${mb(run.bytes / run.seconds)} MB/s per cluster, ${mb(2 * run.bytes / run.seconds)} MB/s read; missing ${run.missing}; ${ratio.toFixed(2)}x the plain consumer per cluster`)
  }
} finally {
  await drop(source, topic)
  await drop(target, topic)
}
process.exit(0)
