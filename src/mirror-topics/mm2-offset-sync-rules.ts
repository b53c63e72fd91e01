import type { Mm2OffsetSyncRecord } from './mm2-records.js'
import { partitionKey } from '../shared/partition-key.js'

/** At most this many syncs wait per partition between two flushes; beyond, the newest replaces the last waiting one. */
const MAX_WAITING_SYNCS_PER_PARTITION = 1_000

/** MirrorMaker 2's per-partition state (`OffsetSyncWriter.PartitionState`); -1 is "none yet". */
interface PartitionState {
  readonly topic: string
  readonly partition: number
  previousUpstream: bigint
  previousDownstream: bigint
  lastSyncDownstream: bigint
  /** Syncs a rule asked for, oldest first, not yet written (MirrorMaker 2's pending syncs). */
  waiting: Mm2OffsetSyncRecord[]
  /** The last record's sync when no rule asked for it: written at the next flush (MirrorMaker 2's delayed sync). */
  delayed: Mm2OffsetSyncRecord | undefined
  /** The last sync handed out for writing, so the same one is not written twice. */
  lastHandedOut: Mm2OffsetSyncRecord | undefined
}

/** What a flush writes, and what to mark written once it is durable. */
export interface Mm2SyncsToWrite {
  readonly syncs: readonly Mm2OffsetSyncRecord[]
  /** Per partition, how many waiting syncs and which delayed one `syncs` holds. */
  readonly taken: ReadonlyArray<{ readonly state: PartitionState, readonly waiting: number, readonly delayed: Mm2OffsetSyncRecord | undefined }>
}

function same (a: Mm2OffsetSyncRecord | undefined, b: Mm2OffsetSyncRecord): boolean {
  return a !== undefined && a.upstreamOffset === b.upstreamOffset && a.downstreamOffset === b.downstreamOffset
}

/**
 * MirrorMaker 2's rules for when an offset sync is written (Kafka 4.1 `OffsetSyncWriter`,
 * `MirrorSourceTask.commitRecord` and `commit`), applied to every record the target acknowledged,
 * in target-offset order per partition. A record's sync {upstream, downstream} is asked for when:
 * - it is the partition's first record since this process started;
 * - its downstream offset is `offset.lag.max` or more past the last asked-for sync's + 1 (what
 *   MirrorMaker 2's translation would give: "sync + 1" is then too far behind);
 * - its upstream offset does not follow the previous record's (a gap: transaction markers, aborted
 *   or compacted records, a new position);
 * - its downstream offset is below the previous record's (the target topic was truncated or recreated).
 * Otherwise it becomes the partition's delayed sync, written at the next flush (MirrorMaker 2
 * promotes delayed syncs at each offset commit, so a quiet partition's last record is synced too).
 * Memory: at most `MAX_WAITING_SYNCS_PER_PARTITION` waiting syncs per partition (then the newest
 * replaces the last, as MirrorMaker 2 replaces a pending sync it could not send yet) and one delayed.
 * Pure: no I/O; the emitter writes what `toWrite()` gives and confirms with `written()`.
 */
export class Mm2OffsetSyncRules {
  readonly #maxOffsetLag: bigint
  readonly #maxWaiting: number
  readonly #partitions = new Map<string, PartitionState>()

  /** `maxOffsetLagRecords`: `offset.lag.max` (0 asks for a sync at every record). */
  constructor (maxOffsetLagRecords: number, maxWaitingPerPartition = MAX_WAITING_SYNCS_PER_PARTITION) {
    this.#maxOffsetLag = BigInt(maxOffsetLagRecords)
    this.#maxWaiting = Math.max(1, maxWaitingPerPartition)
  }

