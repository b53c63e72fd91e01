import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { test, type TestContext } from 'node:test'
import { crc32c } from '../../src/kafka/crc32c.js'
import { BATCH_OFFSETS, BATCH_PREFIX_BYTES, batchForTarget } from '../../src/kafka/record-batch-header.js'
import { BrokerConnection } from '../../src/kafka/wire/broker-connection.js'
import { BrokerProduceSink } from '../../src/kafka/wire/broker-produce-sink.js'
import { produceRequest, produceResults } from '../../src/kafka/wire/produce-request-builder.js'
import { WireWriter } from '../../src/kafka/wire/wire-writer.js'
import { createTopic, sharedClusters } from '../helpers/kafka.js'

/** A v2 record batch of `values` (no key, no headers, CreateTime) as a source producer would write it (producer id -1). */
function recordBatch (values: readonly string[]): Buffer {
  const timestampMs = BigInt(Date.now())
  const records = new WireWriter()
  values.forEach((value, i) => {
    const body = new WireWriter().int8(0).varlong(0n).varint(i).varint(-1).varint(Buffer.byteLength(value)).raw(Buffer.from(value)).varint(0).toBuffer()
    records.varint(body.length).raw(body)
  })
  const afterCrc = new WireWriter()
    .int16(0).int32(values.length - 1).int64(timestampMs).int64(timestampMs).int64(-1n).int16(-1).int32(-1).int32(values.length)
    .raw(records.toBuffer()).toBuffer()
  const head = new WireWriter().int64(0n).int32(4 + 1 + 4 + afterCrc.length).int32(-1).int8(2).uint32(crc32c(afterCrc)).toBuffer()
  return Buffer.concat([head, afterCrc])
}

async function connected (t: TestContext, port: number): Promise<BrokerConnection> {
  const connection = new BrokerConnection({ host: '127.0.0.1', port, clientId: 'produce-sink-test' })
  await connection.start()
  t.after(() => connection.stop())
  return connection
}

/** Every batch of `topic`-`partition` from offset 0, fetched on our own connection, as the broker stores it. */
async function fetchBatches (connection: BrokerConnection, topic: string, partition: number): Promise<Buffer[]> {
  const metadata = await connection.send('Metadata', { topics: [{ name: topic }], allowAutoTopicCreation: false })
  const fetched = await connection.send('Fetch', {
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 8 * 1024 * 1024,
    isolationLevel: 0,
    topics: [{ topic, topicId: metadata.topics[0]!.topicId!, partitions: [{ partition, fetchOffset: 0n, partitionMaxBytes: 8 * 1024 * 1024 }] }],
    forgottenTopicsData: [],
    rackId: '',
  })
  const data = fetched.responses[0]!.partitions[0]!
  assert.equal(data.errorCode, 0)
  const batches: Buffer[] = []
  const records = data.records ?? Buffer.alloc(0)
  for (let at = 0; at < records.length;) {
    const end = at + BATCH_PREFIX_BYTES + records.readInt32BE(at + BATCH_OFFSETS.length)
    batches.push(records.subarray(at, end))
    at = end
  }
  return batches
}

function startedSink (t: TestContext, port: number): BrokerProduceSink {
  const sink = new BrokerProduceSink({ bootstrap: [{ host: '127.0.0.1', port }], connection: { clientId: 'produce-sink-test' } })
  t.after(() => sink.stop())
  return sink
}

test('the sink writes batches to their leaders with our producer id and sequences, byte for byte, and answers each batch\'s exact base offset', async t => {
  const { target } = await sharedClusters()
  const port = Number(target.bootstrap.split(':')[1])
  const topic = await createTopic(t, target, { partitions: 3 })
  const sink = startedSink(t, port)
  await sink.start()
  const { producerId, epoch } = sink.producer
  assert.ok(producerId >= 0n)

  // Seven batches per partition sent at once: more than the 5 a partition may have in flight.
  const sizes = [3, 1, 4, 1, 5, 9, 2]
  const sent = [0, 1, 2].map(partition => sizes.map((size, i) => recordBatch(Array.from({ length: size }, (_, r) => `p${partition}-b${i}-r${r}`))))
  const produced = await Promise.all(sent.map((batches, partition) => Promise.all(batches.map(batch => sink.send(topic, partition, batch)))))
  sink.checkInvariants()

  const starts = sizes.map((_, i) => BigInt(sizes.slice(0, i).reduce((sum, size) => sum + size, 0)))
  const reader = await connected(t, port)
  for (const partition of [0, 1, 2]) {
    assert.deepEqual(produced[partition]!.map(result => result.baseOffset), starts, `partition ${partition}: each batch's own base offset`)
    const stored = await fetchBatches(reader, topic, partition)
    assert.equal(stored.length, sizes.length, `partition ${partition}: every batch once`)
    stored.forEach((batch, i) => {
      const fields = { producerId, producerEpoch: epoch, baseSequence: Number(starts[i]), transactional: false }
      const expected = Buffer.concat(batchForTarget(sent[partition]![i]!, fields))
      assert.equal(batch.readBigInt64BE(BATCH_OFFSETS.baseOffset), starts[i])
      const from = BATCH_OFFSETS.magic
      assert.deepEqual(batch.subarray(from), expected.subarray(from), `partition ${partition} batch ${i}: bytes from the magic byte on`)
    })
  }
})

