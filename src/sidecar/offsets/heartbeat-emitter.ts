import type { ClusterConnection } from '../../config/cluster-connection.js'
import type { FlowConfig } from '../../config/mirror-config.js'
import { InternalTopicWriter } from '../../kafka/internal-topic.js'
import { settleWithin } from '../../shared/deadline.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import { encodeMm2Heartbeat } from '../../mirror-topics/mm2-records.js'

/** How long `stop()` waits for a running emission, then for each client to disconnect. */
const STOP_BOUND_MS = 5_000

export interface HeartbeatEmitterOptions {
  readonly logger: Logger
  /** Whether this process coordinates the flow now; heartbeats are emitted only then (default: always). */
  readonly isCoordinator?: () => boolean
}

/** One side a heartbeat goes to: the cluster, and the aliases its records carry. */
interface HeartbeatSide {
  readonly role: 'target' | 'source'
  readonly writer: InternalTopicWriter
  readonly connection: ClusterConnection
  readonly sourceClusterAlias: string
  readonly targetClusterAlias: string
  /** The writer is connected. */
  started: boolean
  /** The topic exists (created or found) on that cluster. */
  ready: boolean
  /** The last emission to this side failed (logged once until it succeeds again). */
  failing: boolean
}

/**
 * MirrorMaker 2's heartbeats (`emit.heartbeats.*`): every `flow.heartbeats.intervalMs` a `Heartbeat`
 * record {source alias, target alias, now} goes to `heartbeats` on the target, as its
 * MirrorHeartbeatConnector of the flow writes, and one {target alias, source alias, now} to
 * `heartbeats` on the source, as the connector of the reverse pair writes (MirrorMaker 2 runs it
 * for every pair, replication enabled or not). The flow copies the source's `heartbeats` to the
 * target as `<source alias>.heartbeats`, where Kafka's `MirrorClient.upstreamClusters()` finds the
 * source. The topics are created compacted with one partition and
 * `heartbeats.topic.replication.factor`.
 * The target side must work: its topic is created at `start()`, and a refusal fails the start. The
 * source side may be read-only for the mirror: a failure there is logged (once until it works) and
 * tried again at each interval. Failures to emit are never fatal: heartbeats only report liveness.
 */
export class HeartbeatEmitter {
  readonly #flow: FlowConfig
  readonly #logger: Logger
  readonly #isCoordinator: () => boolean
  readonly #sides: HeartbeatSide[]
  #timer: RearmingTimer | undefined
  #emitting: Promise<void> | undefined
  #stopping: Promise<void> | undefined

  constructor (flow: FlowConfig, options: HeartbeatEmitterOptions) {
    this.#flow = flow
    this.#logger = options.logger.child({ flow: flow.name, component: 'heartbeats' })
    this.#isCoordinator = options.isCoordinator ?? (() => true)
    const side = (role: HeartbeatSide['role'], connection: ClusterConnection, sourceClusterAlias: string, targetClusterAlias: string): HeartbeatSide => ({
      role,
      connection,
      sourceClusterAlias,
      targetClusterAlias,
      writer: new InternalTopicWriter(connection, this.#logger),
      started: false,
      ready: false,
      failing: false,
    })
    this.#sides = [
      side('target', flow.target, flow.source.alias, flow.target.alias),
      side('source', flow.source, flow.target.alias, flow.source.alias),
    ]
  }

  async start (): Promise<void> {
    const [target, source] = this.#sides as [HeartbeatSide, HeartbeatSide]
    try {
      await this.#ensureTopic(target)
    } catch (error) {
      // A stop during the start disconnected the writer under it: nothing left to start.
      if (this.#stopping !== undefined) return
      throw error
    }
    try {
      await this.#ensureTopic(source)
    } catch (error) {
      this.#failed(source, error)
    }
    if (this.#stopping !== undefined) return
    // Re-armed after each emission: a slow cluster never piles emissions up.
    this.#timer = new RearmingTimer(this.#flow.heartbeats.intervalMs, () => this.#isCoordinator() ? this.emitNow() : Promise.resolve())
    this.#timer.start()
    this.#logger.info('emitting heartbeats', { topic: this.#flow.heartbeats.topic, intervalMs: this.#flow.heartbeats.intervalMs })
  }

  /** Emits one heartbeat to each side now (or joins the running emission). Never rejects: failures are logged. */
  emitNow (): Promise<void> {
    this.#emitting ??= (async () => {
      const nowMs = Date.now()
      for (const side of this.#sides) {
        if (this.#stopping !== undefined) return
        try {
          if (!side.ready) await this.#ensureTopic(side)
          await side.writer.write(this.#flow.heartbeats.topic, [
            encodeMm2Heartbeat({ sourceClusterAlias: side.sourceClusterAlias, targetClusterAlias: side.targetClusterAlias, timestampMs: nowMs }),
          ])
          if (side.failing) this.#logger.info('heartbeats reach the cluster again', { cluster: side.connection.alias })
          side.failing = false
        } catch (error) {
          this.#failed(side, error)
        }
      }
    })().finally(() => { this.#emitting = undefined })
    return this.#emitting
  }

  async #ensureTopic (side: HeartbeatSide): Promise<void> {
    const { topic, replicationFactor } = this.#flow.heartbeats
    if (this.#stopping !== undefined) throw new MirrorError(ErrorCodes.STOPPED, 'heartbeat emitter is stopped')
    if (!side.started) {
      await side.writer.start()
      side.started = true
    }
    await side.writer.ensureCompactedTopic(topic, { replicationFactor, key: 'heartbeats.topic.replication.factor' })
    side.ready = true
  }

  #failed (side: HeartbeatSide, error: unknown): void {
    if (side.failing || this.#stopping !== undefined) return
    side.failing = true
    this.#logger.warn(`emitting heartbeats to the ${side.role} cluster failed; trying again at each interval`, {
      cluster: side.connection.alias,
      topic: this.#flow.heartbeats.topic,
      error,
    })
  }

  /** Stops the timer, lets a running emission finish, disconnects. Once-only. */
  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      this.#timer?.stop()
      await settleWithin(this.#emitting ?? Promise.resolve(), STOP_BOUND_MS)
      for (const side of this.#sides) await settleWithin(side.writer.stop(), STOP_BOUND_MS)
    })()
    return this.#stopping
  }
}
