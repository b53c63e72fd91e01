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
  /**
   * The buffers the item's bytes are views of (a fetch response, a decompressed batch), distinct:
   * holding the item keeps each alive whole. Counted instead of `bytes` (Invariant A). Absent or
   * empty: the item's own `bytes` are what it holds.
   */
  readonly retains?: readonly ArrayBufferLike[]
}

function countOf (item: QueueItem): number {
  return item.forwarded?.recordCount ?? item.records.length
}

/**
 * Holds batches between the consumer and the producers, bounded in records and in bytes. Which
 * producer lane takes what is the `QueueLanes` policy: by default any lane takes any partition not
 * in flight (`PartitionLanes`), with fixed lanes (`lanes` given) a partition always goes through
 * the lane it is pushed to; both keep each partition's order.
 * `push` waits while there is no room: that wait is the backpressure that stops fetching; nothing
 * is ever dropped. Takers are woken after the pushes of the current turn of the event loop
 * (`setImmediate`), so the batches of one fetch answer go out together.
 *
 * Invariants (`checkInvariants` asserts them; the unit tests call it after each step):
 * - A (held capacity): an item's records and bytes count from its `push` until its `release`
 *   (taken or not: queued and in flight), and its bytes on until every `hold` on it ended (a
 *   digest still reading it), so memory stays bounded by what is queued, in flight or read after
 *   the acknowledgement. The bytes an item holds are every buffer it `retains`, whole, response
 *   bytes included: a buffer retained by several items counts once, from the push of the first to
 *   the release of the last; an item that retains none holds its own `bytes`. `records` and
 *   `bytes` are the sums over the items held, never negative.
 * - B (bound): `records <= capacityRecords` and `bytes <= capacityBytes`, except while the only
 *   items held are one item larger than the capacity (Invariant D).
 * - C (arrival order): pushes that find no room wait in one line, in arrival order, and only the
 *   first of the line is admitted; a later push, however small, waits behind it. So no item waits
 *   for ever while others keep coming: each release brings the first of the line closer to room.
 * - D (oversize): an item larger than the whole capacity (in records, or in the bytes it would add) is admitted into an empty queue (bytes
 *   held for a commit make it not empty: the commit frees them). By Invariant C the queue does
 *   empty once it is first in line, so it is admitted after what was held before it is released.
 */
export class BoundedQueue<T extends QueueItem> {
  readonly #lanes: QueueLanes<T>
  readonly #laneWaiters: Array<Array<() => void>>
  readonly #shared: boolean
  #spaceWaiters: Array<() => void> = []
  /** Every item held (Invariant A) and what of it is still held: all of it, or its bytes only (`release(item, 'records')`). */
  readonly #held = new Map<T, 'all' | 'bytes'>()
  /** Items held per buffer they retain (Invariant A: a buffer counts while this is above 0). */
  readonly #retained = new Map<ArrayBufferLike, number>()
  /** Holds not ended per item (`hold`), and the items whose bytes were released meanwhile (given back when the last ends). */
  readonly #holds = new Map<T, number>()
  readonly #bytesReleasedWhileHeld = new Set<T>()
  /** Releases of items (or parts) the queue did not hold: 0 unless a caller is wrong (Invariant A). */
  #misreleases = 0
  /** Items whose push waits for room, in arrival order (Invariant C). */
  readonly #line: T[] = []
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
    // Invariant D: alone in an empty queue anything fits.
    if (this.#records === 0 && this.#bytes === 0) return true
    return this.#records + countOf(item) <= this.capacityRecords && this.#bytes + this.#bytesAdded(item) <= this.capacityBytes
  }

  /** The bytes holding `item` adds now: the buffers it retains that no item held retains yet, or its own `bytes` (Invariant A). */
  #bytesAdded (item: T): number {
    const retains = item.retains
    if (retains === undefined || retains.length === 0) return item.bytes
    let bytes = 0
    for (const buffer of retains) if (!this.#retained.has(buffer)) bytes += buffer.byteLength
    return bytes
  }

