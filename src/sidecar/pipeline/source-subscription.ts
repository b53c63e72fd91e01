import { errorLabel } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type { RecordSource, RecordSourceFactory, SourceListener } from '../../ports/ports.js'
import type { MirroredTopic, TopicSync } from './topic-sync.js'

export interface SourceSubscriptionOptions {
  readonly sources: RecordSourceFactory
  readonly topicSync: TopicSync
  readonly listener: SourceListener
  /** Time between looks for new topics and partitions (`refresh.topics.interval.ms`). */
  readonly refreshIntervalMs: number
  /** Waits until what was handed over is acknowledged (bounded by the drain deadline). */
  readonly drain: () => Promise<unknown>
  /** Commits what the target acknowledged. */
  readonly commit: () => Promise<unknown>
  /** False once the flow is stopping or failed: no re-subscription then. */
  readonly running: () => boolean
  readonly labels: FlowLabels
  readonly observer: PipelineObserver
  readonly logger: Logger
}

/**
 * The source topics a flow mirrors and the consumer group subscribed to them. Every
 * `refreshIntervalMs` it looks for topics created (or partitions added) on the source
 * (`TopicSync.refresh`, which creates them on the target); when the list changed, the source is
 * paused, drained, committed and stopped, and a new one joins with the new list (kafkajs cannot
 * change a running subscription). `current` is the source in use.
 */
export class SourceSubscription {
  readonly #options: SourceSubscriptionOptions
  readonly #timer: RearmingTimer
  #source: RecordSource
  #topics = new Map<string, MirroredTopic>()
  #refreshing: Promise<void> | undefined

  constructor (options: SourceSubscriptionOptions) {
    this.#options = options
    this.#source = options.sources()
    this.#timer = new RearmingTimer(options.refreshIntervalMs, () => this.refresh())
  }

  /** The source consumer group in use now (replaced when the topic list changes). */
  get current (): RecordSource { return this.#source }

  /** The source topics mirrored now, by name. */
  get topics (): ReadonlyMap<string, MirroredTopic> { return this.#topics }

  /** Finds the topics to mirror (creating missing target topics); before `subscribe`. */
  async discover (): Promise<void> {
    this.#topics = await this.#options.topicSync.refresh()
  }

  /** Joins the source group subscribed to the discovered topics, and starts the periodic refresh. */
  async subscribe (): Promise<void> {
    await this.#source.start([...this.#topics.keys()], this.#options.listener)
  }

  /** Starts the periodic refresh. */
  startRefresh (): void { this.#timer.start() }

  /** Stops the periodic refresh; resolves once a refresh under way ended. */
  async stopRefresh (): Promise<void> {
    this.#timer.stop()
    // Logged where it failed (`#refreshOnce`); the stop goes on either way.
    await this.#refreshing?.catch(() => undefined)
  }

  /** Picks up topics created (or partitions added) on the source since the last look. */
  refresh (): Promise<void> {
    this.#refreshing ??= this.#refreshOnce().finally(() => { this.#refreshing = undefined })
    return this.#refreshing
  }

  async #refreshOnce (): Promise<void> {
    const { topicSync, observer, labels, logger, running } = this.#options
    if (!running()) return
    let topics: Map<string, MirroredTopic>
    try {
      topics = await topicSync.refresh()
    } catch (error) {
      observer.retry?.(labels, 'refresh_topics', errorLabel(error))
      logger.warn('looking for new topics failed; trying again at the next refresh', { error })
      return
    }
    const same = topics.size === this.#topics.size && [...topics].every(([name, t]) => this.#topics.get(name)?.partitions === t.partitions)
    if (same || !running()) return
    logger.info('topics changed; re-subscribing', { topics: [...topics.keys()] })
    try {
      await this.#resubscribe(topics)
    } catch (error) {
      logger.error('re-subscribing to the changed topics failed', { error })
      throw error
    }
  }

  /** kafkajs cannot change a running subscription: drain, commit, and join again with the new list. */
  async #resubscribe (topics: Map<string, MirroredTopic>): Promise<void> {
    const old = this.#source
    old.pause()
    await this.#options.drain()
    await this.#options.commit()
    await old.stop()
    if (!this.#options.running()) return
    this.#topics = topics
    this.#source = this.#options.sources()
    await this.#source.start([...this.#topics.keys()], this.#options.listener)
  }
}