  #state (topic: string, partition: number): PartitionState {
    const key = partitionKey(topic, partition)
    let state = this.#partitions.get(key)
    if (state === undefined) {
      state = {
        topic,
        partition,
        previousUpstream: -1n,
        previousDownstream: -1n,
        lastSyncDownstream: -1n,
        waiting: [],
        delayed: undefined,
        lastHandedOut: undefined,
      }
      this.#partitions.set(key, state)
    }
    return state
  }

  #askFor (state: PartitionState, sync: Mm2OffsetSyncRecord, out?: Mm2OffsetSyncRecord[]): void {
    state.lastSyncDownstream = sync.downstreamOffset
    state.delayed = undefined
    if (out !== undefined) {
      out.push(sync)
      return
    }
    if (state.waiting.length >= this.#maxWaiting) state.waiting[state.waiting.length - 1] = sync
    else state.waiting.push(sync)
  }

  /**
   * Records `upstreamStart + i` were written at `downstreamStart + i`, for i below `count` (a run of
   * consecutive offsets on both sides). With `out`, the syncs the rules ask for are pushed there
   * instead of waiting for a flush (exactly-once: written in the records' own transaction), and the
   * run's last record does not become the delayed sync (`delayedAfterCommit` does that once the
   * transaction committed). With `fanOut` (a message handler), a first record carrying the
   * previous record's source offset is a further output of it and is passed over.
   */
  acknowledgedRun (
    topic: string,
    partition: number,
    upstreamStart: bigint,
    downstreamStart: bigint,
    count: number,
    fanOut = false,
    out?: Mm2OffsetSyncRecord[]
  ): void {
    const state = this.#state(topic, partition)
    if (fanOut && count > 0 && upstreamStart === state.previousUpstream) {
      state.previousDownstream = downstreamStart
      upstreamStart++
      downstreamStart++
      count--
    }
    if (count <= 0) return
    const sync = (i: bigint): Mm2OffsetSyncRecord => ({ topic, partition, upstreamOffset: upstreamStart + i, downstreamOffset: downstreamStart + i })
    const first = sync(0n)
    const firstAskedFor =
      state.lastSyncDownstream === -1n ||
      first.downstreamOffset - (state.lastSyncDownstream + 1n) >= this.#maxOffsetLag ||
      first.upstreamOffset - state.previousUpstream !== 1n ||
      first.downstreamOffset < state.previousDownstream
    if (firstAskedFor) this.#askFor(state, first, out)
    const last = BigInt(count - 1)
    // The rest of the run follows on on both sides: only offset.lag.max can ask for a sync, at every (lag + 1)th downstream offset.
    const step = this.#maxOffsetLag + 1n
    let next = state.lastSyncDownstream + step - downstreamStart
    if (next < 1n) next = 1n
    let lastAskedFor = firstAskedFor ? 0n : -1n
    if (next <= last) {
      const asks = (last - next) / step + 1n
      const room = BigInt(out === undefined ? this.#maxWaiting - state.waiting.length : Number.MAX_SAFE_INTEGER)
      // Past the room left, only the newest counts (it replaces the last waiting one): skip the ones between.
      for (let k = 0n; k < asks; k++) {
        if (k === room && asks > room + 1n) k = asks - 1n
        this.#askFor(state, sync(next + k * step), out)
      }
      lastAskedFor = next + (asks - 1n) * step
    }
    state.previousUpstream = upstreamStart + last
    state.previousDownstream = downstreamStart + last
    if (lastAskedFor !== last && out === undefined) state.delayed = sync(last)
  }

  /** Exactly-once: the partition's last committed record becomes its delayed sync unless the transaction held a sync for it. */
  delayedAfterCommit (topic: string, partition: number, upstreamOffset: bigint, downstreamOffset: bigint): void {
    const state = this.#state(topic, partition)
    const sync = { topic, partition, upstreamOffset, downstreamOffset }
    // A sync at or past it was asked for already (possibly by a later transaction, written while this one committed).
    if (downstreamOffset <= state.lastSyncDownstream || same(state.lastHandedOut, sync)) return
    state.delayed = sync
  }

  /** Notes syncs written elsewhere (in a transaction) so a flush does not write them again. */
  handedOut (syncs: readonly Mm2OffsetSyncRecord[]): void {
    for (const sync of syncs) this.#state(sync.topic, sync.partition).lastHandedOut = sync
  }

  /**
   * The syncs to write now: per partition, the waiting ones in order, then the delayed one unless
   * `withDelayed` is false (a write as records are acknowledged: MirrorMaker 2 sends its pending
   * syncs at once and promotes the delayed ones only at its offset commit, KAFKA-14610).
   */
  toWrite (withDelayed = true): Mm2SyncsToWrite {
    const syncs: Mm2OffsetSyncRecord[] = []
    const taken: Array<Mm2SyncsToWrite['taken'][number]> = []
    for (const state of this.#partitions.values()) {
      const delayed = withDelayed && state.delayed !== undefined && !same(state.lastHandedOut, state.delayed) ? state.delayed : undefined
      if (state.waiting.length === 0 && delayed === undefined) continue
      syncs.push(...state.waiting)
      if (delayed !== undefined) syncs.push(delayed)
      taken.push({ state, waiting: state.waiting.length, delayed: withDelayed ? state.delayed : undefined })
    }
    return { syncs, taken }
  }

  /** What `toWrite()` gave is durable: it stops waiting (syncs asked for meanwhile stay). */
  written (done: Mm2SyncsToWrite): void {
    for (const { state, waiting, delayed } of done.taken) {
      const last = state.waiting[waiting - 1]
      state.waiting.splice(0, waiting)
      if (delayed !== undefined && state.delayed === delayed) {
        state.delayed = undefined
        state.lastHandedOut = delayed
      } else if (last !== undefined) {
        state.lastHandedOut = last
      }
    }
  }
}
