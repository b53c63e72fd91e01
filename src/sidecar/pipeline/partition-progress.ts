import type { MirrorBatch } from '../../ports/mirror-batch.js'
import { partitionKey } from '../../shared/partition-key.js'
import type { CommitCandidate } from '../../ports/ports.js'
import type { PartitionSnapshot } from '../../ports/pipeline-observer.js'

interface InFlight {
  readonly batch: MirrorBatch
  acked: boolean
}

interface PartitionState {
  readonly topic: string
  readonly partition: number
  highWatermark: bigint
  /** Batches handed to the queue and not yet acknowledged, in offset order. */
  readonly inFlight: InFlight[]
  /** Everything below this offset is on the target (acknowledged) or never existed. */
  ackedNext: bigint
  /** Offset after the last batch admitted: records below it were already handed over. */
  admittedNext: bigint
  committed: bigint
  lastProgressMs: number
  /**
   * False when the state was made while the partition was not owned here (a batch fetched before
   * it was revoked, handed over after): dropped when the partition is assigned here again.
   */
  owned: boolean
}

/** The batches one partition had in flight when `whenLanded` was called. */
interface LandedMark {
  readonly key: string
  readonly state: PartitionState
  readonly batches: ReadonlySet<InFlight>
}

interface LandedWaiter {
  readonly marks: readonly LandedMark[]
  readonly wake: () => void
}

/**
 * Per source partition: what was handed to the producers, what the target acknowledged, and what
 * may be committed. The committable offset only moves over acknowledged batches, in offset order,
 * so a commit never covers a record the target has not acknowledged.
 *
 * Invariants, for every partition's state (`checkInvariants` asserts them):
 * - A: the batches in flight are in offset order and do not overlap (callers admit a partition's
 *   batches in offset order; `admitFrom` drops what was handed over already).
 * - B: the head of the batches in flight is never acknowledged: an acknowledged head leaves flight
 *   at once, so what stays in flight starts at the oldest record the target has not acknowledged.
 * - C: the committable offset (`ackedNext`, what `commitCandidates` offers) never passes an
 *   unacknowledged record: with batches in flight it is at most the end of the head batch (its
 *   start, or where `acknowledgedPrefix` put it inside the head), so commits only cover
 *   acknowledged, contiguous offsets.
 * - D: the committable offset is never past what was handed over (`ackedNext <= admittedNext`).
 * - E: the count of batches in flight is the sum over the partitions' states, and nobody waits for
 *   `whenIdle` while it is zero.
 * - F: a state is filed under its own partition's key and holds only that partition's batches.
 */
export class PartitionProgress {
  readonly #states = new Map<string, PartitionState>()
  /** The partitions owned here as of the last `retain`; undefined before the first assignment. */
  #owned: ReadonlySet<string> | undefined
  /** The state each commit candidate was taken from (`stillCommittable`). */
  readonly #candidateStates = new WeakMap<CommitCandidate, PartitionState>()
  /** Batches in flight over every partition (the sum of the states' `inFlight`). */
  #inFlight = 0
  readonly #idleWaiters: Array<() => void> = []
  /** Who waits for `whenLanded`: the batches each partition had in flight at the call. */
  #landedWaiters: LandedWaiter[] = []

