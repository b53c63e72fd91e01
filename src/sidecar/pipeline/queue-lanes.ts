/**
 * Where a `BoundedQueue` keeps its items between `push` and `take`, and which taker may take
 * which. Two policies keep a partition's items in order:
 * - `FixedLanes`: one FIFO per lane, the caller names the lane of each item (exactly-once: a lane
 *   is a bucket of partitions with its own transactional id);
 * - `PartitionLanes`: any taker takes any partition not in flight (at-least-once), so the batches
 *   fetched together go out in one request instead of one request per lane.
 */
export interface QueueLanes<T> {
  add: (item: T, lane: number | undefined) => void
  /** Items `lane` may take now, in order, at least one, stopping before `maxBytes`; [] when none. */
  take: (lane: number, maxBytes: number) => T[]
  /** Whether `lane` has nothing to take now. */
  empty: (lane: number) => boolean
  /** An item taken earlier is done with (acknowledged or abandoned); true when that made items takeable. */
  done: (item: T) => boolean
  /** Removes and returns every item not taken. */
  drain: () => T[]
}

interface Sized { readonly bytes: number }

/** Takes items from the front of `queue` up to `maxBytes` (at least one). */
function takeFront<T extends Sized> (queue: T[], maxBytes: number, already = 0, taken: T[] = []): T[] {
  let bytes = already
  let count = 0
  while (count < queue.length) {
    const next = queue[count] as T
    if ((count > 0 || taken.length > 0) && bytes + next.bytes > maxBytes) break
    bytes += next.bytes
    count++
  }
  taken.push(...queue.splice(0, count))
  return taken
}

export class FixedLanes<T extends Sized> implements QueueLanes<T> {
  readonly #lanes: T[][]

  constructor (lanes: number) {
    this.#lanes = Array.from({ length: lanes }, () => [])
  }

  #lane (lane: number | undefined): T[] {
    const queue = lane === undefined ? undefined : this.#lanes[lane]
    if (queue === undefined) throw new RangeError(`lane ${String(lane)} of ${this.#lanes.length}`)
    return queue
  }

  add (item: T, lane: number | undefined): void { this.#lane(lane).push(item) }
  take (lane: number, maxBytes: number): T[] { return takeFront(this.#lane(lane), maxBytes) }
  empty (lane: number): boolean { return this.#lane(lane).length === 0 }
  done (): boolean { return false }
  drain (): T[] { return this.#lanes.flatMap(lane => lane.splice(0)) }
}

/**
 * Items kept per partition (`keyOf`). A take holds every partition it took from until each of its
 * items is `done`, so a partition is in at most one request at a time and its items leave in
 * order. Partitions are taken in the order they became takeable, so none waits behind others.
 */
export class PartitionLanes<T extends Sized> implements QueueLanes<T> {
  readonly #keyOf: (item: T) => string
  /** Queued items per partition key. */
  readonly #queued = new Map<string, T[]>()
  /** Partitions with queued items and nothing in flight, in the order they became so. */
  readonly #ready = new Set<string>()
  /** Items in flight per partition key (taken, not done). */
  readonly #held = new Map<string, number>()

  constructor (keyOf: (item: T) => string) {
    this.#keyOf = keyOf
  }

  add (item: T): void {
    const key = this.#keyOf(item)
    let queue = this.#queued.get(key)
    if (queue === undefined) this.#queued.set(key, queue = [])
    queue.push(item)
    if (!this.#held.has(key)) this.#ready.add(key)
  }

  take (_lane: number, maxBytes: number): T[] {
    const taken: T[] = []
    let bytes = 0
    for (const key of this.#ready) {
      const queue = this.#queued.get(key) as T[]
      if (taken.length > 0 && bytes + (queue[0] as T).bytes > maxBytes) break
      const before = taken.length
      takeFront(queue, maxBytes, bytes, taken)
      for (let i = before; i < taken.length; i++) bytes += (taken[i] as T).bytes
      this.#held.set(key, taken.length - before)
      this.#ready.delete(key)
      if (queue.length === 0) this.#queued.delete(key)
    }
    return taken
  }

  empty (): boolean { return this.#ready.size === 0 }

  done (item: T): boolean {
    const key = this.#keyOf(item)
    const held = (this.#held.get(key) ?? 0) - 1
    if (held > 0) {
      this.#held.set(key, held)
      return false
    }
    this.#held.delete(key)
    if (!this.#queued.has(key)) return false
    this.#ready.add(key)
    return true
  }

  drain (): T[] {
    const all = [...this.#queued.values()].flat()
    this.#queued.clear()
    this.#ready.clear()
    return all
  }
}
