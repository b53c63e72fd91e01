import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { crc32c, crc32cImplementation } from './crc32c.js'
import { useKafkajsCrc32c } from './kafkajs-internals.js'
import { compressLz4Block, lz4BlockBound } from './lz4-block.js'
import { LZ4_BLOCK_BYTES, lz4Blocks, lz4Frame, lz4FrameHeader } from './lz4-frame.js'
import { type Implementation, loadNative, type NativeLoader, requireNative } from './native-loader.js'

const { CompressionCodecs, CompressionTypes } = kafkajs

/** kafkajs codec shape: `compress` receives an encoder whose `buffer` holds the record set. */
export interface KafkaCodec {
  compress: (encoder: { buffer: Buffer }) => Promise<Buffer>
  decompress: (buffer: Buffer) => Promise<Buffer>
}

/** A codec and whether it runs native code or the JavaScript fallback. */
export interface LoadedCodec {
  readonly codec: KafkaCodec
  readonly implementation: Implementation
}

/**
 * `native` with `fallback` behind its decompression: a batch the native decoder refuses is given
 * to the JavaScript one before it counts as corrupt, so nothing that was readable before is not now.
 */
function withFallbackDecompress (native: KafkaCodec, fallback: () => KafkaCodec): KafkaCodec {
  return {
    compress: native.compress,
    async decompress (buffer) {
      try {
        return await native.decompress(buffer)
      } catch {
        // The native decoder refused the data: the JavaScript one decides, and throws if it is bad.
        return await fallback().decompress(buffer)
      }
    },
  }
}

// ---- zstd ----------------------------------------------------------------------------------

/** The compression level of Kafka's producer default (`compression.zstd.level`, KIP-390). */
const ZSTD_LEVEL = 3

interface ZstdStreaming {
  compress: (bytes: Uint8Array, level?: number) => Uint8Array | null
  decompress: (bytes: Uint8Array) => Uint8Array | null
}

/** zstd-codec is WebAssembly and starts asynchronously: initialise it once, on first use. */
let zstdStreaming: Promise<ZstdStreaming> | undefined
function zstdWasm (): Promise<ZstdStreaming> {
  zstdStreaming ??= new Promise(resolve => {
    const { ZstdCodec } = requireNative('zstd-codec') as { ZstdCodec: { run: (f: (z: { Streaming: new () => ZstdStreaming }) => void) => void } }
    ZstdCodec.run(z => resolve(new z.Streaming()))
  })
  return zstdStreaming
}

/** zstd in WebAssembly (zstd-codec): the fallback. */
export const zstdJsCodec: KafkaCodec = {
  async compress (encoder) {
    const out = (await zstdWasm()).compress(encoder.buffer, ZSTD_LEVEL)
    if (out === null) throw new Error('zstd compression failed')
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
  },
  // The streaming decoder also reads frames without a content size, as the Java client writes them.
  async decompress (buffer) {
    const out = (await zstdWasm()).decompress(buffer)
    if (out === null) throw new Error('zstd decompression failed: corrupt or truncated frame')
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
  },
}

interface NodeZstd {
  Encoder: new (level: number) => { encode: (data: Buffer) => Promise<Buffer> }
  Decoder: new () => { decode: (data: Buffer) => Promise<Buffer> }
}

/**
 * zstd from @toondepauw/node-zstd (libzstd through napi-rs, on libuv's thread pool), else the
 * WebAssembly one. Its decoder is libzstd's streaming one: frames without a content size (the
 * Java client's) and several frames in a row are read.
 */
export function loadZstdCodec (loader: NativeLoader = requireNative): LoadedCodec {
  const native = loadNative<NodeZstd>('@toondepauw/node-zstd', loader)
  if (native === undefined) return { codec: zstdJsCodec, implementation: 'javascript' }
  const encoder = new native.Encoder(ZSTD_LEVEL)
  const decoder = new native.Decoder()
  const codec: KafkaCodec = {
    compress: async source => await encoder.encode(source.buffer),
    decompress: async buffer => await decoder.decode(buffer),
  }
  return { codec: withFallbackDecompress(codec, () => zstdJsCodec), implementation: 'native' }
}