  /**
   * Throws an Error naming the first invariant (A-F in the class comment) the state breaks. For
   * tests: they call it after every step.
   */
  checkInvariants (): void {
    let inFlight = 0
    for (const [key, state] of this.#states) {
      const at = `partition ${state.topic}/${state.partition}`
      if (key !== partitionKey(state.topic, state.partition)) throw new Error(`Invariant F broken: ${at} filed under another key`)
      inFlight += state.inFlight.length
      let previousNext: bigint | undefined
      for (const { batch } of state.inFlight) {
        if (batch.sourceTopic !== state.topic || batch.partition !== state.partition) {
          throw new Error(`Invariant F broken: ${at} holds a batch of ${batch.sourceTopic}/${batch.partition}`)
        }
        if (previousNext !== undefined && batch.firstOffset < previousNext) {
          throw new Error(`Invariant A broken: ${at} has a batch from ${batch.firstOffset} in flight after one up to ${previousNext}`)
        }
        previousNext = batch.nextOffset
      }
      const head = state.inFlight[0]
      if (head?.acked === true) throw new Error(`Invariant B broken: ${at} keeps an acknowledged batch at the head of flight`)
      if (head !== undefined && state.ackedNext > head.batch.nextOffset) {
        throw new Error(`Invariant C broken: ${at} may commit ${state.ackedNext}, past unacknowledged records from ${head.batch.firstOffset}`)
      }
      if (state.ackedNext > state.admittedNext) {
        throw new Error(`Invariant D broken: ${at} may commit ${state.ackedNext}, past what was handed over (${state.admittedNext})`)
      }
    }
    if (inFlight !== this.#inFlight) throw new Error(`Invariant E broken: ${this.#inFlight} batches counted in flight, ${inFlight} held`)
    if (this.#inFlight === 0 && this.#idleWaiters.length > 0) throw new Error('Invariant E broken: whenIdle waits while nothing is in flight')
  }

  /** `count` batches left flight; wakes who waits for `whenIdle` when none is left, and for `whenLanded` when its batches left. */
  #landed (count: number): void {
    if (count === 0) return
    this.#inFlight -= count
    // Invariant E: who waits for idle is woken the moment the count reaches zero.
    if (this.#inFlight === 0 && this.#idleWaiters.length > 0) for (const wake of this.#idleWaiters.splice(0)) wake()
    if (this.#landedWaiters.length > 0) {
      this.#landedWaiters = this.#landedWaiters.filter(waiter => {
        if (!waiter.marks.every(mark => this.#hasLanded(mark))) return true
        waiter.wake()
        return false
      })
    }
  }

  /**
   * True when none of the batches `mark` took remains in flight: its partition's state was dropped
   * or replaced, or the oldest batch in flight is not one of them (batches are only appended after
   * them, and leave from anywhere, so when the head is newer they all left).
   */
  #hasLanded (mark: LandedMark): boolean {
    const head = mark.state.inFlight[0]
    return this.#states.get(mark.key) !== mark.state || head === undefined || !mark.batches.has(head)
  }

  #state (topic: string, partition: number, startOffset: bigint): PartitionState {
    const key = partitionKey(topic, partition)
    let state = this.#states.get(key)
    if (state === undefined) {
      state = {
        topic,
        partition,
        highWatermark: -1n,
        inFlight: [],
        ackedNext: startOffset,
        admittedNext: startOffset,
        committed: -1n,
        lastProgressMs: 0,
        owned: this.#owned?.has(key) ?? true,
      }
      this.#states.set(key, state)
    }
    return state
  }

  /**
   * Decides which part of a fetched batch is new. After a rebalance the consumer fetches again from
   * the committed offset; records this process already handed over are dropped here, so they are
   * not written twice. Returns the index of the first record to keep (records.length: none).
   */
  admitFrom (topic: string, partition: number, records: ReadonlyArray<{ readonly offset: string }>): number {
    const first = records[0]
    if (first === undefined) return 0
    const firstOffset = BigInt(first.offset)
    const state = this.#state(topic, partition, firstOffset)
    if (firstOffset >= state.admittedNext) return 0
    let index = 0
    while (index < records.length && BigInt((records[index] as { offset: string }).offset) < state.admittedNext) index++
    return index
  }

  /** Records that `batch` was pushed to the queue. Batches of a partition must arrive in offset order. */
  admitted (batch: MirrorBatch): void {
    const state = this.#state(batch.sourceTopic, batch.partition, batch.firstOffset)
    if (state.inFlight.length === 0 && batch.firstOffset > state.ackedNext) state.ackedNext = batch.firstOffset
    // Invariant A: appended in the offset order the caller admits in. Invariant E: counted with it.
    state.inFlight.push({ batch, acked: false })
    this.#inFlight++
    if (batch.nextOffset > state.admittedNext) state.admittedNext = batch.nextOffset
  }