  #holdBytes (item: T): void {
    this.#bytes += this.#bytesAdded(item)
    for (const buffer of item.retains ?? []) this.#retained.set(buffer, (this.#retained.get(buffer) ?? 0) + 1)
  }

  #releaseBytes (item: T): void {
    const retains = item.retains
    if (retains === undefined || retains.length === 0) {
      this.#bytes -= item.bytes
      return
    }
    for (const buffer of retains) {
      const holders = (this.#retained.get(buffer) ?? 0) - 1
      if (holders > 0) this.#retained.set(buffer, holders)
      else {
        this.#retained.delete(buffer)
        this.#bytes -= buffer.byteLength
      }
    }
  }

  /** Whether `item` may be admitted now: it fits, and no push that came before it still waits (Invariant C). */
  #admissible (item: T): boolean {
    const first = this.#line[0]
    return (first === undefined || first === item) && this.#fits(item)
  }

  /** Puts `item` at the end of the line unless it already stands in it (a `pushWithin` that gave up keeps its place). */
  #queueUp (item: T): void {
    if (!this.#line.includes(item)) this.#line.push(item)
  }

  #leaveLine (item: T): void {
    const at = this.#line.indexOf(item)
    if (at < 0) return
    this.#line.splice(at, 1)
    // The next in line may fit as well.
    if (this.#line.length > 0) this.#wakeSpaceWaiters()
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
   * Adds `item` (to `lane`, with fixed lanes), waiting while there is no room or earlier pushes
   * wait (Invariant C). Throws `QueueClosedError` once closed.
   */
  async push (item: T, lane?: number): Promise<void> {
    if (!this.#closed && !this.#admissible(item)) {
      this.#queueUp(item)
      while (!this.#closed && !this.#admissible(item)) {
        await new Promise<void>(resolve => this.#spaceWaiters.push(resolve))
      }
    }
    if (this.#closed) throw new QueueClosedError()
    this.#leaveLine(item)
    this.#held.set(item, 'all')
    this.#lanes.add(item, lane)
    this.#records += countOf(item)
    this.#holdBytes(item)
    this.#wakeTakers(lane)
  }

  /**
   * Like `push`, but gives up after `waitMs` without room and returns false, so the caller can do
   * periodic work (a consumer heartbeat) while it is held back. The item keeps its place in the
   * line for the next call with it; a caller that gives the item up calls `withdraw`.
   */
  async pushWithin (item: T, lane: number | undefined, waitMs: number): Promise<boolean> {
    if (!this.#closed && !this.#admissible(item)) {
      this.#queueUp(item)
      const untilMs = Date.now() + waitMs
      while (!this.#closed && !this.#admissible(item)) {
        const leftMs = untilMs - Date.now()
        if (leftMs <= 0) return false
        let timer: NodeJS.Timeout | undefined
        await Promise.race([
          new Promise<void>(resolve => { timer = setTimeout(resolve, leftMs) }),
          new Promise<void>(resolve => this.#spaceWaiters.push(resolve)),
        ])
        clearTimeout(timer)
      }
    }
    await this.push(item, lane)
    return true
  }

  /** Takes `item` out of the line of waiting pushes (its pusher gave it up); nothing when it is not in it. */
  withdraw (item: T): void {
    this.#leaveLine(item)
    // Whoever stood behind it may be first now.
    this.#wakeSpaceWaiters()
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
    const held = this.#held.get(item)
    if (held === undefined || (held === 'bytes' && part !== 'bytes') || this.#bytesReleasedWhileHeld.has(item)) {
      // Not held (so): counting it would break the sums; `checkInvariants` reports it (a defect), the copy goes on.
      this.#misreleases++
      return
    }
    if (part !== 'bytes') {
      if (this.#lanes.done(item)) this.#wakeTakers(undefined)
      this.#records -= countOf(item)
    }
    if (part === 'records') this.#held.set(item, 'bytes')
    else if (this.#holds.has(item)) {
      this.#held.set(item, 'bytes')
      this.#bytesReleasedWhileHeld.add(item)
    } else {
      this.#held.delete(item)
      this.#releaseBytes(item)
    }
    this.#wakeSpaceWaiters()
  }

  /**
   * Keeps the bytes of `item`, held now, counted until `until` settles, even past its `release`
   * (a digest reads a forwarded batch after its acknowledgement: Invariant A). Nothing when the
   * queue does not hold the item's bytes any more.
   */
  hold (item: T, until: Promise<unknown>): void {
    if (!this.#held.has(item) || this.#bytesReleasedWhileHeld.has(item)) return
    this.#holds.set(item, (this.#holds.get(item) ?? 0) + 1)
    const ended = (): void => {
      const left = (this.#holds.get(item) ?? 0) - 1
      if (left > 0) {
        this.#holds.set(item, left)
        return
      }
      this.#holds.delete(item)
      if (!this.#bytesReleasedWhileHeld.delete(item)) return
      this.#held.delete(item)
      this.#releaseBytes(item)
      this.#wakeSpaceWaiters()
    }
    until.then(ended, ended)
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
      this.#held.delete(item)
      this.#records -= countOf(item)
      this.#releaseBytes(item)
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
    this.#line.length = 0
    for (const wake of this.#closeWaiters.splice(0)) wake()
    for (const wake of this.#spaceWaiters.splice(0)) wake()
    for (const waiters of this.#laneWaiters) for (const wake of waiters.splice(0)) wake()
  }

  /** Throws when an invariant of the class comment does not hold (for tests: walks every item held). */
  checkInvariants (): void {
    const fail = (what: string): never => { throw new Error(`BoundedQueue invariant ${what} (records ${this.#records}, bytes ${this.#bytes})`) }
    let records = 0
    let bytes = 0
    const retained = new Map<ArrayBufferLike, number>()
    for (const [item, held] of this.#held) {
      if (held === 'all') records += countOf(item)
      const retains = item.retains ?? []
      if (retains.length === 0) bytes += item.bytes
      if (new Set(retains).size !== retains.length) fail('A: an item retains a buffer twice')
      for (const buffer of retains) {
        if (!retained.has(buffer)) bytes += buffer.byteLength
        retained.set(buffer, (retained.get(buffer) ?? 0) + 1)
      }
    }
    if (records !== this.#records || bytes !== this.#bytes) fail(`A: the items held count ${records} records and ${bytes} bytes`)
    if (retained.size !== this.#retained.size || [...retained].some(([buffer, n]) => this.#retained.get(buffer) !== n)) fail('A: retained buffers miscounted')
    for (const item of this.#bytesReleasedWhileHeld) if (!this.#holds.has(item) || this.#held.get(item) !== 'bytes') fail('A: bytes kept for no hold')
    if (this.#records < 0 || this.#bytes < 0) fail('A: a count below zero')
    if (this.#misreleases > 0) fail(`A: ${this.#misreleases} releases of what was not held`)
    const [only] = this.#held.keys()
    const oversizeAlone = this.#held.size === 1 && only !== undefined && (countOf(only) > this.capacityRecords || this.#bytes > this.capacityBytes)
    if (!oversizeAlone && (this.#records > this.capacityRecords || this.#bytes > this.capacityBytes)) fail('B: over the capacity')
    if (this.#closed && this.#line.length > 0) fail('C: a closed queue with pushes in line')
    if (new Set(this.#line).size !== this.#line.length) fail('C: an item twice in the line')
    for (const item of this.#line) if (this.#held.has(item)) fail('C: an item in the line and held')
  }
}
