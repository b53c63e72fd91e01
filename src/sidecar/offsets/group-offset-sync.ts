import type { FlowConfig } from '../../config/mirror-config.js'
import { errorLabel } from '../../shared/errors.js'
import { GroupAdmin, type GroupOffset, type PartitionLogOffsets } from '../../kafka/group-admin.js'
import { InternalTopicReader, InternalTopicWriter, readInternalTopicBytes } from '../../kafka/internal-topic.js'
import { flowLabels, type FlowLabels } from '../../ports/pipeline-observer.js'
import { isCycle } from '../pipeline/topic-sync.js'
import { settleWithin } from '../../shared/deadline.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import { partitionKey } from '../../shared/partition-key.js'
import { SerialQueue } from '../../shared/serial-queue.js'
import { decodeMm2Checkpoint, encodeMm2Checkpoint, type Mm2CheckpointRecord } from '../../mirror-topics/mm2-records.js'
import { OffsetSyncIndex } from '../../mirror-topics/offset-sync-index.js'
import { offsetSyncsReplication } from './offset-sync-writer.js'
import { decodeOffsetSync } from '../../mirror-topics/offset-sync-record.js'
import type { OffsetsObserver } from './offsets-observer.js'

/** How long `stop()` waits for a running cycle, then for each client to disconnect. */
const STOP_BOUND_MS = 5_000

export interface GroupOffsetSyncOptions {
  readonly logger: Logger
  readonly observer?: OffsetsObserver
  /** Whether this process coordinates the flow now; the timed cycles run only then (default: always). */
  readonly isCoordinator?: () => boolean
}

/** Per group: when its checkpoints were last confirmed current (ms since epoch). */
export interface GroupSyncSnapshot {
  readonly group: string
  readonly lastCheckpointMs: number
}

/** Identity of a checkpoint: group, target topic, partition (the key of MirrorMaker 2's `Checkpoint`). */
function checkpointKey (group: string, targetTopic: string, partition: number): string {
  return `${group}\u0000${partitionKey(targetTopic, partition)}`
}

/** What one cycle decided for one partition of one group. */
interface Decision {
  readonly source: GroupOffset
  readonly targetTopic: string
  readonly targetOffset: bigint
}

/**
 * Checkpoints and consumer-group failover (`emit.checkpoints.*`, `sync.group.offsets.*`): every
 * `groupSync.checkpointIntervalMs` it reads the committed offsets of source groups matching
 * `groupSync.groups` on mirrored topics, translates them exactly with the offset syncs and writes
 * the changed ones as MirrorMaker 2 `Checkpoint` records to `groupSync.checkpointsTopic` (what
 * Kafka's `RemoteClusterUtils.translateOffsets` reads); with `groupSync.enabled`, every
 * `groupSync.intervalMs` it also commits the translations into the same groups on the target.
 * Guarantees: a target group with members is never written (the commit is refused by the broker
 * itself when a member joins meanwhile); a target group's offset never moves backwards unless the
 * source group's offset moved backwards since the last cycle; a partition whose group offset is
 * beyond what was mirrored is left as it is. The mirror's own group is never synced.
 */
export class GroupOffsetSync {
  readonly #flow: FlowConfig
  readonly #labels: FlowLabels
  readonly #logger: Logger
  readonly #observer: OffsetsObserver
  readonly #index = new OffsetSyncIndex()
  readonly #sourceGroups: GroupAdmin
  readonly #targetGroups: GroupAdmin
  readonly #writer: InternalTopicWriter
  readonly #reader: InternalTopicReader
  /** Last checkpoint per key (group, target topic, partition): the source offset the last cycle acted on. */
  readonly #checkpoints = new Map<string, Mm2CheckpointRecord>()
  /** Source offset per key the last time the target group was idle and brought up to date. */
  readonly #applied = new Map<string, bigint>()
  readonly #lastCheckpointMs = new Map<string, number>()
  readonly #activeLogged = new Set<string>()
  readonly #timers: RearmingTimer[] = []
  readonly #isCoordinator: () => boolean
  /** Cycles, one after the other (the two timers never overlap). */
  readonly #cycles = new SerialQueue()
  #stopping: Promise<void> | undefined