  /** Takes back a batch that was admitted but never reached the queue (the queue closed). */
  abandoned (batch: MirrorBatch): void {
    const state = this.#states.get(partitionKey(batch.sourceTopic, batch.partition))
    if (state === undefined) return
    const index = state.inFlight.findIndex(item => item.batch === batch)
    if (index >= 0) {
      state.inFlight.splice(index, 1)
      this.#landed(1)
    }
    if (batch.firstOffset < state.admittedNext) state.admittedNext = batch.firstOffset
  }

  /** Marks that the consumer moved past offsets without records (control records, compaction). */
  skipped (topic: string, partition: number, nextOffset: bigint): void {
    const state = this.#state(topic, partition, nextOffset)
    if (nextOffset > state.admittedNext) state.admittedNext = nextOffset
    // Invariant C: a skip passes the committable offset at once only when nothing is in flight.
    if (state.inFlight.length === 0 && nextOffset > state.ackedNext) state.ackedNext = nextOffset
  }

  /** Records that the target acknowledged every record of `batch`. */
  acknowledged (batch: MirrorBatch, nowMs: number): void {
    const state = this.#states.get(partitionKey(batch.sourceTopic, batch.partition))
    if (state === undefined) return
    const entry = state.inFlight.find(item => item.batch === batch)
    if (entry === undefined) return
    entry.acked = true
    state.lastProgressMs = nowMs
    let landed = 0
    // Invariants B and C: the committable offset moves only over the acknowledged batches at the
    // head, which leave flight; an acknowledged batch behind an unacknowledged one waits.
    while (state.inFlight[0]?.acked === true) {
      const done = state.inFlight.shift() as InFlight
      landed++
      if (done.batch.nextOffset > state.ackedNext) state.ackedNext = done.batch.nextOffset
    }
    // A skip recorded while batches were in flight is applied once they are all acknowledged.
    if (state.inFlight.length === 0 && state.admittedNext > state.ackedNext) state.ackedNext = state.admittedNext
    this.#landed(landed)
  }

  /**
   * Records that the records of `batch` before `nextOffset` are on the target but the rest is not
   * (the mirror stops on a failed record): commits may reach `nextOffset`, never beyond.
   */
  acknowledgedPrefix (batch: MirrorBatch, nextOffset: bigint, nowMs: number): void {
    const state = this.#states.get(partitionKey(batch.sourceTopic, batch.partition))
    // Invariant C: only the head's prefix counts; a later batch's prefix sits behind unacknowledged records.
    if (state === undefined || state.inFlight[0]?.batch !== batch) return
    state.lastProgressMs = nowMs
    if (nextOffset > state.ackedNext) state.ackedNext = nextOffset
  }

  /**
   * The offset below which every record of the partition is acknowledged (exactly-once: written in
   * a committed transaction) or never needed copying; undefined for a partition not seen yet.
   */
  acknowledgedNext (topic: string, partition: number): bigint | undefined {
    return this.#states.get(partitionKey(topic, partition))?.ackedNext
  }

  /** The offset after what was handed to the producers (or skipped); undefined for a partition not seen yet. */
  admittedNext (topic: string, partition: number): bigint | undefined {
    return this.#states.get(partitionKey(topic, partition))?.admittedNext
  }

