/**
 * The partitions a `BrokerFetcher` fetches: each one's position (the next offset to fetch), the leader and
 * leader epoch Metadata named, a preferred read replica the leader named, and which broker loop's request
 * carries it now. Pure bookkeeping, no I/O: the fetcher's loops claim partitions before a request and settle
 * them with the answer.
 */
import { ErrorCodes, MirrorError } from '../../shared/errors.js'

/** One assigned partition, as a request is built from it. */
export interface ClaimedPartition {
  readonly topic: string
  readonly partition: number
  /** The offset to fetch from. */
  readonly position: bigint
  /** KIP-320: the leader epoch Metadata named; -1 when unknown. */
  readonly currentLeaderEpoch: number
  /** KIP-320: the leader epoch of the last batch fetched; -1 when none was. */
  readonly lastFetchedEpoch: number
  /** Counts the partition's assignments: an answer to a request of an older assignment is dropped. */
  readonly generation: number
}

/** Where a partition is read from: its leader, or (KIP-392) a replica the leader preferred, until `untilMs`. */
interface ReadReplica {
  readonly node: number
  readonly untilMs: number
}

/** Where a partition's reading stands; replaced whole by `assign`. */
interface Cursor {
  /** The next offset to fetch. */
  position: bigint
  lastFetchedEpoch: number
  /** Counts the partition's assignments (see `ClaimedPartition`). */
  readonly generation: number
  /** The last offset handed out since the partition was last assigned; -1 when none. */
  lastHandedOffset: bigint
  /** Set when the partition stopped for an event the caller must decide on (out of range, diverged); cleared by `assign`. */
  stoppedFor: string | undefined
}

interface PartitionState {
  readonly topic: string
  readonly partition: number
  cursor: Cursor
  /** The leader Metadata named (undefined: unknown now) and its epoch (-1: unknown). */
  leader: number | undefined
  leaderEpoch: number
  preferred: ReadReplica | undefined
  /** The broker loop whose request in flight carries the partition. */
  inFlight: number | undefined
  /** The broker loop handing an answer of the partition to the listener now (Invariant D). */
  handingBy: number | undefined
}

function keyOf (topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}

/**
 * Invariant A (one loop at a time): a partition is carried by at most one request in flight: a loop claims only
 * partitions no request carries, and every claim is settled (`settle`) before the partition can be claimed again.
 * Invariant B (contiguous offsets): per partition, the batches handed out follow each other in offset order
 * without overlap: a batch ends at or after the position it was fetched from, and the position then moves to its
 * last offset + 1, so the next batch cannot start at or before an offset handed out. Only `assign` (a new
 * position chosen by the caller, after a reported event or a seek) restarts the sequence.
 * Invariant C (stopped stays stopped): a partition stopped for an event (OFFSET_OUT_OF_RANGE, a diverging epoch,
 * KIP-320) is claimed by no loop until the caller assigns it a position again: nothing is fetched past it silently.
 * Invariant D (one hand-over at a time): a partition whose answer one loop is handing to the listener is claimed by
 * no other loop until that hand-over ends (`handed`); the loop handing it may fetch it again meanwhile, and hands
 * its own answers over one after another, so a partition's batches reach the listener in offset order.
 */
export class FetchAssignments {
  readonly #partitions = new Map<string, PartitionState>()
  /** Per broker loop, the keys of the partitions its request in flight carries (Invariant A). */
  readonly #claims = new Map<number, Set<string>>()

