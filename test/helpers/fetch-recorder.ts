import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { BrokerFetcher, type BrokerFetcherOptions, type FetchedResponse, type FetchEvent, type FetchListener } from '../../src/kafka/wire/broker-fetcher.js'

/** A batch as a test keeps it: copied out of its response, with the broker that served it. */
export interface RecordedBatch {
  readonly baseOffset: bigint
  readonly lastOffset: bigint
  readonly bytes: Buffer
  readonly node: number
}

/**
 * A `FetchListener` that keeps every batch handed out per partition and checks, as each answer arrives, that
 * a partition's batches follow each other (the next one ends past the last one kept, and, with
 * `contiguous`, starts right after it). `until` resolves when a condition over what was kept holds, checked
 * after every answer and event: no polling.
 */
export class FetchRecorder implements FetchListener {
  readonly batches = new Map<string, RecordedBatch[]>()
  readonly positions = new Map<string, bigint>()
  readonly events: FetchEvent[] = []
  readonly responses: Array<{ node: number, responseBytes: number, retainedBytes: number, batchBytes: number }> = []
  failure: Error | undefined
  readonly #waiters = new Set<() => void>()

  constructor (readonly options: { contiguous?: boolean, hold?: (response: FetchedResponse) => Promise<void> } = {}) {}

  readonly fetched = async (response: FetchedResponse): Promise<void> => {
    let batchBytes = 0
    for (const part of response.partitions) {
      const key = `${part.topic}-${part.partition}`
      const kept = this.batches.get(key) ?? []
      this.batches.set(key, kept)
      for (const batch of part.batches) {
        const last = kept.at(-1)
        if (last !== undefined) {
          assert.ok(batch.lastOffset > last.lastOffset, `${key}: batch ending at ${batch.lastOffset} after one ending at ${last.lastOffset}`)
          if (this.options.contiguous !== false) assert.equal(batch.baseOffset, last.lastOffset + 1n, `${key}: batches contiguous`)
        }
        batchBytes += batch.bytes.length
        kept.push({ baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, bytes: Buffer.from(batch.bytes), node: response.node })
      }
      this.positions.set(key, part.nextFetchOffset)
    }
    this.responses.push({ node: response.node, responseBytes: response.responseBytes, retainedBytes: response.retainedBytes, batchBytes })
    this.#notify()
    await this.options.hold?.(response)
  }

  readonly event = (event: FetchEvent): void => {
    this.events.push(event)
    this.#notify()
  }

  readonly failed = (error: Error): void => {
    this.failure = error
    this.#notify()
  }

  /** Records kept for `topic`-`partition` (the sum of the batches' offset spans). */
  recordCount (topic: string, partition: number): bigint {
    return (this.batches.get(`${topic}-${partition}`) ?? []).reduce((sum, batch) => sum + batch.lastOffset - batch.baseOffset + 1n, 0n)
  }

  /** Resolves once `condition` holds (checked now and after every answer or event); rejects after `timeoutMs` or when the fetcher failed. */
  until (condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.#waiters.delete(check); reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)) }, timeoutMs)
      const check = (): void => {
        if (this.failure !== undefined) {
          clearTimeout(timer)
          this.#waiters.delete(check)
          reject(this.failure)
        } else if (condition()) {
          clearTimeout(timer)
          this.#waiters.delete(check)
          resolve()
        }
      }
      this.#waiters.add(check)
      check()
    })
  }

  #notify (): void {
    for (const check of [...this.#waiters]) check()
  }
}

/** A fetcher of the brokers of `bootstrap` (`host:port,...`) telling `recorder`, stopped when the test ends; not started. */
export function startFetcher (t: TestContext, bootstrap: string, recorder: FetchRecorder, options: Partial<BrokerFetcherOptions> = {}): BrokerFetcher {
  const brokers = bootstrap.split(',').map(address => ({ host: address.split(':')[0]!, port: Number(address.split(':')[1]) }))
  const fetcher = new BrokerFetcher({ bootstrap: brokers, connection: { clientId: 'wire-fetcher-test' }, maxWaitMs: 100, ...options }, recorder)
  t.after(() => fetcher.stop())
  return fetcher
}
