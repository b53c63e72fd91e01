import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeMessage, encodeMessage, UNKNOWN_TAGGED_FIELDS, WireEncodeError } from '../../../../src/kafka/wire/message-codec.js'
import { inVersions, type FieldSchema, type FieldType, type MessageSchema } from '../../../../src/kafka/wire/message-schema.js'
import { REQUEST_HEADER_SCHEMA, RESPONSE_HEADER_SCHEMA, WIRE_API_SCHEMAS } from '../../../../src/kafka/wire/schemas/wire-api-schemas.js'
import { WireFormatError, WireReader } from '../../../../src/kafka/wire/wire-reader.js'
import { WireWriter } from '../../../../src/kafka/wire/wire-writer.js'

/** mulberry32: a seeded generator, so that a failing round trip can be replayed from its seed. */
function random (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

const TEXT = ['', 'a', 'topic-1', 'é', '🦀 mirror', 'x'.repeat(200)]

/** A random value of `schema`'s fields in `version`: every field of the version, nulls where it allows them, tagged fields at their default or not. */
function randomStruct (fields: readonly FieldSchema[], version: number, next: () => number, flexible: boolean, depth: number): Record<string, unknown> {
  const struct: Record<string, unknown> = {}
  for (const field of fields) {
    if (!inVersions(field.versions, version)) continue
    const tagged = field.tag !== undefined && inVersions(field.taggedVersions, version)
    if (inVersions(field.nullableVersions, version) && next() < 0.25) struct[field.name] = null
    else struct[field.name] = randomValue(field.type, version, next, flexible, depth)
    if (tagged && next() < 0.3) struct[field.name] = field.default ?? struct[field.name]
  }
  if (flexible && next() < 0.2) struct[UNKNOWN_TAGGED_FIELDS] = [{ tag: 1000, data: Buffer.from([1, 2, 3]) }, { tag: 70_000, data: Buffer.alloc(0) }]
  return struct
}

function randomValue (type: FieldType, version: number, next: () => number, flexible: boolean, depth: number): unknown {
  const int = (bits: number, signed = true): number => {
    const value = Math.floor(next() * 2 ** bits)
    return signed ? value - 2 ** (bits - 1) : value
  }
  if (typeof type !== 'string') {
    if ('arrayOf' in type) {
      const length = depth > 3 ? 0 : Math.floor(next() * 4)
      return Array.from({ length }, () => randomValue(type.arrayOf, version, next, flexible, depth + 1))
    }
    return randomStruct(type.fields, version, next, flexible, depth + 1)
  }
  switch (type) {
    case 'bool': return next() < 0.5
    case 'int8': return int(8)
    case 'int16': return int(16)
    case 'uint16': return int(16, false)
    case 'int32': return int(32)
    case 'uint32': return int(32, false)
    case 'int64': return BigInt.asIntN(64, (BigInt(int(32, false)) << 32n) | BigInt(int(32, false)))
    case 'float64': return (next() - 0.5) * 1e12
    case 'string': return TEXT[Math.floor(next() * TEXT.length)]!
    case 'uuid': return Buffer.from(Array.from({ length: 16 }, () => int(8, false))).toString('base64url')
    case 'bytes':
    case 'records': return Buffer.from(Array.from({ length: Math.floor(next() * 40) }, () => int(8, false)))
  }
}

function versionsOf (schema: MessageSchema): number[] {
  const [min, max] = schema.validVersions
  return Array.from({ length: max - min + 1 }, (_, i) => min + i)
}

const ALL_SCHEMAS: MessageSchema[] = [
  ...Object.values(WIRE_API_SCHEMAS).flatMap(api => [api.request, api.response] as MessageSchema[]),
  REQUEST_HEADER_SCHEMA as MessageSchema,
  RESPONSE_HEADER_SCHEMA as MessageSchema,
]

test('every version of every message the wire layer speaks reads back what was written: every field, tagged fields, nulls, unknown tags', () => {
  let roundTrips = 0
  for (const schema of ALL_SCHEMAS) {
    for (const version of versionsOf(schema)) {
      const flexible = inVersions(schema.flexibleVersions, version)
      for (let seed = 0; seed < 12; seed++) {
        const value = randomStruct(schema.fields, version, random(seed * 7919 + version), flexible, 0)
        const bytes = encodeMessage(schema, version, value).toBuffer()
        const reader = new WireReader(bytes)
        const decoded = decodeMessage(schema, version, reader)
        const where = `${schema.name} v${version} seed ${seed}`
        assert.equal(reader.remaining, 0, `${where}: bytes left after the message`)
        assert.deepEqual(decoded, value, where)
        assert.deepEqual(encodeMessage(schema, version, decoded).toBuffer(), bytes, `${where}: written again, other bytes`)
        roundTrips++
      }
    }
  }
  assert.ok(roundTrips > 2000, `${roundTrips} round trips`)
})

test('a message cut short at any byte is a WireFormatError, never another error or a value', () => {
  for (const schema of ALL_SCHEMAS) {
    const version = schema.validVersions[1]
    const value = randomStruct(schema.fields, version, random(version), inVersions(schema.flexibleVersions, version), 0)
    const bytes = encodeMessage(schema, version, value).toBuffer()
    for (let end = 0; end < bytes.length; end++) {
      const where = `${schema.name} v${version} cut at ${end} of ${bytes.length}`
      assert.throws(() => decodeMessage(schema, version, new WireReader(bytes, 0, end)), WireFormatError, where)
    }
  }
})

test('request header v2 writes the client id as a non-compact string as v1 does (KIP-482: read before the request\'s version is known), then tags', () => {
  const header = { requestApiKey: 18, requestApiVersion: 3, correlationId: 1, clientId: 'c' }
  assert.equal(encodeMessage(REQUEST_HEADER_SCHEMA, 1, header).toBuffer().toString('hex'), '0012000300000001' + '000163')
  assert.equal(encodeMessage(REQUEST_HEADER_SCHEMA, 2, header).toBuffer().toString('hex'), '0012000300000001' + '000163' + '00')
  assert.equal(encodeMessage(REQUEST_HEADER_SCHEMA, 2, { ...header, clientId: null }).toBuffer().toString('hex'), '0012000300000001' + 'ffff' + '00')
})

test('flexible versions write compact strings and a tagged-field section; a tagged field at its default is left out (KIP-482, KIP-511)', () => {
  const { request, response } = WIRE_API_SCHEMAS.ApiVersions
  const written = encodeMessage(request, 3, { clientSoftwareName: 'a', clientSoftwareVersion: 'b' }).toBuffer()
  assert.equal(written.toString('hex'), '0261' + '0262' + '00')
  const base = { errorCode: 0, apiKeys: [{ apiKey: 1, minVersion: 4, maxVersion: 18 }], throttleTimeMs: 0 }
  assert.equal(encodeMessage(response, 3, base).toBuffer().toString('hex'), '0000' + '02' + '00010004001200' + '00000000' + '00')
  // finalizedFeaturesEpoch (tag 1, int64) set: one tagged field of 8 bytes.
  assert.equal(
    encodeMessage(response, 3, { ...base, finalizedFeaturesEpoch: 5n }).toBuffer().toString('hex'),
    '0000' + '02' + '00010004001200' + '00000000' + '01' + '01' + '08' + '0000000000000005'
  )
  assert.equal(encodeMessage(response, 3, { ...base, finalizedFeaturesEpoch: -1n }).toBuffer().toString('hex').slice(-2), '00')
})

test('a value the version cannot carry is a WireEncodeError naming the field: a null where none is allowed, a field the version lacks', () => {
  const { request } = WIRE_API_SCHEMAS.Metadata
  assert.throws(
    () => encodeMessage(request, 0, { topics: null }),
    (error: Error) => error instanceof WireEncodeError && /MetadataRequest\.topics is null/.test(error.message)
  )
  // KIP-345: a static member's instance id cannot be sent to a broker older than JoinGroup v5; Kafka's own client refuses the same way.
  const join = WIRE_API_SCHEMAS.JoinGroup.request
  const member = { groupId: 'g', sessionTimeoutMs: 45_000, rebalanceTimeoutMs: 60_000, memberId: '', protocolType: 'consumer', protocols: [] }
  assert.throws(
    () => encodeMessage(join, 4, { ...member, groupInstanceId: 'pod-0' }),
    (error: Error) => error instanceof WireEncodeError && /JoinGroupRequest\.groupInstanceId is not in version 4/.test(error.message)
  )
  assert.doesNotThrow(() => encodeMessage(join, 4, { ...member, groupInstanceId: null }))
  // An ignorable field the version lacks is left out: Produce v13 names topics by id, not by name (KIP-516).
  const produce = WIRE_API_SCHEMAS.Produce.request
  const request13 = { transactionalId: null, acks: -1, timeoutMs: 1 }
  const topic = { name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData: [] }
  assert.deepEqual(
    decodeMessage(produce, 13, new WireReader(encodeMessage(produce, 13, { ...request13, topicData: [topic] }).toBuffer())).topicData,
    [{ topicId: topic.topicId, partitionData: [] }]
  )
  assert.throws(() => encodeMessage(produce, 99, { transactionalId: null, acks: -1, timeoutMs: 1, topicData: [] }), /ProduceRequest has no version 99/)
})

test('varints and varlongs: the bytes of Kafka\'s ByteUtils for edge values, and back', () => {
  const unsigned: Array<[number, string]> = [
    [0, '00'], [1, '01'], [127, '7f'], [128, '8001'], [300, 'ac02'], [2 ** 31 - 1, 'ffffffff07'], [2 ** 32 - 1, 'ffffffff0f'],
  ]
  for (const [value, hex] of unsigned) {
    assert.equal(new WireWriter().uvarint(value).toBuffer().toString('hex'), hex, `uvarint ${value}`)
    assert.equal(new WireReader(Buffer.from(hex, 'hex')).uvarint(), value)
  }
  const signed: Array<[number, string]> = [[0, '00'], [-1, '01'], [1, '02'], [-64, '7f'], [64, '8001'], [2 ** 31 - 1, 'feffffff0f'], [-(2 ** 31), 'ffffffff0f']]
  for (const [value, hex] of signed) {
    assert.equal(new WireWriter().varint(value).toBuffer().toString('hex'), hex, `varint ${value}`)
    assert.equal(new WireReader(Buffer.from(hex, 'hex')).varint(), value)
  }
  const longs: Array<[bigint, string]> = [[0n, '00'], [-1n, '01'], [2n ** 63n - 1n, 'feffffffffffffffff01'], [-(2n ** 63n), 'ffffffffffffffffff01']]
  for (const [value, hex] of longs) {
    assert.equal(new WireWriter().varlong(value).toBuffer().toString('hex'), hex, `varlong ${value}`)
    assert.equal(new WireReader(Buffer.from(hex, 'hex')).varlong(), value)
  }
  assert.throws(() => new WireReader(Buffer.from('ffffffffff01', 'hex')).uvarint(), WireFormatError)
})

test('bytes of 4 KiB and more are written by reference: the request\'s chunks hold the caller\'s buffer, not a copy', () => {
  const batch = Buffer.alloc(8192, 7)
  const writer = new WireWriter().int32(1).bytes(batch, false).int16(2)
  const chunks = writer.chunks()
  assert.ok(chunks.includes(batch))
  assert.deepEqual(Buffer.concat(chunks), Buffer.concat([Buffer.from('00000001' + '00002000', 'hex'), batch, Buffer.from('0002', 'hex')]))
})

test('records written from chunks are the bytes of the same records as one buffer, in every Produce version; large chunks by reference', () => {
  const { request } = WIRE_API_SCHEMAS.Produce
  const header = Buffer.alloc(61, 3)
  const records = Buffer.alloc(8192, 9)
  for (let version = request.validVersions[0]; version <= request.validVersions[1]; version++) {
    const produce = (data: Buffer | readonly Buffer[]): WireWriter => encodeMessage(request, version, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [{ name: 'orders', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData: [{ index: 3, records: data }] }],
    })
    const chunked = produce([header, records])
    const chunks = chunked.chunks()
    assert.ok(chunks.includes(records), `v${version}: the records are a chunk of the request`)
    assert.deepEqual(Buffer.concat(chunks), produce(Buffer.concat([header, records])).toBuffer(), `v${version}`)
  }
})

test('decoded bytes and records are views of the response, not copies', () => {
  const { response } = WIRE_API_SCHEMAS.SaslAuthenticate
  const bytes = encodeMessage(response, 1, { errorCode: 0, errorMessage: null, authBytes: Buffer.from('token'), sessionLifetimeMs: 0n }).toBuffer()
  const decoded = decodeMessage(response, 1, new WireReader(bytes))
  assert.equal(decoded.authBytes.buffer, bytes.buffer)
})