  /**
   * Exactly-once: the partition starts over from `position`, the next offset committed on the
   * target (records below it are dropped at intake), or, with no position, from whatever the
   * source fetches next. What was in flight here belonged to a transaction that will not commit.
   */
  resume (topic: string, partition: number, position: bigint | undefined): void {
    const key = partitionKey(topic, partition)
    const previous = this.#states.get(key)
    const committed = previous?.committed ?? -1n
    if (position === undefined) this.#states.delete(key)
    else {
      this.#states.set(key, {
        topic,
        partition,
        highWatermark: -1n,
        inFlight: [],
        ackedNext: position,
        admittedNext: position,
        committed,
        lastProgressMs: 0,
        owned: true,
      })
    }
    this.#landed(previous?.inFlight.length ?? 0)
  }

  observeHighWatermark (topic: string, partition: number, highWatermark: bigint, fetchOffset: bigint): void {
    const state = this.#state(topic, partition, fetchOffset)
    state.highWatermark = highWatermark
  }

  /** Offsets that moved since the last commit, for `partitions` this member owns (all when undefined). */
  commitCandidates (owned?: ReadonlySet<string>): CommitCandidate[] {
    const candidates: CommitCandidate[] = []
    for (const [key, state] of this.#states) {
      if (!state.owned || (owned !== undefined && !owned.has(key))) continue
      if (state.ackedNext <= state.committed) continue
      const lag = state.highWatermark >= state.ackedNext ? state.highWatermark - state.ackedNext : 0n
      const candidate = { topic: state.topic, partition: state.partition, offset: state.ackedNext, lagRecords: lag }
      this.#candidateStates.set(candidate, state)
      candidates.push(candidate)
    }
    return candidates
  }

  /**
   * The `candidates` (from `commitCandidates`) whose partition is still owned here, with the same
   * progress: a partition revoked while the commit waited (for the offset syncs) belongs to another
   * member, and one that came back meanwhile starts over from the group's offset; neither may get
   * the old offset.
   */
  stillCommittable (candidates: readonly CommitCandidate[], owned: ReadonlySet<string>): CommitCandidate[] {
    return candidates.filter(candidate => {
      const key = partitionKey(candidate.topic, candidate.partition)
      const state = this.#candidateStates.get(candidate)
      return state !== undefined && state === this.#states.get(key) && state.owned && owned.has(key)
    })
  }

  committed (offsets: readonly CommitCandidate[]): void {
    for (const { topic, partition, offset } of offsets) {
      const state = this.#states.get(partitionKey(topic, partition))
      if (state !== undefined && offset > state.committed) state.committed = offset
    }
  }

  /**
   * Marks which partitions this process owns after a rebalance. The progress of a partition it
   * lost is dropped: its new owner commits it from then on and moves the group's offset past what
   * this process acknowledged, so if the partition comes back, that old offset would move the
   * group backwards. A partition assigned here starts over from where the source fetches it (the
   * group's committed offset), so no commit of it is ever below that offset. What is still in
   * flight of a lost partition is written, and its acknowledgement no longer moves anything here
   * (the new owner may copy those records again: at least once). State made while a partition
   * was not owned here (a batch fetched before it was revoked, handed over after) is dropped too.
   */
  retain (owned: ReadonlySet<string>): void {
    this.#owned = owned
    let landed = 0
    for (const [key, state] of this.#states) {
      if (owned.has(key) && state.owned) continue
      this.#states.delete(key)
      landed += state.inFlight.length
    }
    this.#landed(landed)
  }

  /** True when nothing is in flight on any partition. */
  get idle (): boolean {
    return this.#inFlight === 0
  }

  /**
   * Resolves once every batch in flight now has left flight (acknowledged, abandoned, or its
   * partition's progress dropped), whatever is admitted after the call: at a rebalance, what was
   * handed over before the source stopped fetching, while other consumers may still hand over more.
   */
  whenLanded (): Promise<void> {
    const marks: LandedMark[] = []
    for (const [key, state] of this.#states) if (state.inFlight.length > 0) marks.push({ key, state, batches: new Set(state.inFlight) })
    if (marks.length === 0) return Promise.resolve()
    return new Promise(resolve => this.#landedWaiters.push({ marks, wake: resolve }))
  }

  /** Resolves once nothing is in flight (at once when so now). */
  whenIdle (): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve()
    return new Promise(resolve => this.#idleWaiters.push(resolve))
  }

  snapshot (): PartitionSnapshot[] {
    const out: PartitionSnapshot[] = []
    for (const state of this.#states.values()) {
      if (!state.owned && state.inFlight.length === 0) continue
      const headBatch = state.inFlight[0]?.batch
      const head = headBatch?.forwarded !== undefined ? { timestamp: String(headBatch.forwarded.firstTimestampMs) } : headBatch?.records[0]
      out.push({
        topic: state.topic,
        partition: state.partition,
        highWatermark: state.highWatermark,
        nextOffsetToMirror: state.ackedNext,
        committedOffset: state.committed,
        oldestUnackedTimestampMs: head === undefined ? undefined : Number(head.timestamp),
        lastProgressMs: state.lastProgressMs,
      })
    }
    return out
  }
}
