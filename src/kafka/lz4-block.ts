const MIN_MATCH = 4
/** The last 5 bytes of a block are literals (LZ4 block format). */
const LAST_LITERALS = 5
/** The last match starts at least 12 bytes before the end of the block. */
const MF_LIMIT = 12
const MAX_OFFSET = 65_535

function writeLength (dst: Uint8Array, at: number, rest: number): number {
  while (rest >= 255) { dst[at++] = 255; rest -= 255 }
  dst[at++] = rest
  return at
}

/** Worst-case size of a compressed block of `length` bytes. */
export function lz4BlockBound (length: number): number {
  return length + Math.ceil(length / 255) + 16
}

/**
 * Compresses `src` into one LZ4 block (greedy hash matching, no dictionary) and returns its size.
 * Written for Kafka: lz4js' block encoder lets the last match run into the final 12 bytes, which
 * Kafka's (and the reference) decoder refuse.
 */
export function compressLz4Block (src: Buffer, dst: Buffer, table: Int32Array): number {
  const length = src.length
  table.fill(-1)
  let ip = 0
  let anchor = 0
  let op = 0
  const lastMatchStart = length - MF_LIMIT
  const matchEndLimit = length - LAST_LITERALS
  while (ip <= lastMatchStart) {
    const sequence = src.readUInt32LE(ip)
    const hash = Math.imul(sequence, 2654435761) >>> 16
    const ref = table[hash] as number
    table[hash] = ip
    if (ref < 0 || ip - ref > MAX_OFFSET || src.readUInt32LE(ref) !== sequence) {
      ip += 1 + ((ip - anchor) >> 6)
      continue
    }
    let matchLength = MIN_MATCH
    while (ip + matchLength < matchEndLimit && src[ip + matchLength] === src[ref + matchLength]) matchLength++
    const literals = ip - anchor
    const token = op++
    if (literals >= 15) op = writeLength(dst, op, literals - 15)
    src.copy(dst, op, anchor, ip)
    op += literals
    const offset = ip - ref
    dst[op++] = offset & 0xff
    dst[op++] = offset >> 8
    const extra = matchLength - MIN_MATCH
    if (extra >= 15) op = writeLength(dst, op, extra - 15)
    dst[token] = (Math.min(literals, 15) << 4) | Math.min(extra, 15)
    ip += matchLength
    anchor = ip
  }
  const literals = length - anchor
  const token = op++
  if (literals >= 15) op = writeLength(dst, op, literals - 15)
  dst[token] = Math.min(literals, 15) << 4
  src.copy(dst, op, anchor, length)
  return op + literals
}
