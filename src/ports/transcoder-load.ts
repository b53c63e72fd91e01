/** How busy a source's batch transcoder is at one moment (batches recompressed into the target's codec without decoding). */
export interface TranscoderLoad {
  /** Batches being recompressed now: slots of libuv's thread pool in use, at most the transcoder's concurrency. */
  readonly busySlots: number
  /** Batches waiting for a free slot, in fetch order. */
  readonly waitingBatches: number
}
