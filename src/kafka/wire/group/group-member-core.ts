import { ErrorCodes, MirrorError } from '../../../shared/errors.js'
import { retry } from '../../../shared/retry.js'
import { commitOffsets, fetchCommittedOffsets, FENCING_COMMIT_ERRORS, type Committer, type PartitionOffset } from './committed-offsets.js'
import { GroupCoordinator } from './group-coordinator.js'
import { coordinatorMoved, GroupErrors, groupErrorName } from './group-errors.js'
import type { GroupMember, GroupMemberOptions } from './group-member.js'
import type { GroupMemberListener } from './group-member-listener.js'
import { PartitionOwnership, type Reconciled } from './partition-ownership.js'
import type { TopicPartition } from './topic-partition.js'

const FENCING_NAMES = new Set([...FENCING_COMMIT_ERRORS].map(groupErrorName))
const COORDINATOR_NAMES = new Set(Object.entries(GroupErrors).filter(([, code]) => coordinatorMoved(code)).map(([name]) => name))

/**
 * What both protocols' members share: the coordinator's connections, the owned partitions, the loop that
 * runs one membership session after another (retries live here and only here: a retriable failure of a
 * session waits with backoff, `shared/retry.ts`, and the session starts again), commits, and the stop
 * sequence: revoke everything while the membership still stands (the owner commits with the current
 * generation or epoch), then leave, then close.
 *
 * Invariant M1: no partition is taken while the member is stopping or stopped (reconciliations then aim at
 * no partitions), and the owned partitions of a stopped member are none.
 * Invariant M2 (O1 to O3): see `PartitionOwnership`.
 */
export abstract class GroupMemberCore implements GroupMember {
  protected readonly options: GroupMemberOptions
  protected readonly coordinator: GroupCoordinator
  protected readonly ownership: PartitionOwnership
  protected readonly abort = new AbortController()
  protected readonly instanceId: string | null
  #loop: Promise<void> | undefined
  #failure: Error | undefined
  #stopping = false
  #stopped: Promise<void> | undefined
  #started: { promise: Promise<void>, resolve: () => void, reject: (error: Error) => void }
  #wake: (() => void) | undefined
  #wakeRequested = false

  constructor (options: GroupMemberOptions, listener: GroupMemberListener, coordinatorTimeoutMs: number) {
    this.options = options
    this.instanceId = options.groupInstanceId ?? null
    this.coordinator = new GroupCoordinator(options, options.groupId, coordinatorTimeoutMs)
    this.ownership = new PartitionOwnership(listener, error => this.report(error))
    let resolve!: () => void
    let reject!: (error: Error) => void
    const promise = new Promise<void>((_resolve, _reject) => { resolve = _resolve; reject = _reject })
    // start() hands this rejection on; a member stopped before start() settles has no one else to tell.
    promise.catch(() => undefined)
    this.#started = { promise, resolve, reject }
    this.abort.signal.addEventListener('abort', () => this.wake())
  }

  abstract get memberId (): string
  abstract get generationIdOrMemberEpoch (): number
  /** One membership session: join, reconcile, keep the membership until it must be joined again (return) or fails (throw). */
  protected abstract session (): Promise<void>
  /** Tells the coordinator the member leaves (after every partition was revoked). */
  protected abstract leave (): Promise<void>

  get owned (): readonly TopicPartition[] {
    return this.ownership.owned
  }

  get failure (): Error | undefined {
    return this.#failure
  }

  protected get stopping (): boolean {
    return this.#stopping || this.abort.signal.aborted
  }

  /** Joins, then resolves once the first assignment was reconciled; rejects when the member fails first. */
  async start (): Promise<void> {
    if (this.#loop !== undefined || this.#stopped !== undefined) {
      throw new MirrorError(ErrorCodes.INTERNAL, `group ${this.options.groupId}: member started twice, or after stop()`)
    }
    this.#loop = this.#run()
    await this.#started.promise
  }

