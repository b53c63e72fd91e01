import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)

interface Writer {
  writeInt16: (v: number) => Writer
  writeInt32: (v: number) => Writer
  writeString: (v: string | null) => Writer
  writeBoolean: (v: boolean) => Writer
  buffer: Buffer
}
const Encoder = require('@kafka-mirror-sidecar/kafkajs/src/protocol/encoder') as new () => Writer

interface Partition { partitionErrorCode: number, partitionId: number, leader: number, replicas: number[], isr: number[], offlineReplicas: number[] }
interface Answer {
  throttleTime: number
  clusterId: string
  controllerId: number
  brokers: Array<{ nodeId: number, host: string, port: number, rack: string | null }>
  topicMetadata: Array<{ topicErrorCode: number, topic: string, isInternal: boolean, partitionMetadata: Partition[] }>
}

/** A Metadata v5/v6 answer as a broker writes it (throttle, brokers, cluster id, controller, topics). */
function answerBytes (topics: Array<{ name: string, partitions: Array<{ leader: number, replicas: number[], isr: number[], offline: number[] }> }>): Buffer {
  const e = new Encoder()
  e.writeInt32(0)
  e.writeInt32(2)
  for (const id of [1, 2]) e.writeInt32(id).writeString('127.0.0.1').writeInt32(9090 + id).writeString(null)
  e.writeString('cluster').writeInt32(1)
  e.writeInt32(topics.length)
  for (const topic of topics) {
    e.writeInt16(0).writeString(topic.name).writeBoolean(false).writeInt32(topic.partitions.length)
    topic.partitions.forEach((p, id) => {
      e.writeInt16(0).writeInt32(id).writeInt32(p.leader)
      for (const list of [p.replicas, p.isr, p.offline]) {
        e.writeInt32(list.length)
        for (const broker of list) e.writeInt32(broker)
      }
    })
  }
  return e.buffer
}

for (const version of [5, 6]) {
  test(`Metadata v${version} answers: every partition's replica lists as the broker sent them, partitions with the same list share one array`, async () => {
    const { decode } = require(`@kafka-mirror-sidecar/kafkajs/src/protocol/requests/metadata/v${version}/response`) as {
      decode: (bytes: Buffer) => Promise<Answer>
    }
    const partitions = [
      { leader: 1, replicas: [1, 2], isr: [1, 2], offline: [] },
      { leader: 2, replicas: [2, 1], isr: [2], offline: [] },
      { leader: 1, replicas: [1, 2], isr: [1], offline: [2] },
      { leader: -1, replicas: [1, 2], isr: [], offline: [1, 2] },
    ]
    const answer = await decode(answerBytes([{ name: 'orders', partitions }, { name: 'payments', partitions }]))
    assert.equal(answer.clusterId, 'cluster')
    assert.deepEqual(answer.brokers.map(b => b.nodeId), [1, 2])
    for (const topic of answer.topicMetadata) {
      assert.deepEqual(
        topic.partitionMetadata,
        partitions.map((p, id) => ({ partitionErrorCode: 0, partitionId: id, leader: p.leader, replicas: p.replicas, isr: p.isr, offlineReplicas: p.offline }))
      )
    }
    const [orders, payments] = answer.topicMetadata.map(t => t.partitionMetadata) as [Partition[], Partition[]]
    assert.equal(orders[0]?.replicas, orders[0]?.isr, '[1, 2] once')
    assert.equal(orders[0]?.replicas, payments[3]?.offlineReplicas)
    assert.equal(orders[1]?.isr, orders[2]?.offlineReplicas, '[2] once')
    assert.notEqual(orders[0]?.replicas, orders[1]?.replicas, 'the order of a list counts: [2, 1] is not [1, 2]')
    assert.equal(orders[0]?.offlineReplicas, payments[3]?.isr, 'one empty list')

    const again = await decode(answerBytes([{ name: 'orders', partitions }]))
    assert.notEqual(again.topicMetadata[0]?.partitionMetadata[0]?.replicas, orders[0]?.replicas, 'answers share nothing with each other')
  })
}
