/** Thrown by `push` once the queue is closed. */
export class QueueClosedError extends Error {
  override readonly name = 'QueueClosedError'
  constructor () { super('queue closed') }
}

export interface QueueItem {
  readonly records: { readonly length: number }
  /** A forwarded batch counts its records here (its `records` are empty). */
  readonly forwarded?: { readonly recordCount: number }
  readonly bytes: number
}

function countOf (item: QueueItem): number {
  return item.forwarded?.recordCount ?? item.records.length
}

/**
 * Holds batches between the consumer and the producers, bounded in records and in bytes, with one
 * FIFO lane per producer so a partition always goes through the same producer (order is kept).
 * Capacity is held from `push` until `release` (after the target acknowledged), so memory stays
 * bounded by what is queued plus what is in flight. `push` waits while full: that wait is the
 * backpressure that stops fetching; nothing is ever dropped. A batch larger than the whole
 * capacity is admitted alone into an empty queue, so an oversized batch cannot deadlock.
 */
export class BoundedQueue<T extends QueueItem> {
  readonly #lanes: T[][]
  readonly #laneWaiters: Array<Array<() => void>>
  #spaceWaiters: Array<() => void> = []
  #records = 0
  #bytes = 0
  #closed = false

  constructor (readonly capacityRecords: number, readonly capacityBytes: number, lanes = 1) {
    this.#lanes = Array.from({ length: lanes }, () => [])
    this.#laneWaiters = Array.from({ length: lanes }, () => [])
  }

  /** Records held: queued and in flight. */
  get records (): number { return this.#records }
  get bytes (): number { return this.#bytes }
  get closed (): boolean { return this.#closed }
  get laneCount (): number { return this.#lanes.length }
  /** Items waiting in `lane` (not yet taken). */
  queued (lane: number): number { return this.#lanes[lane]?.length ?? 0 }

  #fits (item: T): boolean {
    // Alone in an empty queue anything fits (bytes held for a commit make it not empty: the commit frees them).
    if (this.#records === 0 && this.#bytes === 0) return true
    return this.#records + countOf(item) <= this.capacityRecords && this.#bytes + item.bytes <= this.capacityBytes
  }

  /** Adds `item` to `lane`, waiting while there is no room. Throws `QueueClosedError` once closed. */
  async push (item: T, lane: number): Promise<void> {
    while (!this.#closed && !this.#fits(item)) {
      await new Promise<void>(resolve => this.#spaceWaiters.push(resolve))
    }
    if (this.#closed) throw new QueueClosedError()
    this.#records += countOf(item)
    this.#bytes += item.bytes
    const queue = this.#lanes[lane]
    if (queue === undefined) throw new RangeError(`lane ${lane} of ${this.#lanes.length}`)
    queue.push(item)
    this.#laneWaiters[lane]?.shift()?.()
  }

  /**
   * Like `push`, but gives up after `waitMs` without room and returns false, so the caller can do
   * periodic work (a consumer heartbeat) while it is held back.
   */
  async pushWithin (item: T, lane: number, waitMs: number): Promise<boolean> {
    if (!this.#closed && !this.#fits(item)) {
      let wake: (() => void) | undefined
      const timer = new Promise<void>(resolve => { const t = setTimeout(resolve, waitMs); wake = () => { clearTimeout(t); resolve() } })
      const space = new Promise<void>(resolve => this.#spaceWaiters.push(resolve))
      await Promise.race([timer, space])
      wake?.()
      if (!this.#closed && !this.#fits(item)) return false
    }
    await this.push(item, lane)
    return true
  }

  /**
   * Takes queued items of `lane` in order, at least one, stopping before `maxBytes` would be exceeded.
   * Waits while the lane is empty; returns [] once the queue is closed and the lane is empty.
   */
  async take (lane: number, maxBytes: number): Promise<T[]> {
    const queue = this.#lanes[lane]
    if (queue === undefined) throw new RangeError(`lane ${lane} of ${this.#lanes.length}`)
    while (queue.length === 0) {
      if (this.#closed) return []
      await new Promise<void>(resolve => this.#laneWaiters[lane]?.push(resolve))
    }
    let bytes = 0
    let count = 0
    while (count < queue.length) {
      const next = queue[count] as T
      if (count > 0 && bytes + next.bytes > maxBytes) break
      bytes += next.bytes
      count++
    }
    return queue.splice(0, count)
  }

  /** As `take`, but gives up after `waitMs` while the lane stays empty: undefined then. */
  async takeWithin (lane: number, maxBytes: number, waitMs: number): Promise<T[] | undefined> {
    const queue = this.#lanes[lane]
    if (queue === undefined) throw new RangeError(`lane ${lane} of ${this.#lanes.length}`)
    if (queue.length === 0 && !this.#closed) {
      const waiters = this.#laneWaiters[lane] as Array<() => void>
      let wake!: () => void
      const woken = new Promise<void>(resolve => { wake = resolve })
      waiters.push(wake)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([woken, new Promise<void>(resolve => { timer = setTimeout(resolve, waitMs) })])
      clearTimeout(timer)
      const at = waiters.indexOf(wake)
      if (at >= 0) waiters.splice(at, 1)
      if (queue.length === 0 && !this.#closed) return undefined
    }
    return await this.take(lane, maxBytes)
  }

  /** Gives back the capacity of an item the target acknowledged (or that was abandoned). */
  release (item: T): void {
    this.#records -= countOf(item)
    this.#bytes -= item.bytes
    this.#wakeSpaceWaiters()
  }

  /**
   * Gives back an item's record count only: its bytes stay held until `releaseBytes` (exactly-once:
   * a written batch is kept, for its acknowledgement, until its transaction commits).
   */
  releaseRecords (item: T): void {
    this.#records -= countOf(item)
    this.#wakeSpaceWaiters()
  }

  /** Gives back the bytes of an item whose records were released with `releaseRecords`. */
  releaseBytes (item: T): void {
    this.#bytes -= item.bytes
    this.#wakeSpaceWaiters()
  }

  #wakeSpaceWaiters (): void {
    const waiters = this.#spaceWaiters
    this.#spaceWaiters = []
    for (const wake of waiters) wake()
  }

  /** Removes every queued (not taken) item and returns them; their capacity is released. */
  drainQueued (): T[] {
    const all = this.#lanes.flatMap(lane => lane.splice(0))
    for (const item of all) this.release(item)
    return all
  }

  /** Stops intake: pending and later `push` calls throw; `take` returns [] once a lane is empty. */
  close (): void {
    if (this.#closed) return
    this.#closed = true
    for (const wake of this.#spaceWaiters.splice(0)) wake()
    for (const waiters of this.#laneWaiters) for (const wake of waiters.splice(0)) wake()
  }
}
