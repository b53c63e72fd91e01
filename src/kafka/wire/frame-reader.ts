import { WireFormatError } from './wire-reader.js'

/** The scratch buffer a plain socket reads into between frames (Node's `onread`): the size prefix and small frames. */
const SCRATCH_BYTES = 64 * 1024

/**
 * Cuts a TCP stream into Kafka frames (an int32 size, then that many bytes) and hands each frame's
 * bytes on. Two ways in:
 * - `nextBuffer()` and `read()` (a plain socket's `onread`): once a frame's size is known, the socket
 *   reads the rest of the frame straight into the frame's own buffer, so a fetch answer of megabytes is
 *   never copied; the bytes before that (the size, and whatever else one read brought) land in one
 *   reused scratch buffer and are copied out into their frames. Node then allocates no buffer per read,
 *   whose external memory made V8 collect garbage every few hundred megabytes read.
 * - `push(chunk)` (a TLS socket's `data` events): a frame that lies inside one chunk is handed as a view of
 *   that chunk (the chunk is never reused); one spread over several chunks is copied once into a buffer of
 *   its size.
 * Invariant: every byte is handed on in exactly one frame, in order; a frame handed on is never written again.
 */
export class FrameReader {
  /** Bytes of a size prefix split between chunks. */
  #sizeBytes = Buffer.alloc(4)
  #sizeFilled = 0
  /** The frame being filled across chunks, and how much of it is. */
  #frame: Buffer | undefined
  #frameFilled = 0
  /** Where `read()`'s bytes went when they did not go straight into `#frame`. */
  #scratch: Buffer | undefined
  /** Whether the buffer `nextBuffer` handed out last is the rest of `#frame`. */
  #direct = false

  /** `maxFrameBytes`: a larger size prefix is a WireFormatError (a stream out of step, or not Kafka). */
  constructor (readonly onFrame: (frame: Buffer) => void, readonly maxFrameBytes: number) {}

  /** Where the socket's next read goes: the rest of the frame being filled, else the scratch buffer. */
  nextBuffer (): Buffer {
    if (this.#frame !== undefined) {
      this.#direct = true
      return this.#frame.subarray(this.#frameFilled)
    }
    this.#direct = false
    this.#scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES)
    return this.#scratch
  }

  /** `bytes` bytes arrived in the buffer `nextBuffer` handed out last; calls `onFrame` for each frame they complete. */
  read (bytes: number): void {
    const frame = this.#frame
    if (this.#direct && frame !== undefined) {
      this.#frameFilled += bytes
      if (this.#frameFilled === frame.length) this.#complete(frame)
      return
    }
    // The scratch is read into again: a frame inside it is copied out, never handed as a view of it.
    this.#parse((this.#scratch as Buffer).subarray(0, bytes), false)
  }

  /** Takes the next chunk of the stream (a buffer the caller never writes again); calls `onFrame` for each frame it completes. */
  push (chunk: Buffer): void {
    this.#parse(chunk, true)
  }

  #parse (chunk: Buffer, viewsAllowed: boolean): void {
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
      if (viewsAllowed && chunk.length - at >= size) {
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
