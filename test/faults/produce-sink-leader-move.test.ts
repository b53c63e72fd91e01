import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NodeCluster } from '../../scripts/local-kafka/clusters.js'
import { crc32c } from '../../src/kafka/crc32c.js'
import { BrokerProduceSink } from '../../src/kafka/wire/broker-produce-sink.js'
import { WireWriter } from '../../src/kafka/wire/wire-writer.js'
import { uniqueName } from '../helpers/kafka.js'

/** A v2 record batch of `count` records (no key, no headers, CreateTime), producer id -1. */
function recordBatch (count: number, label: string): Buffer {
  const timestampMs = BigInt(Date.now())
  const records = new WireWriter()
  for (let i = 0; i < count; i++) {
    const value = Buffer.from(`${label}-${i}`)
    const body = new WireWriter().int8(0).varlong(0n).varint(i).varint(-1).varint(value.length).raw(value).varint(0).toBuffer()
    records.varint(body.length).raw(body)
  }
  const afterCrc = new WireWriter()
    .int16(0).int32(count - 1).int64(timestampMs).int64(timestampMs).int64(-1n).int16(-1).int32(-1).int32(count)
    .raw(records.toBuffer()).toBuffer()
  const head = new WireWriter().int64(0n).int32(4 + 1 + 4 + afterCrc.length).int32(-1).int8(2).uint32(crc32c(afterCrc)).toBuffer()
  return Buffer.concat([head, afterCrc])
}

test('the produce sink follows leaders moved on a 3-node cluster: each batch at its exact offset, 0 missing, 0 duplicates', { timeout: 300_000 }, async t => {
  const basePort = Number(process.env.KAFKA_PRODUCE_FAULT_PORT ?? 21192)
  const cluster = new NodeCluster({ name: 'produce-sink-faults', basePort, nodes: 3 })
  await cluster.start()
  t.after(() => cluster.stop())
  const topic = uniqueName('produce-leaders')
  await cluster.withAdmin(admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 3 }] }))
  await cluster.waitUntilIsrFull([topic])

  const sink = new BrokerProduceSink({
    bootstrap: cluster.nodes.map(node => ({ host: node.bootstrap.split(':')[0]!, port: Number(node.bootstrap.split(':')[1]) })),
    connection: { clientId: 'produce-sink-faults' },
  })
  t.after(() => sink.stop())
  await sink.start()

  let moved = false
  const sending = [0, 1, 2].map(async partition => {
    const sizes: number[] = []
    const offsets: bigint[] = []
    // Three batches at a time (several in flight when a leader moves), until ten rounds after every leader moved.
    for (let afterMove = 0; afterMove < 10; afterMove += moved ? 1 : 0) {
      const round = [0, 1, 2].map(j => 1 + ((sizes.length + j) % 7))
      const results = await Promise.all(round.map((size, j) => sink.send(topic, partition, recordBatch(size, `p${partition}-b${sizes.length + j}`))))
      sizes.push(...round)
      offsets.push(...results.map(result => result.baseOffset))
    }
    return { sizes, offsets }
  })
  const moves = await cluster.moveLeaders(topic)
  moved = true
  assert.ok(moves.every(move => move.after >= 0 && move.after !== move.before), `every leader moved: ${JSON.stringify(moves)}`)
  const sent = await Promise.all(sending)
  sink.checkInvariants()

  const totals = sent.map(({ sizes, offsets }, partition) => {
    const expected = sizes.map((_, i) => BigInt(sizes.slice(0, i).reduce((sum, size) => sum + size, 0)))
    assert.deepEqual(offsets, expected, `partition ${partition}: every batch once, at its exact offset`)
    return [partition, String(sizes.reduce((sum, size) => sum + size, 0))]
  })
  const ends = await cluster.withAdmin(admin => admin.fetchTopicOffsets(topic))
  assert.deepEqual(ends.map(end => [end.partition, end.high]).sort(), totals, 'the log holds what was sent, nothing more')
})
