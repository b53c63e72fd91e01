import type { PartitionAck, PartitionWrite, RecordSink } from '../../ports/ports.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'

/**
 * A sink started at its first write instead of with the flow: the producer of a lane that takes
 * batches only at times (at least once, the lanes past `num.producers`, which write only while the
 * target's round trip is long). Near the target such a lane never writes, and its producer never
 * connects; across a long link the flow starts without waiting for producers it may not need.
 *
 * Until it was started it counts as connected: it holds nothing back, and the flow's readiness
 * depends only on the sinks that write. A start that failed is tried again by the next write (the
 * worker's retry sends it again).
 */
export class OnDemandSink implements RecordSink {
  readonly #sink: RecordSink
  #starting: Promise<void> | undefined
  #stopped = false

  constructor (sink: RecordSink) {
    this.#sink = sink
  }

  get connected (): boolean {
    return this.#starting === undefined || this.#sink.connected
  }

  /** Nothing to start before the first write. */
  async start (): Promise<void> { /* the first send starts the sink */ }

  async send (writes: readonly PartitionWrite[], timeoutMs: number): Promise<PartitionAck[]> {
    // As a stopped producer answers: a write after stop starts nothing.
    if (this.#stopped) throw new MirrorError(ErrorCodes.STOPPED, 'producer is not started', { retriable: true })
    this.#starting ??= this.#sink.start().catch((error: unknown) => {
      this.#starting = undefined
      throw error
    })
    await this.#starting
    return await this.#sink.send(writes, timeoutMs)
  }

  async stop (): Promise<void> {
    this.#stopped = true
    const starting = this.#starting
    if (starting === undefined) return
    // A start that failed left nothing running; what it threw was the write's to report.
    await starting.catch(() => { /* the failed start was reported to the send that began it */ })
    await this.#sink.stop()
  }
}
