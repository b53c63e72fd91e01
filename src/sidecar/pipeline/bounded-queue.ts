import { FixedLanes, PartitionLanes, type QueueLanes } from './queue-lanes.js'

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
 * Holds batches between the consumer and the producers, bounded in records and in bytes. Which
 * producer lane takes what is the `QueueLanes` policy: by default any lane takes any partition not
 * in flight (`PartitionLanes`), with fixed lanes (`lanes` given) a partition always goes through
 * the lane it is pushed to; both keep each partition's order.
 * Capacity is held from `push` until `release` (after the target acknowledged), so memory stays
 * bounded by what is queued plus what is in flight. `push` waits while full: that wait is the
 * backpressure that stops fetching; nothing is ever dropped. A batch larger than the whole
 * capacity is admitted alone into an empty queue, so an oversized batch cannot deadlock.
 * Takers are woken after the pushes of the current turn of the event loop (`setImmediate`), so the
 * batches of one fetch answer go out together.
 */
export class BoundedQueue<T extends QueueItem> {
  readonly #lanes: QueueLanes<T>
  readonly #laneWaiters: Array<Array<() => void>>
  readonly #shared: boolean
  #spaceWaiters: Array<() => void> = []
  readonly #emptyWaiters: Array<() => void> = []
  readonly #closeWaiters: Array<() => void> = []
  #wakeScheduled = false
  #records = 0
  #bytes = 0
  #closed = false

  /**
   * `lanes`: a number for fixed lanes (push names the lane), or `{ keyOf }` for lanes that
   * take any partition (`keyOf` names an item's partition).
   */
  constructor (readonly capacityRecords: number, readonly capacityBytes: number, lanes: number | { readonly keyOf: (item: T) => string } = 1) {
    const fixed = typeof lanes === 'number'
    this.#shared = !fixed
    this.#lanes = fixed ? new FixedLanes<T>(lanes) : new PartitionLanes<T>(lanes.keyOf)
    this.#laneWaiters = Array.from({ length: fixed ? lanes : 1 }, () => [])
  }

  /** Records held: queued and in flight. */
  get records (): number { return this.#records }
  get bytes (): number { return this.#bytes }
  get closed (): boolean { return this.#closed }

  #fits (item: T): boolean {
    // Alone in an empty queue anything fits (bytes held for a commit make it not empty: the commit frees them).
    if (this.#records === 0 && this.#bytes === 0) return true
    return this.#records + countOf(item) <= this.capacityRecords && this.#bytes + item.bytes <= this.capacityBytes
  }

  #waitersOf (lane: number): Array<() => void> {
    const waiters = this.#laneWaiters[this.#shared ? 0 : lane]
    if (waiters === undefined) throw new RangeError(`lane ${lane} of ${this.#laneWaiters.length}`)
    return waiters
  }

  /** Wakes the takers waiting for `lane` (all takers when lanes are shared) once this turn's pushes are in. */
  #wakeTakers (lane: number | undefined): void {
    if (this.#shared) {
      if (this.#wakeScheduled) return
      this.#wakeScheduled = true
      setImmediate(() => {
        this.#wakeScheduled = false
        for (const wake of this.#waitersOf(0).splice(0)) wake()
      })
      return
    }
    this.#waitersOf(lane ?? 0).shift()?.()
  }

  /**
   * Adds `item` (to `lane`, with fixed lanes), waiting while there is no room. Throws
   * `QueueClosedError` once closed.
   */
  async push (item: T, lane?: number): Promise<void> {
    while (!this.#closed && !this.#fits(item)) {
      await new Promise<void>(resolve => this.#spaceWaiters.push(resolve))
    }
    if (this.#closed) throw new QueueClosedError()
    this.#lanes.add(item, lane)
    this.#records += countOf(item)
    this.#bytes += item.bytes
    this.#wakeTakers(lane)
  }

  /**
   * Like `push`, but gives up after `waitMs` without room and returns false, so the caller can do
   * periodic work (a consumer heartbeat) while it is held back.
   */
  async pushWithin (item: T, lane: number | undefined, waitMs: number): Promise<boolean> {
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
   * Takes queued items `lane` may take, in order, at least one, stopping before `maxBytes` would
   * be exceeded. Waits while there are none; returns [] once the queue is closed and there are none.
   */
  async take (lane: number, maxBytes: number): Promise<T[]> {
    while (this.#lanes.empty(lane)) {
      if (this.#closed) return []
      await new Promise<void>(resolve => this.#waitersOf(lane).push(resolve))
    }
    return this.#lanes.take(lane, maxBytes)
  }

  /** As `take`, but gives up after `waitMs` while there is nothing to take: undefined then. */
  async takeWithin (lane: number, maxBytes: number, waitMs: number): Promise<T[] | undefined> {
    if (this.#lanes.empty(lane) && !this.#closed) {
      const waiters = this.#waitersOf(lane)
      let wake!: () => void
      const woken = new Promise<void>(resolve => { wake = resolve })
      waiters.push(wake)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([woken, new Promise<void>(resolve => { timer = setTimeout(resolve, waitMs) })])
      clearTimeout(timer)
      const at = waiters.indexOf(wake)
      if (at >= 0) waiters.splice(at, 1)
      if (this.#lanes.empty(lane) && !this.#closed) return undefined
    }
    return await this.take(lane, maxBytes)
  }

  /**
   * Gives back the room of an item taken earlier, once the target acknowledged it (or it was
   * given up): `all` of it, or in two steps, its `records` (the lane is done with it) and later
   * its `bytes` (a delivery that keeps written batches until a commit: `DeliveryMode`).
   */
  release (item: T, part: 'all' | 'records' | 'bytes' = 'all'): void {
    if (part !== 'bytes') {
      if (this.#lanes.done(item)) this.#wakeTakers(undefined)
      this.#records -= countOf(item)
    }
    if (part !== 'records') this.#bytes -= item.bytes
    this.#wakeSpaceWaiters()
  }

  /** Resolves once the queue holds nothing: every item pushed was released (or drained); at once when so now. */
  whenEmpty (): Promise<void> {
    if (this.#records === 0 && this.#bytes === 0) return Promise.resolve()
    return new Promise(resolve => this.#emptyWaiters.push(resolve))
  }

  #wakeSpaceWaiters (): void {
    const waiters = this.#spaceWaiters
    this.#spaceWaiters = []
    for (const wake of waiters) wake()
    if (this.#emptyWaiters.length > 0 && this.#records === 0 && this.#bytes === 0) for (const wake of this.#emptyWaiters.splice(0)) wake()
  }

  /** Removes every queued (not taken) item and returns them; their capacity is released. */
  drainQueued (): T[] {
    const all = this.#lanes.drain()
    for (const item of all) {
      this.#records -= countOf(item)
      this.#bytes -= item.bytes
    }
    this.#wakeSpaceWaiters()
    return all
  }

  /** Resolves once the queue is closed (at once when it is). */
  whenClosed (): Promise<void> {
    if (this.#closed) return Promise.resolve()
    return new Promise(resolve => this.#closeWaiters.push(resolve))
  }

  /** Stops intake: pending and later `push` calls throw; `take` returns [] once a lane is empty. */
  close (): void {
    if (this.#closed) return
    this.#closed = true
    for (const wake of this.#closeWaiters.splice(0)) wake()
    for (const wake of this.#spaceWaiters.splice(0)) wake()
    for (const waiters of this.#laneWaiters) for (const wake of waiters.splice(0)) wake()
  }
}
