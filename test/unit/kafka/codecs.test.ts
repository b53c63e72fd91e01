import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import {
  type KafkaCodec,
  loadLz4Codec,
  loadSnappyCodec,
  loadZstdCodec,
  lz4JsCodec,
  registerCodecs,
  snappyJsCodec,
  zstdJsCodec,
} from '../../../src/kafka/codecs.js'
import { requireNative, type NativeLoader } from '../../../src/kafka/native-loader.js'

/** A platform without the prebuilt binary: napi-rs packages throw at load there. */
const noNative: NativeLoader = name => { throw new Error(`Cannot find native binding for ${name}`) }

/** Records of about 512 bytes as a Kafka record set would hold them: JSON with some random text. */
function recordSet (bytes: number): Buffer {
  const parts: Buffer[] = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const part = Buffer.from(JSON.stringify({ id: i, customer: `customer-${i % 97}`, note: randomBytes(150).toString('base64') }).padEnd(512, ' '))
    parts.push(part)
    length += part.length
  }
  return Buffer.concat(parts).subarray(0, bytes)
}

const SAMPLES: Array<[string, Buffer]> = [
  ['empty', Buffer.alloc(0)],
  ['one byte', Buffer.from('x')],
  ['a short record', Buffer.from('key-1:value-value-value-1')],
  ['64 KiB - 1 of records', recordSet(64 * 1024 - 1)],
  ['64 KiB of records', recordSet(64 * 1024)],
  ['64 KiB + 1 of records', recordSet(64 * 1024 + 1)],
  ['256 KiB of records', recordSet(256 * 1024)],
  ['200 KiB random (incompressible)', randomBytes(200 * 1024)],
  ['1 MiB of zeros', Buffer.alloc(1024 * 1024)],
]

const CODECS: Array<{ name: string, load: (loader?: NativeLoader) => { codec: KafkaCodec, implementation: string }, js: () => KafkaCodec }> = [
  { name: 'lz4', load: loadLz4Codec, js: lz4JsCodec },
  { name: 'snappy', load: loadSnappyCodec, js: snappyJsCodec },
  { name: 'zstd', load: loadZstdCodec, js: () => zstdJsCodec },
]

for (const { name, load, js } of CODECS) {
  test(`${name}: the native codec loads here and round-trips; what it writes the JavaScript one reads, and the other way round`, async () => {
    const native = load()
    assert.equal(native.implementation, 'native', `${name}: this platform (linux x64 glibc) has a prebuilt binary`)
    for (const [label, bytes] of SAMPLES) {
      const byNative = await native.codec.compress({ buffer: bytes })
      const byJs = await js().compress({ buffer: bytes })
      assert.ok((await native.codec.decompress(byNative)).equals(bytes), `${name} ${label}: native -> native`)
      assert.ok((await js().decompress(byNative)).equals(bytes), `${name} ${label}: native -> JavaScript`)
      assert.ok((await native.codec.decompress(byJs)).equals(bytes), `${name} ${label}: JavaScript -> native`)
    }
  })

  test(`${name}: without the native module the JavaScript codec is used`, async () => {
    const requested: string[] = []
    const loaded = load(packageName => { requested.push(packageName); return noNative(packageName) })
    assert.equal(requested.length, 1, 'the native package was asked for')
    assert.equal(loaded.implementation, 'javascript')
    assert.equal(loaded.codec, js())
    const bytes = recordSet(100_000)
    assert.ok((await loaded.codec.decompress(await loaded.codec.compress({ buffer: bytes }))).equals(bytes))
  })
}

/** The blocks of an LZ4 frame: [size word, stored?] each, after checking the frame header. */
function lz4FrameBlocks (frame: Buffer): Array<{ bytes: number, stored: boolean }> {
  assert.equal(frame.readUInt32LE(0), 0x184D2204, 'LZ4 frame magic')
  assert.equal(frame[4], 0x60, 'FLG: version 01, independent blocks, no checksums, no content size')
  assert.equal(frame[5], 0x40, 'BD: 64 KiB blocks')
  const blocks: Array<{ bytes: number, stored: boolean }> = []
  for (let at = 7; ;) {
    const word = frame.readUInt32LE(at)
    if (word === 0) { assert.equal(at + 4, frame.length, 'nothing after the end mark'); return blocks }
    const bytes = word & 0x7FFFFFFF
    blocks.push({ bytes, stored: (word & 0x80000000) !== 0 })
    at += 4 + bytes
  }
}

