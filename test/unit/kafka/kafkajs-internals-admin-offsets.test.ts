import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)

interface Admin { fetchTopicOffsets: (topic: string) => Promise<Array<{ partition: number, high: string, low: string }>> }
const createAdmin = require('@kafka-mirror-sidecar/kafkajs/src/admin') as (options: object) => Admin
const { KafkaJSProtocolError } = require('@kafka-mirror-sidecar/kafkajs/src/errors') as { KafkaJSProtocolError: new (error: object) => Error }
const { createErrorFromCode } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/error') as { createErrorFromCode: (code: number) => object }

const silent = { debug () {}, info () {}, warn () {}, error () {}, namespace () { return silent } }

/** A kafkajs cluster whose cached leaders are stale until `refreshMetadata()`: ListOffsets answers NOT_LEADER (code 6) before it. */
function clusterWithStaleLeaders (): { cluster: object, refreshes: () => number } {
  let refreshes = 0
  const cluster = {
    addTargetTopic: async () => {},
    refreshMetadataIfNecessary: async () => {},
    refreshMetadata: async () => { refreshes++ },
    findTopicPartitionMetadata: () => [{ partitionId: 0, leader: 1 }],
    fetchTopicsOffset: async (topics: Array<{ topic: string, fromBeginning: boolean }>) => {
      if (refreshes === 0) throw new KafkaJSProtocolError(createErrorFromCode(6))
      return topics.map(({ topic, fromBeginning }) => ({ topic, partitions: [{ partition: 0, offset: fromBeginning ? '0' : '42' }] }))
    },
  }
  return { cluster, refreshes: () => refreshes }
}

test('admin.fetchTopicOffsets answered NOT_LEADER (a leader moved) refreshes the metadata and asks again', async () => {
  const { cluster, refreshes } = clusterWithStaleLeaders()
  const admin = createAdmin({ logger: silent, cluster, retry: { retries: 2, initialRetryTime: 1 } })
  assert.deepEqual(await admin.fetchTopicOffsets('positions'), [{ partition: 0, offset: '42', high: '42', low: '0' }])
  assert.equal(refreshes(), 1)
})
