import { WireFormatError } from './wire-reader.js'

/**
 * Cuts a TCP stream into Kafka frames (an int32 size, then that many bytes) and hands each frame's
 * bytes on. A frame that lies inside one received chunk is handed as a view of that chunk (no copy);
 * one spread over several chunks is copied once, chunk by chunk as they arrive, into a buffer of its
 * size. Invariant: every byte is handed on in exactly one frame, in order.
 */
export class FrameReader {
  /** Bytes of a size prefix split between chunks. */
  #sizeBytes = Buffer.alloc(4)
  #sizeFilled = 0
  /** The frame being filled across chunks, and how much of it is. */
  #frame: Buffer | undefined
  #frameFilled = 0

  /** `maxFrameBytes`: a larger size prefix is a WireFormatError (a stream out of step, or not Kafka). */
  constructor (readonly onFrame: (frame: Buffer) => void, readonly maxFrameBytes: number) {}

  /** Takes the next chunk of the stream; calls `onFrame` for each frame it completes. */
  push (chunk: Buffer): void {
    let at = 0
    while (at < chunk.length) {
      if (this.#frame !== undefined) {
        const copied = chunk.copy(this.#frame, this.#frameFilled, at)
        at += copied
        this.#frameFilled += copied
        if (this.#frameFilled === this.#frame.length) this.#complete(this.#frame)
        continue
      }
      if (this.#sizeFilled > 0 || chunk.length - at < 4) {
        const copied = chunk.copy(this.#sizeBytes, this.#sizeFilled, at, at + 4 - this.#sizeFilled)
        at += copied
        this.#sizeFilled += copied
        if (this.#sizeFilled < 4) return
        this.#sizeFilled = 0
        this.#begin(this.#sizeBytes.readInt32BE(0))
        continue
      }
      const size = chunk.readInt32BE(at)
      at += 4
      if (chunk.length - at >= size) {
        this.#check(size)
        this.onFrame(chunk.subarray(at, at + size))
        at += size
      } else {
        this.#begin(size)
      }
    }
  }

  #check (size: number): void {
    if (size < 0 || size > this.maxFrameBytes) throw new WireFormatError(`frame of ${size} bytes announced: outside 0-${this.maxFrameBytes}`)
  }

  #begin (size: number): void {
    this.#check(size)
    this.#frame = Buffer.allocUnsafe(size)
    this.#frameFilled = 0
    if (size === 0) this.#complete(this.#frame)
  }

  #complete (frame: Buffer): void {
    this.#frame = undefined
    this.#frameFilled = 0
    this.onFrame(frame)
  }
}
