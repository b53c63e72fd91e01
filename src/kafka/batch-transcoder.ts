import { compressRecords, decompressRecords } from './kafkajs-internals.js'
import { Attributes, BATCH_HEADER_BYTES, BATCH_OFFSETS, BATCH_PREFIX_BYTES, CODEC_NAMES } from './record-batch-header.js'

/** A codec's id in a batch's attributes (its index in `CODEC_NAMES`), or undefined for an unknown name. */
export function codecId (name: string): number | undefined {
  const id = (CODEC_NAMES as readonly string[]).indexOf(name)
  return id < 0 ? undefined : id
}

/**
 * One whole v2 data batch (`batch`, header included, as fetched) in codec `targetCodec`: its
 * records section decompressed and compressed again, the header kept but for the codec bits of
 * the attributes and the length. The records' own bytes (offset and timestamp deltas, keys,
 * values, headers) are not touched, so every record reads back exactly as it was written; the CRC
 * is left as it was (`batchForTarget` computes it for each request's header).
 * Decompression and compression run in the registered codecs, which are native code on libuv's
 * thread pool where their packages load (`codecs.ts`).
 */
export async function transcodeBatch (batch: Buffer, targetCodec: number): Promise<Buffer> {
  if (batch.length < BATCH_HEADER_BYTES) throw new RangeError(`record batch of ${batch.length} bytes is shorter than its ${BATCH_HEADER_BYTES}-byte header`)
  const attributes = batch.readInt16BE(BATCH_OFFSETS.attributes)
  const sourceCodec = attributes & Attributes.CODEC_MASK
  const section = batch.subarray(BATCH_HEADER_BYTES)
  const records = sourceCodec === 0 ? section : await decompressRecords(attributes, section)
  const encoded = await compressRecords(targetCodec, records)
  const out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + encoded.length)
  batch.copy(out, 0, 0, BATCH_HEADER_BYTES)
  encoded.copy(out, BATCH_HEADER_BYTES)
  out.writeInt16BE((attributes & ~Attributes.CODEC_MASK) | targetCodec, BATCH_OFFSETS.attributes)
  out.writeInt32BE(out.length - BATCH_PREFIX_BYTES, BATCH_OFFSETS.length)
  return out
}

/** Threads in libuv's pool when `UV_THREADPOOL_SIZE` is not set. */
const LIBUV_DEFAULT_THREADS = 4

/**
 * How many batches `BatchTranscoder` works on at once by default: the threads of libuv's pool
 * (Node's `UV_THREADPOOL_SIZE`, 4 unless set), where the codecs run.
 */
export function defaultTranscodeConcurrency (env: NodeJS.ProcessEnv = process.env): number {
  const pool = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '', 10)
  return Number.isSafeInteger(pool) && pool > 0 ? pool : LIBUV_DEFAULT_THREADS
}

/**
 * Turns fetched batches into batches of the target's codec without decoding their records
 * (`transcodeBatch`), at most `concurrency` at once (the rest wait their turn in order): the codecs
 * work on libuv's thread pool, so the JavaScript thread only copies a header and the compressed
 * bytes. `transcode` resolves with the new batch's bytes, or undefined when the batch is better
 * decoded after all (the result is larger than `maxBatchBytes`, the codec refused the bytes, or
 * the transcoder was stopped). Results come back in whatever order the codecs finish; the caller
 * awaits them in fetch order. `start`/`stop` bound its life: `stop` lets what runs finish and
 * turns what waits into undefined.
 */
export class BatchTranscoder {
  readonly #targetCodec: number
  readonly #maxBatchBytes: number
  readonly #concurrency: number
  readonly #waiting: Array<() => void> = []
  #running = 0
  #stopped = true
  #idle: (() => void) | undefined

  constructor (targetCodec: number, maxBatchBytes: number, concurrency: number = defaultTranscodeConcurrency()) {
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new RangeError(`transcode concurrency ${concurrency}: expected a positive integer`)
    this.#targetCodec = targetCodec
    this.#maxBatchBytes = maxBatchBytes
    this.#concurrency = concurrency
  }

  /** Batches being transcoded now. */
  get running (): number { return this.#running }
  /** Batches waiting for their turn. */
  get waiting (): number { return this.#waiting.length }

  start (): void {
    this.#stopped = false
  }

  async transcode (batch: Buffer): Promise<Buffer | undefined> {
    if (this.#stopped) return undefined
    if (this.#running < this.#concurrency) {
      this.#running++
    } else {
      // The slot of a batch that finishes is handed straight to the first waiting (`#release`).
      await new Promise<void>(resolve => this.#waiting.push(resolve))
      if (this.#stopped) {
        this.#release()
        return undefined
      }
    }
    try {
      const out = await transcodeBatch(batch, this.#targetCodec)
      return out.length > this.#maxBatchBytes ? undefined : out
    } catch {
      // Bytes the codec refuses: the caller decodes the batch instead, and kafkajs' decoder reports them as it always did.
      return undefined
    } finally {
      this.#release()
    }
  }

  /** A slot is free: the first waiting batch takes it, else it is given back. */
  #release (): void {
    const next = this.#stopped ? undefined : this.#waiting.shift()
    if (next !== undefined) return next()
    this.#running--
    if (this.#running === 0) this.#idle?.()
  }

  /** Stops taking batches: those waiting resolve undefined; resolves once those running are done. Safe to call twice. */
  async stop (): Promise<void> {
    this.#stopped = true
    // Each released waiter sees the stop and gives its slot back without running.
    for (const release of this.#waiting.splice(0)) {
      this.#running++
      release()
    }
    if (this.#running === 0) return
    await new Promise<void>(resolve => { this.#idle = resolve })
    this.#idle = undefined
  }
}

/**
 * The batches of one fetch to transcode, in fetch order, started at most `ahead` at a time: the
 * one awaited now and those after it. What waits to be handed on is bounded (each result is at
 * most a request's batch size), whatever the fetch holds and however well its batches compress.
 */
export class TranscodeWindow<T, R> {
  readonly #pending: readonly T[]
  readonly #start: (item: T) => Promise<R>
  readonly #ahead: number
  readonly #started = new Map<T, Promise<R>>()
  #next = 0

  constructor (pending: readonly T[], start: (item: T) => Promise<R>, ahead: number) {
    this.#pending = pending
    this.#start = start
    this.#ahead = Math.max(1, ahead)
    this.#fill()
  }

  /** The result for `item`, started now if not yet (with those after it); undefined for an item not in the window's list, or taken already. */
  take (item: T): Promise<R> | undefined {
    if (!this.#started.has(item)) {
      const at = this.#pending.indexOf(item, this.#next)
      if (at < 0) return undefined
      // Every item started so far comes before `item`: the caller passed them by, their results are
      // not wanted (a transcode never rejects, so nothing is left unhandled).
      this.#started.clear()
      this.#next = at
      this.#fill()
    }
    const result = this.#started.get(item)
    this.#started.delete(item)
    this.#fill()
    return result
  }

  #fill (): void {
    while (this.#started.size < this.#ahead && this.#next < this.#pending.length) {
      const item = this.#pending[this.#next++] as T
      this.#started.set(item, this.#start(item))
    }
  }
}