test('a first bootstrap broker that refuses connections: the sink starts through the next one and writes', async t => {
  const { target } = await sharedClusters()
  const port = Number(target.bootstrap.split(':')[1])
  const topic = await createTopic(t, target, { partitions: 1 })
  const refusing = await closedPort()
  const sink = new BrokerProduceSink({
    bootstrap: [{ host: '127.0.0.1', port: refusing }, { host: '127.0.0.1', port }],
    connection: { clientId: 'produce-sink-test' },
  })
  t.after(() => sink.stop())
  await sink.start()
  assert.ok(sink.producer.producerId >= 0n)
  const produced = await sink.send(topic, 0, recordBatch(['a', 'b']))
  assert.equal(produced.baseOffset, 0n)
  const reader = await connected(t, port)
  assert.equal((await fetchBatches(reader, topic, 0)).length, 1)
})

test('no bootstrap broker reachable: the start fails with the connection error, after asking each once', async () => {
  const sink = new BrokerProduceSink({
    bootstrap: [{ host: '127.0.0.1', port: await closedPort() }, { host: '127.0.0.1', port: await closedPort() }],
    connection: { clientId: 'produce-sink-test' },
  })
  try {
    await assert.rejects(sink.start(), /ECONNREFUSED/)
  } finally {
    await sink.stop()
  }
})

/** A loopback port nothing listens on: bound once, then closed. */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

test('a batch resent with the same producer id, epoch and sequence is answered with its first offset and held once', async t => {
  const { target } = await sharedClusters()
  const port = Number(target.bootstrap.split(':')[1])
  const topic = await createTopic(t, target)
  const connection = await connected(t, port)
  const metadata = await connection.send('Metadata', { topics: [{ name: topic }], allowAutoTopicCreation: false })
  const topicId = metadata.topics[0]!.topicId!
  const init = await connection.send('InitProducerId', { transactionalId: null, transactionTimeoutMs: 60_000 })
  assert.equal(init.errorCode, 0)
  const fields = { producerId: init.producerId, producerEpoch: init.producerEpoch }
  const names = new Map([[topicId, topic]])
  const produceOnce = async (bytes: Buffer, baseSequence: number): Promise<{ errorCode: number, baseOffset: bigint }> => {
    const request = produceRequest([{ batch: { topic, topicId, partition: 0, bytes, crcChecked: false }, fields: { ...fields, baseSequence } }], 10_000)
    const [result] = produceResults(await connection.send('Produce', request), names)
    assert.equal(result?.topic, topic)
    return { errorCode: result.errorCode, baseOffset: result.baseOffset }
  }

  const first = recordBatch(['a', 'b', 'c'])
  const second = recordBatch(['d', 'e'])
  assert.deepEqual(await produceOnce(first, 0), { errorCode: 0, baseOffset: 0n })
  assert.deepEqual(await produceOnce(first, 0), { errorCode: 0, baseOffset: 0n }, 'the resend is answered with the offset the batch has')
  assert.deepEqual(await produceOnce(second, 3), { errorCode: 0, baseOffset: 3n })
  const stored = await fetchBatches(connection, topic, 0)
  assert.deepEqual(stored.map(batch => [batch.readBigInt64BE(BATCH_OFFSETS.baseOffset), batch.readInt32BE(BATCH_OFFSETS.recordCount)]), [[0n, 3], [3n, 2]])
})

test('KIP-360: when the broker\'s sequence does not continue the sink\'s (OUT_OF_ORDER_SEQUENCE_NUMBER), the sink bumps the epoch and writes once', async t => {
  const { target } = await sharedClusters()
  const port = Number(target.bootstrap.split(':')[1])
  const topic = await createTopic(t, target)
  const sink = startedSink(t, port)
  await sink.start()
  assert.equal((await sink.send(topic, 0, recordBatch(['a', 'b']))).baseOffset, 0n)
  const before = sink.producer

  // Another writer with the sink's producer id takes the sequences 2-3: the sink's next batch (sequence 2) no longer continues the broker's.
  const connection = await connected(t, port)
  const topicId = (await connection.send('Metadata', { topics: [{ name: topic }], allowAutoTopicCreation: false })).topics[0]!.topicId!
  const fields = { producerId: before.producerId, producerEpoch: before.epoch, baseSequence: 2 }
  const stolen = produceRequest([{ batch: { topic, topicId, partition: 0, bytes: recordBatch(['x', 'y']), crcChecked: false }, fields }], 10_000)
  assert.equal(produceResults(await connection.send('Produce', stolen), new Map([[topicId, topic]]))[0]?.errorCode, 0)

  const after = await sink.send(topic, 0, recordBatch(['c']))
  assert.equal(after.baseOffset, 4n)
  assert.notDeepEqual(sink.producer, before, 'InitProducerId gave a new producer id or epoch')
  sink.checkInvariants()
  const stored = await fetchBatches(connection, topic, 0)
  const where = stored.map(batch => [batch.readBigInt64BE(BATCH_OFFSETS.baseOffset), batch.readInt32BE(BATCH_OFFSETS.baseSequence)])
  assert.deepEqual(where, [[0n, 0], [2n, 2], [4n, 0]], 'the sink\'s second batch once, at sequence 0 of its new producer id or epoch')
})
