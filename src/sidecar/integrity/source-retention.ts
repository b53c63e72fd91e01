import type { FlowConfig } from '../../config/mirror-config.js'
import { isInternalTopic } from '../../config/topic-filter.js'
import { TopicRetentionReader } from '../../kafka/topic-retention.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'

/**
 * The `retention.ms` of each source topic the flow copies, read at start and again every
 * `refreshTopicsIntervalMs` (`kafka_mirror_source_retention_seconds`): lag in seconds that nears
 * it means records are deleted on the source before they are copied (the alert
 * KafkaMirrorLagNearRetention). A failed read is logged and the last values kept: the copy never
 * waits for it.
 */
export class SourceRetention {
  readonly #flow: FlowConfig
  readonly #logger: Logger
  readonly #reader: TopicRetentionReader
  readonly #timer: RearmingTimer
  #retentionMs: ReadonlyMap<string, number> = new Map()
  #started = false

  constructor (flow: FlowConfig, logger: Logger) {
    this.#flow = flow
    this.#logger = logger
    this.#reader = new TopicRetentionReader(flow.source, logger)
    this.#timer = new RearmingTimer(flow.refreshTopicsIntervalMs, () => this.#read())
  }

  async start (): Promise<void> {
    try {
      await this.#reader.start()
      this.#started = true
      await this.#read()
    } catch (error) {
      // The metric is an aid for alerting, never a reason to stop the copy: the next refresh tries again.
      this.#logger.warn("reading the source topics' retention.ms failed; kafka_mirror_source_retention_seconds stays absent until a refresh reads it", {
        error,
      })
    }
    this.#timer.start()
  }

  async stop (): Promise<void> {
    this.#timer.stop()
    await this.#reader.stop()
  }

  /** Retention in seconds per copied source topic; topics that keep their records forever (-1) are left out. */
  snapshot (): ReadonlyArray<{ readonly topic: string, readonly retentionSeconds: number }> {
    return [...this.#retentionMs].filter(([, ms]) => ms >= 0).map(([topic, ms]) => ({ topic, retentionSeconds: ms / 1000 }))
  }

  async #read (): Promise<void> {
    try {
      if (!this.#started) {
        await this.#reader.start()
        this.#started = true
      }
      this.#retentionMs = await this.#reader.retentionMs(topic => this.#flow.topics.matches(topic) && !isInternalTopic(topic))
    } catch (error) {
      // Kept: the last values read; logged so a missing DescribeConfigs right is seen (mirror-sidecar preflight names it).
      this.#logger.warn('refreshing the source topics\' retention.ms failed; the last values stay', { error })
    }
  }
}
