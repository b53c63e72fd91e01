/** Bytes that end before a value they announce: the frame is cut short or was written for another version. */
export class WireFormatError extends Error {
  override readonly name = 'WireFormatError'
}

/**
 * Reads Kafka's primitive types from one buffer (a response body). Bytes and records are views of
 * that buffer, never copies: whoever keeps one keeps the whole frame alive, so it copies what it keeps long.
 */
export class WireReader {
  position: number

  constructor (readonly buffer: Buffer, offset = 0, readonly end = buffer.length) {
    this.position = offset
  }

  get remaining (): number {
    return this.end - this.position
  }

  #take (bytes: number): number {
    const at = this.position
    if (bytes < 0 || at + bytes > this.end) throw new WireFormatError(`${bytes} bytes wanted at offset ${at}, ${this.end - at} left`)
    this.position = at + bytes
    return at
  }

  bool (): boolean { return this.int8() !== 0 }
  int8 (): number { return this.buffer.readInt8(this.#take(1)) }
  int16 (): number { return this.buffer.readInt16BE(this.#take(2)) }
  uint16 (): number { return this.buffer.readUInt16BE(this.#take(2)) }
  int32 (): number { return this.buffer.readInt32BE(this.#take(4)) }
  uint32 (): number { return this.buffer.readUInt32BE(this.#take(4)) }
  int64 (): bigint { return this.buffer.readBigInt64BE(this.#take(8)) }
  float64 (): number { return this.buffer.readDoubleBE(this.#take(8)) }

  uvarint (): number {
    let value = 0
    for (let shift = 0; shift <= 28; shift += 7) {
      const byte = this.buffer[this.#take(1)]!
      value += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) return value
    }
    throw new WireFormatError(`unsigned varint longer than 5 bytes before offset ${this.position}`)
  }

  varint (): number {
    const raw = this.uvarint()
    return (raw >>> 1) ^ -(raw & 1)
  }

  varlong (): bigint {
    let raw = 0n
    for (let shift = 0n; shift <= 63n; shift += 7n) {
      const byte = this.buffer[this.#take(1)]!
      raw |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return BigInt.asIntN(64, (raw >> 1n) ^ -(raw & 1n))
    }
    throw new WireFormatError(`varlong longer than 10 bytes before offset ${this.position}`)
  }

  uuid (): string {
    const at = this.#take(16)
    return this.buffer.toString('base64url', at, at + 16)
  }

  /** A view of the next `length` bytes. */
  raw (length: number): Buffer {
    const at = this.#take(length)
    return this.buffer.subarray(at, at + length)
  }

  string (compact: boolean): string | null {
    const length = compact ? this.uvarint() - 1 : this.int16()
    if (length < 0) return null
    const at = this.#take(length)
    return this.buffer.toString('utf8', at, at + length)
  }

  bytes (compact: boolean): Buffer | null {
    const length = compact ? this.uvarint() - 1 : this.int32()
    return length < 0 ? null : this.raw(length)
  }

  /** An array's length, or null. */
  arrayLength (compact: boolean): number | null {
    const length = compact ? this.uvarint() - 1 : this.int32()
    if (length < 0) return null
    // Each element takes at least one byte: a larger count is a corrupt frame, caught before anything is allocated for it.
    if (length > this.remaining) throw new WireFormatError(`array of ${length} elements at offset ${this.position}, ${this.remaining} bytes left`)
    return length
  }
}
