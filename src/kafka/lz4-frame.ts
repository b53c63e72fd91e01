/*
 * LZ4 frames as Kafka's Java client writes them (KafkaLZ4BlockOutputStream): version 01,
 * independent blocks of at most 64 KiB, header checksum, no block or content checksum, no content
 * size. The broker refuses dependent blocks ("Dependent block stream is unsupported"), which
 * lz4js' own frame writer produces; a block that does not shrink is stored uncompressed.
 */

const LZ4_MAGIC = 0x184D2204
/** Uncompressed bytes per block (block maximum size 64 KiB, BD byte 0x40). */
export const LZ4_BLOCK_BYTES = 64 * 1024
/** FLG: version 01, block independence; no checksums, no content size, no dictionary. */
const FLG = 0x60
const BD = 0x40
/** Set in a block's size word when the block is stored uncompressed. */
const UNCOMPRESSED_BIT = 0x80000000

/**
 * Compresses one block of at most `LZ4_BLOCK_BYTES` and returns the LZ4 block bytes, or
 * undefined when they would not be smaller than `block` (it is then stored as it is).
 */
export type Lz4BlockCompressor = (block: Buffer) => Buffer | undefined

/** The 7 bytes before the first block: magic, FLG, BD and the header checksum (second byte of xxh32 over FLG and BD). */
export function lz4FrameHeader (xxh32: (bytes: Uint8Array) => number): Buffer {
  const header = Buffer.alloc(7)
  header.writeUInt32LE(LZ4_MAGIC, 0)
  header[4] = FLG
  header[5] = BD
  header[6] = (xxh32(header.subarray(4, 6)) >>> 8) & 0xff
  return header
}

/** The blocks `src` is cut into, in order. */
export function lz4Blocks (src: Buffer): Buffer[] {
  const blocks: Buffer[] = []
  for (let from = 0; from < src.length; from += LZ4_BLOCK_BYTES) blocks.push(src.subarray(from, Math.min(src.length, from + LZ4_BLOCK_BYTES)))
  return blocks
}

/** One frame: `header`, each block as `compressed[i]` (or stored when undefined), the end mark. */
export function lz4Frame (header: Buffer, blocks: readonly Buffer[], compressed: ReadonlyArray<Buffer | undefined>): Buffer {
  let length = header.length + 4
  for (let i = 0; i < blocks.length; i++) length += 4 + (compressed[i] ?? blocks[i]!).length
  const out = Buffer.allocUnsafe(length)
  header.copy(out, 0)
  let at = header.length
  for (let i = 0; i < blocks.length; i++) {
    const block = compressed[i]
    if (block === undefined) {
      const stored = blocks[i]!
      out.writeUInt32LE((UNCOMPRESSED_BIT | stored.length) >>> 0, at)
      stored.copy(out, at + 4)
      at += 4 + stored.length
    } else {
      out.writeUInt32LE(block.length, at)
      block.copy(out, at + 4)
      at += 4 + block.length
    }
  }
  out.writeUInt32LE(0, at)
  return out
}