test('lz4: the native codec writes the frame Kafka\'s Java client writes (independent 64 KiB blocks, header as the JavaScript codec\'s)', async () => {
  const { codec } = loadLz4Codec()
  const records = recordSet(256 * 1024)
  const frame = await codec.compress({ buffer: records })
  const blocks = lz4FrameBlocks(frame)
  assert.equal(blocks.length, 4)
  assert.ok(blocks.every(block => !block.stored && block.bytes < 64 * 1024))
  assert.ok(frame.subarray(0, 7).equals((await lz4JsCodec().compress({ buffer: records })).subarray(0, 7)), 'same 7 header bytes, checksum included')
  const random = randomBytes(100 * 1024)
  assert.deepEqual(
    lz4FrameBlocks(await codec.compress({ buffer: random })),
    [
      { bytes: 64 * 1024, stored: true },
      { bytes: 36 * 1024, stored: true },
    ],
    'incompressible blocks are stored'
  )
})

test('zstd: a frame without a content size (as the Java client writes) is read by the native and the JavaScript codec', async () => {
  const { codec } = loadZstdCodec()
  const records = recordSet(256 * 1024)
  for (const frame of [await codec.compress({ buffer: records }), await zstdJsCodec.compress({ buffer: records })]) {
    assert.equal(frame.readUInt32LE(0), 0xFD2FB528, 'zstd magic')
    assert.equal(frame[4]! & 0xE0, 0, 'frame header descriptor: no content size, not single-segment')
    assert.ok((await codec.decompress(frame)).equals(records))
    assert.ok((await zstdJsCodec.decompress(frame)).equals(records))
  }
  const two = Buffer.concat([await codec.compress({ buffer: Buffer.from('first ') }), await codec.compress({ buffer: Buffer.from('second') })])
  assert.equal(String(await codec.decompress(two)), 'first second', 'frames in a row are read as one stream')
})

test('snappy: xerial framing (what the Java client writes) is read by the native and the JavaScript codec', async () => {
  const { codec } = loadSnappyCodec()
  const records = recordSet(100_000)
  const chunks = [records.subarray(0, 32 * 1024), records.subarray(32 * 1024, 64 * 1024), records.subarray(64 * 1024)]
  const header = Buffer.from([130, 83, 78, 65, 80, 80, 89, 0, 0, 0, 0, 1, 0, 0, 0, 1])
  const framed = Buffer.concat([header, ...await Promise.all(chunks.map(async chunk => {
    const raw = await codec.compress({ buffer: chunk })
    const size = Buffer.alloc(4)
    size.writeUInt32BE(raw.length)
    return Buffer.concat([size, raw])
  }))])
  assert.ok((await codec.decompress(framed)).equals(records), 'native')
  assert.ok((await snappyJsCodec().decompress(framed)).equals(records), 'JavaScript')
})

test('a batch the native decoder refuses is read by the JavaScript one before it counts as corrupt', async () => {
  const records = recordSet(80_000)
  const refusing: NativeLoader = name => {
    const real = requireNative(name) as Record<string, unknown>
    if (name === 'lz4-napi') return { ...real, decompressFrame: async () => { throw new Error('refused') } }
    if (name === 'snappy') return { ...real, uncompress: async () => { throw new Error('refused') } }
    const Zstd = real as { Encoder: unknown, Decoder: new () => object }
    return { Encoder: Zstd.Encoder, Decoder: class { async decode (): Promise<Buffer> { throw new Error('refused') } } }
  }
  for (const { name, load } of CODECS) {
    const { codec, implementation } = load(refusing)
    assert.equal(implementation, 'native')
    assert.ok((await codec.decompress(await codec.compress({ buffer: records }))).equals(records), name)
    await assert.rejects(codec.decompress(Buffer.from('not a frame at all, in no codec')), `${name}: both refuse garbage`)
  }
})

test('registerCodecs gives kafkajs every codec and says which implementation each runs', () => {
  assert.deepEqual({ ...registerCodecs() }, { snappy: 'native', lz4: 'native', zstd: 'native', crc32c: 'native' })
  assert.equal(registerCodecs(), registerCodecs(), 'idempotent')
})
