/** Buffers at least this long are kept by reference by `WireWriter.raw`, not copied into the writer's own buffer. */
const BY_REFERENCE_BYTES = 4096

/**
 * Writes Kafka's primitive types big-endian into a growing buffer. Large byte strings (record batches)
 * are kept by reference, so a request is a list of chunks (`chunks()`) that a socket writes as they are:
 * the bytes of a produced batch are never copied into the request.
 */
export class WireWriter {
  #buffer: Buffer
  #position = 0
  /** Finished chunks before `#buffer`. */
  readonly #chunks: Buffer[] = []
  #chunkBytes = 0

  constructor (initialBytes = 256) {
    this.#buffer = Buffer.allocUnsafe(initialBytes)
  }

  /** Bytes written so far. */
  get length (): number {
    return this.#chunkBytes + this.#position
  }

  #reserve (bytes: number): Buffer {
    if (this.#position + bytes > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#position + bytes))
      this.#buffer.copy(grown, 0, 0, this.#position)
      this.#buffer = grown
    }
    return this.#buffer
  }

  bool (value: boolean): this { return this.int8(value ? 1 : 0) }
  int8 (value: number): this { this.#reserve(1).writeInt8(value, this.#position); this.#position += 1; return this }
  int16 (value: number): this { this.#reserve(2).writeInt16BE(value, this.#position); this.#position += 2; return this }
  uint16 (value: number): this { this.#reserve(2).writeUInt16BE(value, this.#position); this.#position += 2; return this }
  int32 (value: number): this { this.#reserve(4).writeInt32BE(value, this.#position); this.#position += 4; return this }
  uint32 (value: number): this { this.#reserve(4).writeUInt32BE(value, this.#position); this.#position += 4; return this }
  int64 (value: bigint): this { this.#reserve(8).writeBigInt64BE(value, this.#position); this.#position += 8; return this }
  float64 (value: number): this { this.#reserve(8).writeDoubleBE(value, this.#position); this.#position += 8; return this }

  /** Unsigned varint (protobuf's base-128, at most 5 bytes): compact lengths and tagged-field headers (KIP-482). */
  uvarint (value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`unsigned varint ${value}: expected an integer from 0 to 2^32-1`)
    const buffer = this.#reserve(5)
    let rest = value
    while (rest >= 0x80) {
      buffer[this.#position++] = (rest & 0x7f) | 0x80
      rest = Math.floor(rest / 128)
    }
    buffer[this.#position++] = rest
    return this
  }

  /** Signed zigzag varint (the record format's int32 fields). */
  varint (value: number): this {
    return this.uvarint(((value << 1) ^ (value >> 31)) >>> 0)
  }

  /** Signed zigzag varlong (the record format's int64 fields), at most 10 bytes. */
  varlong (value: bigint): this {
    let rest = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n))
    const buffer = this.#reserve(10)
    while (rest >= 0x80n) {
      buffer[this.#position++] = Number(rest & 0x7fn) | 0x80
      rest >>= 7n
    }
    buffer[this.#position++] = Number(rest)
    return this
  }

  /** A Kafka uuid from its text form (url-safe base64 of its 16 bytes, as `Uuid.toString` writes it). */
  uuid (value: string): this {
    const bytes = Buffer.from(value, 'base64url')
    if (bytes.length !== 16) throw new RangeError(`uuid "${value}": expected 22 characters of url-safe base64 (16 bytes)`)
    return this.raw(bytes)
  }

  /** Bytes as they are: copied when small, else kept by reference (the caller must not change them until the request is written). */
  raw (bytes: Buffer): this {
    if (bytes.length >= BY_REFERENCE_BYTES) {
      this.#flush()
      this.#chunks.push(bytes)
      this.#chunkBytes += bytes.length
      return this
    }
    bytes.copy(this.#reserve(bytes.length), this.#position)
    this.#position += bytes.length
    return this
  }

  /** A string (int16 length, -1 for null) or, `compact`, a compact string (unsigned varint length + 1, 0 for null). */
  string (value: string | null, compact: boolean): this {
    if (value === null) return compact ? this.uvarint(0) : this.int16(-1)
    const bytes = Buffer.from(value, 'utf8')
    if (compact) this.uvarint(bytes.length + 1)
    else if (bytes.length > 0x7fff) throw new RangeError(`string of ${bytes.length} bytes: longer than the 32767 an int16 length allows`)
    else this.int16(bytes.length)
    return this.raw(bytes)
  }

  /** Bytes (int32 length, -1 for null) or, `compact`, compact bytes (unsigned varint length + 1, 0 for null). */
  bytes (value: Buffer | null, compact: boolean): this {
    if (value === null) return compact ? this.uvarint(0) : this.int32(-1)
    if (compact) this.uvarint(value.length + 1)
    else this.int32(value.length)
    return this.raw(value)
  }

  /** An array's length: int32 (-1 for null) or, `compact`, unsigned varint length + 1 (0 for null). */
  arrayLength (length: number | null, compact: boolean): this {
    if (length === null) return compact ? this.uvarint(0) : this.int32(-1)
    return compact ? this.uvarint(length + 1) : this.int32(length)
  }

  #flush (): void {
    if (this.#position === 0) return
    this.#chunks.push(this.#buffer.subarray(0, this.#position))
    this.#chunkBytes += this.#position
    this.#buffer = Buffer.allocUnsafe(Math.max(256, this.#buffer.length - this.#position))
    this.#position = 0
  }

  /** What was written, as chunks in order (the writer must not be used afterwards). */
  chunks (): Buffer[] {
    this.#flush()
    return this.#chunks
  }

  /** What was written, as one buffer. */
  toBuffer (): Buffer {
    const chunks = this.chunks()
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#chunkBytes)
  }
}