  async #run (): Promise<void> {
    const policy = {
      signal: this.abort.signal,
      initialBackoffMs: this.options.retryBackoffMs ?? 100,
      maxBackoffMs: this.options.retryBackoffMaxMs ?? 1000,
      onRetry: (error: unknown) => {
        this.report(error)
        const mirrorError = error as Partial<MirrorError>
        const lost = mirrorError.code === ErrorCodes.CONNECTION
        if (lost || COORDINATOR_NAMES.has(mirrorError.kafkaCode ?? '')) this.coordinator.reset(lost)
      },
    }
    while (!this.abort.signal.aborted) {
      try {
        this.#wakeRequested = false
        await retry(() => this.session(), policy)
      } catch (error) {
        if (this.abort.signal.aborted) break
        this.fail(error as Error)
      }
    }
    if (this.#failure !== undefined) {
      await this.ownership.loseAll()
      await this.coordinator.stop()
    }
  }

  /** Resolves `start()`: the first assignment was reconciled. */
  protected markStarted (): void {
    this.#started.resolve()
  }

  /** Ends the member: a fatal error (it owns nothing afterwards, see `#run`). */
  protected fail (error: Error): void {
    if (this.#failure !== undefined || this.#stopping) return
    this.#failure = error
    this.report(error)
    this.#started.reject(error)
    this.abort.abort()
  }

  protected report (error: unknown): void {
    this.options.onError?.(error)
  }

  /** Moves the owned partitions to `target` (none while stopping, M1). */
  protected reconcile (target: readonly TopicPartition[]): Promise<Reconciled> {
    return this.ownership.reconcile(this.stopping ? [] : target)
  }

  /** Ends the current `pause()` early: the session has something to do (join again, acknowledge). */
  protected wake (): void {
    this.#wakeRequested = true
    this.#wake?.()
  }

  /** Waits `ms` (Infinity: until woken), or less when woken or aborted; a wake before the pause ends it at once. */
  protected async pause (ms: number): Promise<void> {
    if (this.#wakeRequested || this.abort.signal.aborted) {
      this.#wakeRequested = false
      return
    }
    await new Promise<void>(resolve => {
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined
      const self = this
      function done (): void {
        clearTimeout(timer)
        self.#wake = undefined
        resolve()
      }
      this.#wake = done
    })
    this.#wakeRequested = false
  }

  /** Who commits now. */
  protected committer (): Committer {
    const { groupId } = this.options
    return { groupId, memberId: this.memberId, generationIdOrMemberEpoch: this.generationIdOrMemberEpoch, groupInstanceId: this.instanceId }
  }

  async commit (offsets: readonly PartitionOffset[]): Promise<void> {
    const connection = await this.coordinator.connection()
    try {
      await commitOffsets(connection, this.committer(), offsets)
    } catch (error) {
      // A refusal that fences this member: its session learns the group moved on when it next asks, so ask now.
      if (FENCING_NAMES.has((error as MirrorError).kafkaCode ?? '')) this.wake()
      throw error
    }
  }

  async committed (partitions: readonly TopicPartition[]): Promise<Map<string, bigint>> {
    return fetchCommittedOffsets(await this.coordinator.connection(), this.options.groupId, partitions)
  }

  checkInvariants (): void {
    this.ownership.checkInvariants()
    if (this.#stopped !== undefined && !this.ownership.busy && this.owned.length > 0 && this.abort.signal.aborted) {
      throw new MirrorError(ErrorCodes.INTERNAL, `invariant M1: a stopped member of group ${this.options.groupId} owns ${this.owned.length} partitions`)
    }
  }

  /**
   * Revokes every partition while the membership stands (the owner drains and commits), then stops the
   * session, leaves (see `leave()`) and closes the connections. Once-only; later calls wait for the first.
   */
  stop (): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true
      if (this.#failure === undefined) await this.ownership.revokeAll()
      this.abort.abort()
      await this.#loop
      if (this.#failure === undefined && this.#loop !== undefined) {
        try {
          await this.leave()
        } catch (error) {
          // A leave that does not arrive costs the group a session timeout, not a partition: report and go on.
          this.report(error)
        }
      }
      await this.coordinator.stop()
    })()
    return this.#stopped
  }
}