  get size (): number { return this.#partitions.size }

  /** Starts (or moves) fetching `topic`-`partition` at `offset`. An answer already in flight for it is dropped. */
  assign (topic: string, partition: number, offset: bigint): void {
    if (offset < 0n) throw new MirrorError(ErrorCodes.CONFIG, `${topic}-${partition}: start offset ${offset}: expected 0 or more`)
    const key = keyOf(topic, partition)
    const held = this.#partitions.get(key)
    const generation = (held?.cursor.generation ?? -1) + 1
    const cursor: Cursor = { position: offset, lastFetchedEpoch: -1, generation, lastHandedOffset: -1n, stoppedFor: undefined }
    if (held !== undefined) {
      held.cursor = cursor
      return
    }
    this.#partitions.set(key, {
      topic,
      partition,
      cursor,
      leader: undefined,
      leaderEpoch: -1,
      preferred: undefined,
      inFlight: undefined,
      handingBy: undefined,
    })
  }

  /** Stops fetching `topic`-`partition`; an answer in flight for it is dropped. */
  unassign (topic: string, partition: number): void {
    const key = keyOf(topic, partition)
    const held = this.#partitions.get(key)
    if (held === undefined) return
    if (held.inFlight !== undefined) this.#claims.get(held.inFlight)?.delete(key)
    this.#partitions.delete(key)
  }

  /** The position of `topic`-`partition` (the next offset to fetch); undefined when not assigned. */
  position (topic: string, partition: number): bigint | undefined {
    return this.#partitions.get(keyOf(topic, partition))?.cursor.position
  }

  /** The topics of every assigned partition. */
  topics (): Set<string> {
    return new Set([...this.#partitions.values()].map(state => state.topic))
  }

  /** Partitions whose leader is unknown (not stopped): Metadata must be asked. */
  leaderless (): number {
    let count = 0
    for (const state of this.#partitions.values()) if (state.leader === undefined && state.cursor.stoppedFor === undefined) count++
    return count
  }

  /** The broker each partition is read from now (the leader, or an unexpired preferred read replica), or undefined. */
  readNode (topic: string, partition: number, nowMs: number): number | undefined {
    const state = this.#partitions.get(keyOf(topic, partition))
    return state === undefined ? undefined : this.#readNodeOf(state, nowMs)
  }

  #readNodeOf (state: PartitionState, nowMs: number): number | undefined {
    if (state.preferred !== undefined && state.preferred.untilMs > nowMs) return state.preferred.node
    state.preferred = undefined
    return state.leader
  }

  /** The brokers some assigned partition is read from now. */
  readNodes (nowMs: number): Set<number> {
    const nodes = new Set<number>()
    for (const state of this.#partitions.values()) {
      const node = this.#readNodeOf(state, nowMs)
      if (node !== undefined) nodes.add(node)
    }
    return nodes
  }

  /** Metadata's answer for a partition: its leader (-1 or undefined: none now) and leader epoch. */
  leaderIs (topic: string, partition: number, leader: number | undefined, leaderEpoch: number): void {
    const state = this.#partitions.get(keyOf(topic, partition))
    if (state === undefined) return
    const known = leader !== undefined && leader >= 0 ? leader : undefined
    if (known !== state.leader || leaderEpoch !== state.leaderEpoch) state.preferred = undefined
    state.leader = known
    state.leaderEpoch = leaderEpoch
  }

  /** The leader is no longer known (a leader error): read from nowhere until Metadata answers again. */
  leaderLost (topic: string, partition: number): void {
    const state = this.#partitions.get(keyOf(topic, partition))
    if (state === undefined) return
    state.leader = undefined
    state.preferred = undefined
  }

  /** KIP-392: read `topic`-`partition` from `node` until `untilMs` (the leader named it the preferred read replica). */
  preferReplica (topic: string, partition: number, node: number, untilMs: number): void {
    const state = this.#partitions.get(keyOf(topic, partition))
    if (state !== undefined) state.preferred = node === state.leader ? undefined : { node, untilMs }
  }

  /** Back to the leader (the preferred replica failed, or answered OFFSET_OUT_OF_RANGE: KIP-392). Returns whether one was set. */
  clearPreferredReplica (topic: string, partition: number): boolean {
    const state = this.#partitions.get(keyOf(topic, partition))
    if (state?.preferred === undefined) return false
    state.preferred = undefined
    return true
  }

  /** Invariant C: stops `topic`-`partition` until it is assigned again. */
  stop (topic: string, partition: number, reason: string): void {
    const state = this.#partitions.get(keyOf(topic, partition))
    if (state !== undefined) state.cursor.stoppedFor = reason
  }

  /** The reason `topic`-`partition` stopped, if it did. */
  stoppedFor (topic: string, partition: number): string | undefined {
    return this.#partitions.get(keyOf(topic, partition))?.cursor.stoppedFor
  }

  /**
   * The partitions loop `node` fetches now, claimed for its next request (Invariant A): read from `node`, not stopped,
   * carried by no request, and handed to the listener by no other loop (Invariant D).
   */
  claim (node: number, nowMs: number): ClaimedPartition[] {
    const claimed: ClaimedPartition[] = []
    const keys = new Set<string>()
    for (const [key, state] of this.#partitions) {
      if (state.inFlight !== undefined || state.cursor.stoppedFor !== undefined || this.#readNodeOf(state, nowMs) !== node) continue
      if (state.handingBy !== undefined && state.handingBy !== node) continue
      state.inFlight = node
      keys.add(key)
      claimed.push({
        topic: state.topic,
        partition: state.partition,
        position: state.cursor.position,
        currentLeaderEpoch: state.leaderEpoch,
        lastFetchedEpoch: state.cursor.lastFetchedEpoch,
        generation: state.cursor.generation,
      })
    }
    this.#claims.set(node, keys)
    return claimed
  }

  /** Ends loop `node`'s claim: its request was answered (and its answer handled) or failed. */
  settle (node: number): void {
    for (const key of this.#claims.get(node) ?? []) {
      const state = this.#partitions.get(key)
      if (state?.inFlight === node) state.inFlight = undefined
    }
    this.#claims.delete(node)
  }

  /** Loop `node` hands an answer of these partitions to the listener (Invariant D): no other loop claims them until `handed`. */
  handing (node: number, partitions: ReadonlyArray<{ readonly topic: string, readonly partition: number }>): void {
    for (const { topic, partition } of partitions) {
      const state = this.#partitions.get(keyOf(topic, partition))
      if (state !== undefined) state.handingBy = node
    }
  }

  /** Loop `node`'s hand-over of these partitions ended. */
  handed (node: number, partitions: ReadonlyArray<{ readonly topic: string, readonly partition: number }>): void {
    for (const { topic, partition } of partitions) {
      const state = this.#partitions.get(keyOf(topic, partition))
      if (state?.handingBy === node) state.handingBy = undefined
    }
  }

  /** The partition's assignment count (`ClaimedPartition.generation`); undefined when not assigned. */
  generation (topic: string, partition: number): number | undefined {
    return this.#partitions.get(keyOf(topic, partition))?.cursor.generation
  }

  /** Whether an answer for `claimed` still applies: the partition is assigned, in the same generation, at the same position. */
  current (claimed: ClaimedPartition): boolean {
    const state = this.#partitions.get(keyOf(claimed.topic, claimed.partition))
    const cursor = state?.cursor
    return cursor !== undefined && cursor.generation === claimed.generation && cursor.position === claimed.position && cursor.stoppedFor === undefined
  }

  /**
   * Moves the position of a partition answered for `claimed` past the batches read (Invariant B): `firstLastOffset`
   * is the last offset of the first batch handed out (undefined: none), `nextOffset` the offset after the last
   * batch read, `lastEpoch` that batch's leader epoch. Throws when the batches would overlap offsets handed out.
   */
  advance (claimed: ClaimedPartition, handed: { firstLastOffset: bigint | undefined, lastHandedOffset: bigint | undefined }, nextOffset: bigint,
    lastEpoch: number | undefined): void {
    const cursor = this.#partitions.get(keyOf(claimed.topic, claimed.partition))?.cursor
    if (cursor === undefined || !this.current(claimed)) return
    if (handed.firstLastOffset !== undefined && (handed.firstLastOffset < cursor.position || handed.firstLastOffset <= cursor.lastHandedOffset)) {
      throw new MirrorError(ErrorCodes.INTERNAL, `${claimed.topic}-${claimed.partition}: a batch ending at ${handed.firstLastOffset} ` +
        `handed out at position ${cursor.position} (Invariant B)`)
    }
    if (nextOffset < cursor.position) {
      throw new MirrorError(ErrorCodes.INTERNAL, `${claimed.topic}-${claimed.partition}: position moved back from ${cursor.position} to ${nextOffset}`)
    }
    cursor.position = nextOffset
    if (lastEpoch !== undefined) cursor.lastFetchedEpoch = lastEpoch
    if (handed.lastHandedOffset !== undefined) cursor.lastHandedOffset = handed.lastHandedOffset
  }

  /** Checks Invariants A to C; throws a MirrorError naming the first one broken. */
  checkInvariants (): void {
    const broken = (message: string): never => { throw new MirrorError(ErrorCodes.INTERNAL, `fetch assignments: ${message}`) }
    const seen = new Map<string, number>()
    for (const [node, keys] of this.#claims) {
      for (const key of keys) {
        const other = seen.get(key)
        if (other !== undefined) broken(`${key} claimed by loops ${other} and ${node} (Invariant A)`)
        seen.set(key, node)
        const state = this.#partitions.get(key)
        if (state !== undefined && state.inFlight !== node) broken(`${key} claimed by loop ${node}, in flight on ${String(state.inFlight)} (Invariant A)`)
      }
    }
    for (const [key, state] of this.#partitions) {
      if (state.inFlight !== undefined && seen.get(key) !== state.inFlight) broken(`${key} in flight on ${state.inFlight} without its claim (Invariant A)`)
      if (state.handingBy !== undefined && state.inFlight !== undefined && state.inFlight !== state.handingBy) {
        broken(`${key} handed over by loop ${state.handingBy} and in flight on loop ${state.inFlight} (Invariant D)`)
      }
      const { position, lastHandedOffset } = state.cursor
      if (lastHandedOffset >= position) broken(`${key} position ${position} not past ${lastHandedOffset} handed out (Invariant B)`)
      if (position < 0n) broken(`${key} position ${position} (Invariant B)`)
    }
  }
}
