import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { toMirrorError } from '../../../src/kafka/errors.js'

const require = createRequire(import.meta.url)

interface Cluster {
  brokerPool: object
  metadata: (options?: { topics?: string[] }) => Promise<unknown>
}
const ClusterClass = require('@kafka-mirror-sidecar/kafkajs/src/cluster') as new (options: object) => Cluster
const silent = { debug () {}, info () {}, warn () {}, error () {}, namespace () { return silent } }

/** A kafkajs cluster whose broker pool tried every broker and none answered (kafkajs' `withBroker` then answers null). */
function clusterWithNoBrokerAnswering (): Cluster {
  const cluster = new ClusterClass({ logger: silent, brokers: ['127.0.0.1:1'], retry: { retries: 0 } })
  cluster.brokerPool = { refreshMetadataIfNecessary: async () => {}, withBroker: async () => null }
  return cluster
}

test('a Metadata request no broker answered fails as a connection failure the mirror retries, not as a TypeError', async () => {
  const error = await clusterWithNoBrokerAnswering().metadata({ topics: [] }).then(() => undefined, (e: unknown) => e)
  assert.ok(error instanceof Error, 'the request fails')
  assert.equal(error.name, 'KafkaJSBrokerNotFound', error.message)
  const converted = toMirrorError(error, 'listing topics')
  assert.equal(converted.retriable, true)
})
