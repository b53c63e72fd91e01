import { createRequire } from 'node:module'
import kafkajs from 'kafkajs'

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

function lz4Codec (): Codec {
  const lz4 = require('lz4js') as { compress: (b: Uint8Array) => Uint8Array, decompress: (b: Uint8Array) => Uint8Array }
  return {
    async compress (encoder) {
      const out = lz4.compress(encoder.buffer)
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
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
