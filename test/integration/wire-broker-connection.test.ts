import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { test } from 'node:test'
import { ErrorCodes, MirrorError } from '../../src/shared/errors.js'
import { crc32c } from '../../src/kafka/crc32c.js'
import { BATCH_OFFSETS, batchCrc } from '../../src/kafka/record-batch-header.js'
import { knownVersions, UNSUPPORTED_VERSION, type WireApi } from '../../src/kafka/wire/api-versions.js'
import { BrokerConnection } from '../../src/kafka/wire/broker-connection.js'
import { FrameReader } from '../../src/kafka/wire/frame-reader.js'
import { decodeMessage, encodeMessage } from '../../src/kafka/wire/message-codec.js'
import type { MessageSchema } from '../../src/kafka/wire/message-schema.js'
import { REQUEST_HEADER_SCHEMA, RESPONSE_HEADER_SCHEMA, WIRE_API_SCHEMAS } from '../../src/kafka/wire/schemas/wire-api-schemas.js'
import { WireReader } from '../../src/kafka/wire/wire-reader.js'
import { WireWriter } from '../../src/kafka/wire/wire-writer.js'
import { createTopic, sharedClusters, uniqueName } from '../helpers/kafka.js'

async function started (t: { after: (fn: () => Promise<void>) => void }, port: number, requestTimeoutMs?: number): Promise<BrokerConnection> {
  const connection = new BrokerConnection({ host: '127.0.0.1', port, clientId: 'wire-test', ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }) })
  await connection.start()
  t.after(() => connection.stop())
  return connection
}

/** A v2 record batch of `values` (no key, no headers, CreateTime), written with the wire layer's varints; producer id -1. */
function recordBatch (values: readonly string[], timestampMs: bigint): Buffer {
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

test('ApiVersions negotiates each API, Metadata names the topic\'s leader, and a produced record batch fetches back byte for byte', async t => {
  const { source } = await sharedClusters()
  const port = Number(source.bootstrap.split(':')[1])
  const topic = await createTopic(t, source)
  const connection = await started(t, port)

  // KIP-35: the broker's own list, read at v0 (no tagged fields), against what was negotiated at the newest version.
  const listed = await connection.send('ApiVersions', {}, { version: 0 })
  for (const api of Object.keys(WIRE_API_SCHEMAS) as WireApi[]) {
    const broker = listed.apiKeys.find(entry => entry.apiKey === WIRE_API_SCHEMAS[api].request.apiKey)
    const expected = broker === undefined ? undefined : Math.min(knownVersions(api)[1], broker.maxVersion)
    assert.equal(connection.versionOf(api), expected, api)
  }
  assert.ok(connection.versionOf('Fetch')! >= 13 && connection.versionOf('Metadata')! >= 12, 'a 4.x broker speaks flexible versions with topic ids')

  const metadata = await connection.send('Metadata', { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: topic }], allowAutoTopicCreation: false })
  const described = metadata.topics.find(entry => entry.name === topic)
  assert.equal(described?.errorCode, 0)
  assert.deepEqual(described.partitions.map(partition => partition.partitionIndex), [0])
  const leader = described.partitions[0]!.leaderId
  assert.deepEqual(metadata.brokers.map(broker => [broker.nodeId, broker.port]), [[leader, port]])
  const topicId = described.topicId!

  const batch = recordBatch(['one', 'two', 'three'], BigInt(Date.now()))
  assert.equal(batchCrc(batch).stored, batchCrc(batch).computed)
  const produced = await connection.send('Produce', {
    transactionalId: null,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, topicId, partitionData: [{ index: 0, records: batch }] }],
  })
  const written = produced.responses[0]!.partitionResponses[0]!
  assert.equal(written.errorCode, 0)
  assert.equal(written.baseOffset, 0n)

  const fetched = await connection.send('Fetch', {
    maxWaitMs: 100,
    minBytes: 1,
    maxBytes: 1024 * 1024,
    isolationLevel: 0,
    topics: [{ topic, topicId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1024 * 1024 }] }],
    forgottenTopicsData: [],
    rackId: '',
  })
  assert.equal(fetched.errorCode, 0)
  const partition = fetched.responses[0]!.partitions[0]!
  assert.equal(partition.errorCode, 0)
  assert.equal(partition.highWatermark, 3n)
  const records = partition.records!
  // The broker writes the batch's offset and partition leader epoch (outside the CRC); every other byte is the producer's.
  assert.equal(records.length, batch.length)
  assert.equal(records.readBigInt64BE(BATCH_OFFSETS.baseOffset), 0n)
  assert.deepEqual(records.subarray(BATCH_OFFSETS.magic), batch.subarray(BATCH_OFFSETS.magic))
  const lengthField = [BATCH_OFFSETS.length, BATCH_OFFSETS.partitionLeaderEpoch] as const
  assert.deepEqual(records.subarray(...lengthField), batch.subarray(...lengthField))
})

test('pipelined requests each get their own response, in order, on one connection', async t => {
  const { source } = await sharedClusters()
  const connection = await started(t, Number(source.bootstrap.split(':')[1]))
  const names = Array.from({ length: 25 }, (_, i) => uniqueName(`absent-${i}`))
  const responses = await Promise.all(names.map(name => connection.send('Metadata', { topics: [{ name }], allowAutoTopicCreation: false })))
  assert.deepEqual(responses.map(response => response.topics.map(topic => [topic.name, topic.errorCode])), names.map(name => [[name, 3]]))
})