// ---- lz4 -----------------------------------------------------------------------------------

type Xxh32 = (seed: number, src: Uint8Array, index: number, length: number) => number

let lz4Header: Buffer | undefined
function frameHeader (): Buffer {
  const xxh32 = (requireNative('lz4js/xxh32.js') as { hash: Xxh32 }).hash
  lz4Header ??= lz4FrameHeader(bytes => xxh32(0, bytes, 0, bytes.length))
  return lz4Header
}

let lz4Js: KafkaCodec | undefined
/**
 * LZ4 in JavaScript: blocks from `compressLz4Block` written straight into the frame (see
 * lz4-frame.ts for the format), decoded by lz4js. The fallback.
 */
export function lz4JsCodec (): KafkaCodec {
  if (lz4Js !== undefined) return lz4Js
  const lz4 = requireNative('lz4js') as { decompress: (b: Uint8Array) => Uint8Array }
  const header = frameHeader()
  const hashTable = new Int32Array(1 << 16)
  const blockBuffer = Buffer.alloc(lz4BlockBound(LZ4_BLOCK_BYTES))
  lz4Js = {
    async compress (encoder) {
      const src = encoder.buffer
      const out = Buffer.allocUnsafe(header.length + src.length + Math.ceil(src.length / LZ4_BLOCK_BYTES + 1) * 4 + 16)
      header.copy(out, 0)
      let at = header.length
      for (let from = 0; from < src.length; from += LZ4_BLOCK_BYTES) {
        const length = Math.min(LZ4_BLOCK_BYTES, src.length - from)
        const compressed = compressLz4Block(src.subarray(from, from + length), blockBuffer, hashTable)
        if (compressed === 0 || compressed >= length) {
          out.writeUInt32LE((0x80000000 | length) >>> 0, at)
          src.copy(out, at + 4, from, from + length)
          at += 4 + length
        } else {
          out.writeUInt32LE(compressed, at)
          blockBuffer.copy(out, at + 4, 0, compressed)
          at += 4 + compressed
        }
      }
      out.writeUInt32LE(0, at)
      return out.subarray(0, at + 4)
    },
    async decompress (buffer) {
      const out = lz4.decompress(buffer)
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
    },
  }
  return lz4Js
}

interface Lz4Napi {
  /** One LZ4 block after a 4-byte little-endian uncompressed size (lz4_flex `compress_prepend_size`). */
  compress: (data: Uint8Array) => Promise<Buffer>
  decompressFrame: (data: Uint8Array) => Promise<Buffer>
}

/** Bytes before the block in what lz4-napi's `compress` returns: the uncompressed size. */
const LZ4_NAPI_SIZE_PREFIX = 4

/**
 * LZ4 from lz4-napi (lz4_flex through napi-rs, on libuv's thread pool), else JavaScript. The
 * frame is written here, block by block as the JavaScript codec does (lz4-napi's own frame writer
 * uses 256 KiB blocks, not the Java client's 64 KiB); its frame decoder reads every frame variant.
 */
export function loadLz4Codec (loader: NativeLoader = requireNative): LoadedCodec {
  const native = loadNative<Lz4Napi>('lz4-napi', loader)
  if (native === undefined) return { codec: lz4JsCodec(), implementation: 'javascript' }
  const header = frameHeader()
  const codec: KafkaCodec = {
    async compress (encoder) {
      const blocks = lz4Blocks(encoder.buffer)
      const compressed = await Promise.all(blocks.map(async block => {
        const sized = await native.compress(block)
        return sized.length - LZ4_NAPI_SIZE_PREFIX < block.length ? sized.subarray(LZ4_NAPI_SIZE_PREFIX) : undefined
      }))
      return lz4Frame(header, blocks, compressed)
    },
    decompress: async buffer => await native.decompressFrame(buffer),
  }
  return { codec: withFallbackDecompress(codec, lz4JsCodec), implementation: 'native' }
}

