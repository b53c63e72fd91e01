import { createRequire } from 'node:module'
import kafkajs from 'kafkajs'
import { compressLz4Block, lz4BlockBound } from './lz4-block.js'

const require = createRequire(import.meta.url)
const { CompressionCodecs, CompressionTypes } = kafkajs

/** kafkajs codec shape: `compress` receives an encoder whose `buffer` holds the record set. */
interface Codec {
  compress: (encoder: { buffer: Buffer }) => Promise<Buffer>
  decompress: (buffer: Buffer) => Promise<Buffer>
}

interface ZstdStreaming {
  compress: (bytes: Uint8Array, level?: number) => Uint8Array | null
  decompress: (bytes: Uint8Array) => Uint8Array | null
}

/** zstd-codec is WebAssembly and starts asynchronously: initialise it once, on first use. */
let zstdStreaming: Promise<ZstdStreaming> | undefined
function zstd (): Promise<ZstdStreaming> {
  zstdStreaming ??= new Promise(resolve => {
    const { ZstdCodec } = require('zstd-codec') as { ZstdCodec: { run: (f: (z: { Streaming: new () => ZstdStreaming }) => void) => void } }
    ZstdCodec.run(z => resolve(new z.Streaming()))
  })
  return zstdStreaming
}

function zstdCodec (): Codec {
  return {
    async compress (encoder) {
      const out = (await zstd()).compress(encoder.buffer, 3)
      if (out === null) throw new Error('zstd compression failed')
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
    },
    // The streaming decoder also reads frames without a content size, as the Java client writes them.
    async decompress (buffer) {
      const out = (await zstd()).decompress(buffer)
      if (out === null) throw new Error('zstd decompression failed: corrupt or truncated frame')
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
    },
  }
}

interface Lz4Js {
  decompress: (b: Uint8Array) => Uint8Array
}

const LZ4_MAGIC = 0x184D2204
const LZ4_BLOCK_BYTES = 64 * 1024

/**
 * LZ4 frames as Kafka's Java client writes them: independent 64 KiB blocks (the broker refuses
 * dependent blocks, which lz4js' own frame writer produces), header checksum, no content checksum.
 * Blocks come from `compressLz4Block`; lz4js only decodes.
 */
function lz4Codec (): Codec {
  const lz4 = require('lz4js') as Lz4Js
  const xxh32 = (require('lz4js/xxh32.js') as { hash: (seed: number, src: Uint8Array, index: number, length: number) => number }).hash
  const hashTable = new Int32Array(1 << 16)
  const blockBuffer = Buffer.alloc(lz4BlockBound(LZ4_BLOCK_BYTES))
  return {
    async compress (encoder) {
      const src = encoder.buffer
      const out = Buffer.allocUnsafe(7 + src.length + Math.ceil(src.length / LZ4_BLOCK_BYTES + 1) * 4 + 16)
      out.writeUInt32LE(LZ4_MAGIC, 0)
      out[4] = 0x60 // version 01, block independence
      out[5] = 0x40 // max block size 64 KiB
      out[6] = (xxh32(0, out, 4, 2) >> 8) & 0xff
      let at = 7
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
}

let registered = false

/**
 * Registers snappy, lz4 and zstd with kafkajs (it ships only gzip). A mirror must read every codec:
 * a batch in an unregistered codec cannot be consumed at all. Idempotent.
 */
export function registerCodecs (): void {
  if (registered) return
  registered = true
  const codecs = CompressionCodecs as Record<number, () => Codec>
  codecs[CompressionTypes.Snappy] = require('kafkajs-snappy') as () => Codec
  codecs[CompressionTypes.LZ4] = lz4Codec
  codecs[CompressionTypes.ZSTD] = zstdCodec
}