test('a request without a response in time closes the connection and fails what is in flight, retriable; stop() fails requests as stopped', async t => {
  const { source } = await sharedClusters()
  const port = Number(source.bootstrap.split(':')[1])
  const topic = await createTopic(t, source)
  const parked = {
    maxWaitMs: 20_000,
    minBytes: 1,
    maxBytes: 1024,
    isolationLevel: 0,
    topics: [{ topic, topicId: '', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1024 }] }],
    forgottenTopicsData: [],
    rackId: '',
  }
  const slow = await started(t, port, 500)
  const metadata = await slow.send('Metadata', { topics: [{ name: topic }], allowAutoTopicCreation: false })
  parked.topics[0]!.topicId = metadata.topics[0]!.topicId!
  // The broker holds a fetch of an empty partition for maxWaitMs (20 s), far beyond the 500 ms request timeout.
  await assert.rejects(
    slow.send('Fetch', parked),
    (error: MirrorError) => error.code === ErrorCodes.CONNECTION && error.retriable && /no response within 500 ms/.test(error.message)
  )
  await assert.rejects(slow.send('Metadata', { topics: [], allowAutoTopicCreation: false }), (error: MirrorError) => error.code === ErrorCodes.CONNECTION)

  const stopped = await started(t, port)
  const pending = stopped.send('Fetch', parked)
  await stopped.stop()
  await assert.rejects(pending, (error: MirrorError) => error instanceof MirrorError && error.code === ErrorCodes.STOPPED)
  await assert.rejects(stopped.start(), /started twice, or after stop\(\)/)
})

/** Sends `frames` (each a whole request with its size prefix) on a fresh socket and resolves with the first `count` response frames. */
function rawExchange (port: number, frames: readonly Buffer[], count: number): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const received: Buffer[] = []
    const socket = connect({ host: '127.0.0.1', port })
    const reader = new FrameReader(frame => {
      received.push(Buffer.from(frame))
      if (received.length === count) {
        socket.destroy()
        resolve(received)
      }
    }, 1024 * 1024)
    socket.on('data', chunk => reader.push(chunk))
    socket.on('error', reject)
    socket.on('connect', () => { for (const frame of frames) socket.write(frame) })
  })
}

function requestFrame (apiKey: number, apiVersion: number, correlationId: number, headerVersion: number, body: (writer: WireWriter) => void): Buffer {
  const writer = new WireWriter()
  encodeMessage(REQUEST_HEADER_SCHEMA, headerVersion, { requestApiKey: apiKey, requestApiVersion: apiVersion, correlationId, clientId: 'raw' }, writer)
  body(writer)
  const bytes = writer.toBuffer()
  return Buffer.concat([new WireWriter().int32(bytes.length).toBuffer(), bytes])
}

test('a broker\'s own bytes: ApiVersions (header v0 even when flexible, KIP-511) and Metadata responses decode and re-encode to the same bytes', async t => {
  const { source } = await sharedClusters()
  const port = Number(source.bootstrap.split(':')[1])
  const topic = await createTopic(t, source)
  const apiVersions = WIRE_API_SCHEMAS.ApiVersions
  const metadata = WIRE_API_SCHEMAS.Metadata
  const [apiVersions3, unsupported, metadata12] = await rawExchange(port, [
    requestFrame(18, 3, 1, 2, writer => encodeMessage(apiVersions.request, 3, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }, writer)),
    // KIP-511: a version the broker does not know gets UNSUPPORTED_VERSION in a v0 body naming the versions it does.
    requestFrame(18, 0x7fff, 2, 2, writer => writer.uvarint(0)),
    requestFrame(3, 12, 3, 2, writer => {
      encodeMessage(metadata.request, 12, { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: topic }], allowAutoTopicCreation: false }, writer)
    }),
  ], 3)

  const check = <T>(frame: Buffer, headerVersion: number, schema: MessageSchema<T>, version: number): T => {
    const reader = new WireReader(frame)
    const header = decodeMessage(RESPONSE_HEADER_SCHEMA, headerVersion, reader)
    const body = decodeMessage(schema, version, reader)
    assert.equal(reader.remaining, 0, `${schema.name} v${version}: bytes left`)
    const again = encodeMessage(RESPONSE_HEADER_SCHEMA, headerVersion, header).toBuffer()
    assert.deepEqual(Buffer.concat([again, encodeMessage(schema, version, body).toBuffer()]), frame, `${schema.name} v${version} written again`)
    return body
  }
  const versions = check(apiVersions3!, 0, apiVersions.response, 3)
  assert.equal(versions.errorCode, 0)
  assert.ok((versions.finalizedFeaturesEpoch ?? -1n) >= 0n, 'a KRaft broker sends its finalized features epoch as a tagged field')
  const refused = check(unsupported!, 0, apiVersions.response, 0)
  assert.equal(refused.errorCode, UNSUPPORTED_VERSION)
  assert.ok(refused.apiKeys.some(api => api.apiKey === 18 && api.maxVersion >= 3))
  const described = check(metadata12!, 1, metadata.response, 12)
  assert.deepEqual(described.topics.map(entry => [entry.name, entry.errorCode, entry.partitions.length]), [[topic, 0, 1]])
})
