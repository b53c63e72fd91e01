#!/usr/bin/env node
/**
 * The README's first command: two local clusters, a steady trickle of sample records into the
 * source, and the sidecar mirroring them to the target in the foreground. Ctrl-C stops it cleanly.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createKafkaClient } from '../src/kafka/client.js'
import { clustersUp, LocalKafkaError } from './local-kafka/clusters.js'
import { clustersHome } from './local-kafka/paths.js'

const TOPICS = [{ topic: 'demo.orders', numPartitions: 3 }, { topic: 'demo.payments', numPartitions: 2 }]
const RECORDS_PER_SECOND = Number(process.env.DEMO_RATE ?? 50)
const METRICS_PORT = Number(process.env.MIRROR_METRICS_PORT ?? 9464)

async function main (): Promise<void> {
  console.log('starting the local clusters (the first run fetches Kafka with Maven)...')
  const { source, target } = await clustersUp()
  console.log(`source cluster: ${source.bootstrap}   target cluster: ${target.bootstrap}`)

  const kafka = createKafkaClient(source.connection('demo-producer'))
  const admin = kafka.admin()
  await admin.connect()
  const existing = new Set(await admin.listTopics())
  await admin.createTopics({ waitForLeaders: true, topics: TOPICS.filter(t => !existing.has(t.topic)).map(t => ({ ...t, replicationFactor: 1 })) })
  await admin.disconnect()

  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  let sequence = 0
  const trickle = setInterval(() => {
    const messages = Array.from({ length: Math.max(1, Math.round(RECORDS_PER_SECOND / 10)) }, () => {
      sequence++
      return {
        key: `customer-${sequence % 97}`,
        value: JSON.stringify({ id: sequence, amount: (sequence * 7) % 1000, at: new Date().toISOString() }),
        headers: { source: 'demo' },
      }
    })
    producer
      .sendBatch({ topicMessages: TOPICS.map(t => ({ topic: t.topic, messages })) })
      .catch(error => console.error('demo producer:', (error as Error).message))
  }, 100)

  const dir = join(clustersHome(), 'demo')
  mkdirSync(dir, { recursive: true })
  const consumerConfig = join(dir, 'source.properties')
  const producerConfig = join(dir, 'target.properties')
  writeFileSync(consumerConfig, `bootstrap.servers=${source.bootstrap}\ngroup.id=demo-mirror\nauto.offset.reset=earliest\n`)
  writeFileSync(producerConfig, `bootstrap.servers=${target.bootstrap}\nacks=all\ncompression.type=lz4\n`)

  const sidecarBin = fileURLToPath(new URL('../src/bin/mirror-sidecar.js', import.meta.url))
  const args = ['--consumer.config', consumerConfig, '--producer.config', producerConfig, '--whitelist', 'demo\\..*',
    '--offset.commit.interval.ms', '5000', '--metrics.port', String(METRICS_PORT), '--metrics.host', '127.0.0.1']
  console.log(`\nmirror-sidecar ${args.join(' ')}\n`)
  console.log('Where to look:')
  console.log(`  metrics    http://127.0.0.1:${METRICS_PORT}/metrics`)
  console.log(`  health     http://127.0.0.1:${METRICS_PORT}/healthz   ready: http://127.0.0.1:${METRICS_PORT}/readyz`)
  console.log(`  lag        node dist/src/check/mirror-check.js --bootstrap-server ${source.bootstrap} --group demo-mirror`)
  console.log(`  verify     node dist/src/check/mirror-check.js verify --source ${source.bootstrap} --target ${target.bootstrap} --topic demo.orders`)
  console.log('  dashboard  grafana/kafka-mirror-sidecar.json (import into Grafana with a Prometheus datasource)')
  console.log(`producing ${RECORDS_PER_SECOND} records/s into ${TOPICS.map(t => t.topic).join(', ')}; Ctrl-C stops the demo\n`)

  // Own process group: Ctrl-C reaches the demo only, which asks the sidecar to drain exactly once.
  const sidecar = spawn(process.execPath, [sidecarBin, ...args], { stdio: 'inherit', detached: true })
  let stopping = false
  const stop = (): void => {
    if (stopping) { sidecar.kill('SIGKILL'); return }
    stopping = true
    clearInterval(trickle)
    sidecar.kill('SIGTERM')
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  const code = await new Promise<number>(resolve => sidecar.once('exit', (c, signal) => resolve(c ?? (signal === null ? 1 : 130))))
  clearInterval(trickle)
  await producer.disconnect()
  console.log(`\nsidecar exited with ${code}; the clusters keep running (npm run clusters:down stops them)`)
  process.exitCode = code
}

main().catch((error: unknown) => {
  console.error(error instanceof LocalKafkaError ? `demo: ${error.message}` : error)
  process.exitCode = 2
})