  constructor (flow: FlowConfig, options: GroupOffsetSyncOptions) {
    this.#flow = flow
    this.#labels = flowLabels(flow)
    this.#logger = options.logger.child({ flow: flow.name, component: 'group-sync' })
    this.#observer = options.observer ?? {}
    this.#isCoordinator = options.isCoordinator ?? (() => true)
    this.#sourceGroups = new GroupAdmin(flow.source, this.#logger)
    this.#targetGroups = new GroupAdmin(flow.target, this.#logger)
    this.#writer = new InternalTopicWriter(flow.target, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
    this.#reader = new InternalTopicReader(flow.target, flow.offsetSyncs.topic, (key, value) => {
      const entry = decodeOffsetSync(key, value)
      if (entry !== undefined) this.#index.apply(entry)
    }, this.#logger)
  }

  async start (): Promise<void> {
    try {
      await this.#startClients()
    } catch (error) {
      // A stop during the start disconnected the clients under it (a short-lived process): nothing left to start.
      if (this.#stopping !== undefined) return
      throw error
    }
    if (this.#stopping !== undefined) return
    const { groupSync } = this.#flow
    // Re-armed after each cycle: a slow one never overlaps the next.
    // Only the flow's coordinator writes checkpoints and group offsets: several processes would write the same twice.
    if (groupSync.emitCheckpoints) {
      this.#timers.push(new RearmingTimer(groupSync.checkpointIntervalMs, () => (this.#isCoordinator() ? this.#enqueue(false) : Promise.resolve())))
    }
    if (groupSync.enabled) this.#timers.push(new RearmingTimer(groupSync.intervalMs, () => this.#isCoordinator() ? this.#enqueue(true) : Promise.resolve()))
    for (const timer of this.#timers) timer.start()
    this.#logger.info(groupSync.enabled ? 'writing checkpoints and syncing consumer group offsets' : 'writing checkpoints', {
      groups: groupSync.groups.include,
      exclude: groupSync.groups.exclude,
      topic: groupSync.checkpointsTopic,
      checkpointIntervalMs: groupSync.checkpointIntervalMs,
      ...(groupSync.enabled ? { intervalMs: groupSync.intervalMs } : {}),
    })
  }

  /** Connects, creates the offset-syncs and checkpoints topics, and reads what earlier runs checkpointed. */
  async #startClients (): Promise<void> {
    const { groupSync, offsetSyncs } = this.#flow
    await this.#sourceGroups.start()
    await this.#targetGroups.start()
    await this.#writer.start()
    await this.#writer.ensureCompactedTopic(offsetSyncs.topic, offsetSyncsReplication(this.#flow))
    await this.#writer.ensureCompactedTopic(groupSync.checkpointsTopic, {
      replicationFactor: groupSync.checkpointsReplicationFactor,
      key: 'checkpoints.topic.replication.factor',
    })
    // What earlier runs acted on decides whether a target group may move backwards.
    await readInternalTopicBytes(this.#flow.target, groupSync.checkpointsTopic, (key, value) => {
      // Records that are no checkpoint (a tombstone, another version) are MirrorMaker 2's to skip too.
      const checkpoint = decodeMm2Checkpoint(key, value)
      if (checkpoint !== undefined) this.#checkpoints.set(checkpointKey(checkpoint.group, checkpoint.topic, checkpoint.partition), checkpoint)
    }, this.#logger)
    for (const [key, checkpoint] of this.#checkpoints) this.#applied.set(key, checkpoint.upstreamOffset)
    await this.#reader.start()
  }

  /** Runs one cycle now, after the one running: checkpoints, and group offsets when `groupSync.enabled`. Never rejects: failures are logged and counted. */
  syncNow (): Promise<void> {
    return this.#enqueue(this.#flow.groupSync.enabled)
  }

  #enqueue (commitGroups: boolean): Promise<void> {
    return this.#cycles.run(() => this.#syncOnce(commitGroups)).catch(error => {
      this.#logger.warn(
        commitGroups ? 'group offset sync failed; trying again at the next interval' : 'writing checkpoints failed; trying again at the next interval',
        { error }
      )
    })
  }

  snapshot (): GroupSyncSnapshot[] {
    return [...this.#lastCheckpointMs].map(([group, lastCheckpointMs]) => ({ group, lastCheckpointMs }))
  }

  #mirrored (topic: string): boolean {
    return this.#flow.topics.matches(topic) && !isCycle(topic, this.#flow.replicationPolicy, this.#flow.target.alias)
  }

  async #syncOnce (commitGroups: boolean): Promise<void> {
    if (this.#stopping !== undefined) return
    await this.#reader.caughtUp()
    const groups = (await this.#sourceGroups.listGroups())
      .filter(group => group !== this.#flow.consumer.groupId && this.#flow.groupSync.groups.matches(group))
    for (const group of groups) {
      if (this.#stopping !== undefined) return
      try {
        await this.#syncGroup(group, commitGroups)
      } catch (error) {
        this.#observer.groupSkipped?.(this.#labels, group, 'error')
        this.#logger.warn('syncing group offsets failed', { group, error })
      }
    }
  }

  async #syncGroup (group: string, commitGroups: boolean): Promise<void> {
    const committed = (await this.#sourceGroups.committedOffsets(group)).filter(o => this.#mirrored(o.topic))
    if (committed.length === 0) return
    const decisions: Decision[] = []
    const targetLogs = new Map<string, Promise<Map<number, PartitionLogOffsets>>>()
    for (const source of committed) {
      const translation = this.#index.translate(source.topic, source.partition, source.offset)
      if (translation.status !== 'translated') {
        this.#observer.translationFailed?.(this.#labels, group, translation.status)
        continue
      }
      // Below the first record this flow copied, the rule maps the group to that record's copy. Right when
      // everything before it on the target is gone; wrong, a jump forward, when the target still holds copies
      // this flow did not write (MirrorMaker 2's, before a takeover): then MirrorMaker 2's checkpoint stays.
      const first = this.#index.firstRange(source.topic, source.partition)
      if (first !== undefined && source.offset < first.sourceStart) {
        let logs = targetLogs.get(first.targetTopic)
        if (logs === undefined) targetLogs.set(first.targetTopic, logs = this.#targetGroups.logOffsets(first.targetTopic))
        const logStart = (await logs).get(source.partition)?.logStartOffset
        if (logStart === undefined || logStart < first.targetStart) {
          this.#observer.translationFailed?.(this.#labels, group, 'before-first-sync')
          continue
        }
      }
      decisions.push({ source, targetTopic: translation.targetTopic, targetOffset: translation.targetOffset })
    }
    if (decisions.length === 0) return

    const nowMs = Date.now()
    if (commitGroups) await this.#commitToTarget(group, decisions)

    // Checkpoints after the target write: a reader that sees a checkpoint sees the cycle's outcome.
    // MirrorMaker 2's Checkpoint: key group, target topic, partition; upstreamOffset the source group's offset, offset our exact translation.
    const changed: Mm2CheckpointRecord[] = []
    for (const d of this.#flow.groupSync.emitCheckpoints ? decisions : []) {
      const previous = this.#checkpoints.get(checkpointKey(group, d.targetTopic, d.source.partition))
      if (previous !== undefined && previous.upstreamOffset === d.source.offset && previous.downstreamOffset === d.targetOffset) continue
      changed.push({
        group,
        topic: d.targetTopic,
        partition: d.source.partition,
        upstreamOffset: d.source.offset,
        downstreamOffset: d.targetOffset,
        metadata: '',
      })
    }
    if (changed.length > 0) {
      // Split into requests the checkpoints topic accepts; a group with thousands of partitions needs several.
      await this.#writer.write(this.#flow.groupSync.checkpointsTopic, changed.map(encodeMm2Checkpoint))
      for (const c of changed) this.#checkpoints.set(checkpointKey(group, c.topic, c.partition), c)
      this.#observer.checkpointsWritten?.(this.#labels, group, changed.length, nowMs)
    }
    this.#lastCheckpointMs.set(group, nowMs)
  }

  /** Commits the translations into the idle target group; a group with members is left as it is. */
  async #commitToTarget (group: string, decisions: readonly Decision[]): Promise<void> {
    const description = await this.#targetGroups.describe(group)
    if (description.members > 0) {
      this.#skipActive(group, description.state)
      return
    }
    this.#activeLogged.delete(group)
    const targetTopics = [...new Set(decisions.map(d => d.targetTopic))]
    const current = new Map((await this.#targetGroups.committedOffsets(group, targetTopics)).map(o => [partitionKey(o.topic, o.partition), o.offset]))
    const writes: GroupOffset[] = []
    for (const d of decisions) {
      const now = current.get(partitionKey(d.targetTopic, d.source.partition))
      const applied = this.#applied.get(checkpointKey(group, d.targetTopic, d.source.partition))
      const sourceMovedBack = applied !== undefined && d.source.offset < applied
      if (now === undefined || d.targetOffset > now || (d.targetOffset < now && sourceMovedBack)) {
        writes.push({ topic: d.targetTopic, partition: d.source.partition, offset: d.targetOffset })
      }
    }
    try {
      await this.#targetGroups.commitOffsets(group, writes)
      for (const d of decisions) this.#applied.set(checkpointKey(group, d.targetTopic, d.source.partition), d.source.offset)
    } catch (error) {
      const code = errorLabel(error)
      if (code !== 'UNKNOWN_MEMBER_ID' && code !== 'ILLEGAL_GENERATION' && code !== 'REBALANCE_IN_PROGRESS') throw error
      this.#skipActive(group, code)
      return
    }
    if (writes.length > 0) {
      this.#observer.groupOffsetsSynced?.(this.#labels, group, writes.length)
      this.#logger.info('group offsets synced to the target', { group, partitions: writes.map(w => `${w.topic}-${w.partition}@${w.offset}`) })
    }
  }

  #skipActive (group: string, state: string): void {
    this.#observer.groupSkipped?.(this.#labels, group, 'active')
    if (this.#activeLogged.has(group)) return
    this.#activeLogged.add(group)
    this.#logger.info('group has members on the target; its offsets are not synced while it is active', { group, state })
  }

  /** Stops the timers, lets a running cycle finish, disconnects. Once-only. */
  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      for (const timer of this.#timers) timer.stop()
      // A cycle talks to both clusters; with one unreachable its calls retry for long: bounded.
      if (!(await settleWithin(this.#cycles.idle, STOP_BOUND_MS))) {
        this.#logger.warn('group offset sync cycle still running at stop; leaving it', { boundMs: STOP_BOUND_MS })
      }
      for (const client of [this.#reader, this.#writer, this.#sourceGroups, this.#targetGroups]) await settleWithin(client.stop(), STOP_BOUND_MS)
    })()
    return this.#stopping
  }
}
