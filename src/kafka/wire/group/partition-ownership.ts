import { ErrorCodes, MirrorError } from '../../../shared/errors.js'
import type { GroupMemberListener } from './group-member-listener.js'
import { partitionKey, partitionsMissingFrom, sortPartitions, type TopicPartition } from './topic-partition.js'

/** What one reconciliation did. */
export interface Reconciled {
  readonly revoked: readonly TopicPartition[]
  readonly assigned: readonly TopicPartition[]
}

/**
 * The partitions one member owns, and the one way they change: towards a target assignment, revoking first.
 * Both group protocols reconcile through it (KIP-429's cooperative rebalance and KIP-848's reconciliation
 * give up partitions before taking new ones, so that a partition moving between members is never held by two).
 *
 * Invariant O1: no partition is given up before the owner's `revoking()` for it resolved (or rejected), except
 * through `loseAll()`, the fenced member's way, which tells the owner `lost()` and commits nothing.
 * Invariant O2: while partitions are being revoked, none is taken: `assigned()` is called only after the
 * revocation of the same reconciliation finished.
 * Invariant O3: the partitions being revoked are owned partitions, and calls to the listener never overlap
 * (one reconciliation at a time; a second waits for the first).
 */
export class PartitionOwnership {
  readonly #listener: GroupMemberListener
  readonly #owned = new Map<string, TopicPartition>()
  #revoking: TopicPartition[] = []
  #phase: 'idle' | 'revoking' | 'assigning' | 'losing' = 'idle'
  #queue: Promise<unknown> = Promise.resolve()
  /** Called with a listener's rejection (the partitions are given up or taken all the same). */
  readonly #onListenerError: (error: unknown) => void

  constructor (listener: GroupMemberListener, onListenerError: (error: unknown) => void) {
    this.#listener = listener
    this.#onListenerError = onListenerError
  }

  /** The partitions owned now, in topic and partition order (those being revoked included, until revoked). */
  get owned (): TopicPartition[] {
    return sortPartitions(this.#owned.values())
  }

  /** True while a reconciliation is under way. */
  get busy (): boolean {
    return this.#phase !== 'idle'
  }

  /**
   * Moves to owning exactly `target`: revokes the owned partitions it lacks (O1, awaiting `revoking()`), then
   * takes its new ones (O2). Reconciliations run one after another in call order (O3).
   */
  reconcile (target: readonly TopicPartition[]): Promise<Reconciled> {
    return this.#serial(async () => {
      const revoked = partitionsMissingFrom(this.#owned.values(), target)
      if (revoked.length > 0) {
        this.#phase = 'revoking'
        this.#revoking = revoked
        await this.#call(() => this.#listener.revoking(revoked))
        for (const partition of revoked) this.#owned.delete(partitionKey(partition))
        this.#revoking = []
      }
      const assigned = sortPartitions(partitionsMissingFrom(target, this.#owned.values()))
      if (assigned.length > 0) {
        this.#phase = 'assigning'
        for (const partition of assigned) this.#owned.set(partitionKey(partition), partition)
        await this.#call(() => this.#listener.assigned(assigned))
      }
      return { revoked, assigned }
    })
  }

  /** Gives every owned partition up, as `reconcile([])` does (a member leaving the group). */
  async revokeAll (): Promise<readonly TopicPartition[]> {
    return (await this.reconcile([])).revoked
  }

  /** The member was fenced: every owned partition is dropped and the owner told `lost()`, with nothing committed. */
  loseAll (): Promise<readonly TopicPartition[]> {
    return this.#serial(async () => {
      const lost = this.owned
      if (lost.length === 0) return lost
      this.#phase = 'losing'
      this.#owned.clear()
      await this.#call(() => this.#listener.lost(lost))
      return lost
    })
  }

  /** Throws when an invariant does not hold (O3: what is being revoked is owned; the phase matches). */
  checkInvariants (): void {
    for (const partition of this.#revoking) {
      if (!this.#owned.has(partitionKey(partition))) {
        throw new MirrorError(ErrorCodes.INTERNAL, `invariant O3: ${partitionKey(partition)} is being revoked but not owned`)
      }
    }
    if (this.#revoking.length > 0 && this.#phase !== 'revoking') {
      throw new MirrorError(ErrorCodes.INTERNAL, `invariant O2: partitions being revoked in phase ${this.#phase}`)
    }
  }

  async #call (callback: () => Promise<void>): Promise<void> {
    try {
      await callback()
    } catch (error) {
      this.#onListenerError(error)
    }
  }

  #serial<T> (step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      try {
        return await step()
      } finally {
        this.#phase = 'idle'
      }
    })
    // The queue only orders the steps; each step's own promise carries its result and its error to its caller.
    this.#queue = run.catch(() => undefined)
    return run
  }
}