// ---- snappy --------------------------------------------------------------------------------

/** The stream header of xerial snappy-java's framing, which Kafka's Java client writes. */
const XERIAL_HEADER = Buffer.from([130, 83, 78, 65, 80, 80, 89, 0])
/** Header, version and compatible version (int32 each) come before the first chunk. */
const XERIAL_FIRST_CHUNK = 16

let snappyJs: KafkaCodec | undefined
/** Snappy in JavaScript (kafkajs-snappy over snappyjs): the fallback. */
export function snappyJsCodec (): KafkaCodec {
  snappyJs ??= (requireNative('kafkajs-snappy') as () => KafkaCodec)()
  return snappyJs
}

interface NapiSnappy {
  compress: (input: Uint8Array) => Promise<Buffer>
  uncompress: (input: Uint8Array) => Promise<string | Buffer>
}

/**
 * Snappy from the `snappy` package (Rust snap through napi-rs, on libuv's thread pool), else
 * JavaScript. Written as kafkajs-snappy writes it (one raw block, which the Java client reads);
 * read as raw block or in xerial framing (a sequence of big-endian length-prefixed raw blocks).
 */
export function loadSnappyCodec (loader: NativeLoader = requireNative): LoadedCodec {
  const native = loadNative<NapiSnappy>('snappy', loader)
  if (native === undefined) return { codec: snappyJsCodec(), implementation: 'javascript' }
  const uncompress = async (block: Buffer): Promise<Buffer> => await native.uncompress(block) as Buffer
  const codec: KafkaCodec = {
    compress: async encoder => await native.compress(encoder.buffer),
    async decompress (buffer) {
      if (buffer.length < XERIAL_HEADER.length || !buffer.subarray(0, XERIAL_HEADER.length).equals(XERIAL_HEADER)) return await uncompress(buffer)
      const chunks: Buffer[] = []
      for (let at = XERIAL_FIRST_CHUNK; at + 4 <= buffer.length;) {
        const size = buffer.readUInt32BE(at)
        chunks.push(buffer.subarray(at + 4, at + 4 + size))
        at += 4 + size
      }
      return Buffer.concat(await Promise.all(chunks.map(uncompress)))
    },
  }
  return { codec: withFallbackDecompress(codec, snappyJsCodec), implementation: 'native' }
}

// ---- registration --------------------------------------------------------------------------

/**
 * Which implementation each codec kafkajs was given runs, and which CRC-32C its record batch
 * encoder runs.
 */
export interface CodecImplementations {
  readonly snappy: Implementation
  readonly lz4: Implementation
  readonly zstd: Implementation
  readonly crc32c: Implementation
}

let registered: CodecImplementations | undefined

/**
 * Registers snappy, lz4 and zstd with kafkajs (it ships only gzip, whose node:zlib is native
 * already) and gives its record batch encoder our CRC-32C: native code where the platform's
 * prebuilt binary loads, else JavaScript. A mirror must read every codec: a batch in an
 * unregistered codec cannot be consumed at all. Idempotent.
 */
export function registerCodecs (): CodecImplementations {
  if (registered !== undefined) return registered
  const snappy = loadSnappyCodec()
  const lz4 = loadLz4Codec()
  const zstd = loadZstdCodec()
  const codecs = CompressionCodecs as Record<number, () => KafkaCodec>
  codecs[CompressionTypes.Snappy] = () => snappy.codec
  codecs[CompressionTypes.LZ4] = () => lz4.codec
  codecs[CompressionTypes.ZSTD] = () => zstd.codec
  useKafkajsCrc32c(crc32c)
  registered = Object.freeze({ snappy: snappy.implementation, lz4: lz4.implementation, zstd: zstd.implementation, crc32c: crc32cImplementation })
  return registered
}
