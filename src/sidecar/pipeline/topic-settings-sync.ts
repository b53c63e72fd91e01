import type { FlowConfig } from '../../config/mirror-config.js'
import { errorLabel } from '../../shared/errors.js'
import type { Logger } from '../../shared/logger.js'
import { RearmingTimer } from '../../shared/rearming-timer.js'
import type { FlowLabels, PipelineObserver } from '../../ports/pipeline-observer.js'
import type { MirroredTopic, TopicSync } from './topic-sync.js'

export interface TopicSettingsSyncOptions {
  readonly topicSync: TopicSync
  /** The topics the flow mirrors now. */
  readonly topics: () => ReadonlyMap<string, MirroredTopic>
  /** Whether this process coordinates the flow now (`FlowCoordinator.coordinates`). */
  readonly isCoordinator: () => boolean
  readonly labels: FlowLabels
  readonly observer: PipelineObserver
  readonly logger: Logger
}

/**
 * The mirrored topics' configs (`sync.topic.configs`) and ACLs (`sync.topic.acls`) on the target
 * follow the source's, in the coordinating process only. It looks every `refreshTopicsIntervalMs`
 * (as the topic refresh does) and syncs configs once `syncTopicConfigsIntervalMs` passed since
 * the last time, ACLs once `syncTopicAclsIntervalMs` did; the first look after start does both.
 * A failed sync is counted, logged and tried again at the next interval. `stop()` is once-only.
 */
export class TopicSettingsSync {
  readonly name = 'topic config and ACL sync'
  readonly #flow: FlowConfig
  readonly #options: TopicSettingsSyncOptions
  readonly #timer: RearmingTimer
  /** When target topic configs were last compared with the source's (ms since epoch). */
  #configsSyncedAtMs = 0
  /** When topic ACLs were last synced (ms since epoch). */
  #aclsSyncedAtMs = 0

  constructor (flow: FlowConfig, options: TopicSettingsSyncOptions) {
    this.#flow = flow
    this.#options = options
    this.#timer = new RearmingTimer(flow.refreshTopicsIntervalMs, () => this.sync())
  }

  async start (): Promise<void> {
    if (this.#flow.syncTopicConfigs || this.#flow.syncTopicAcls) this.#timer.start()
  }

  async stop (): Promise<void> {
    this.#timer.stop()
  }

  /** Syncs what is due now, in the coordinating process. */
  async sync (): Promise<void> {
    if (!this.#options.isCoordinator()) return
    const topics = [...this.#options.topics().values()]
    await this.#syncConfigs(topics)
    await this.#syncAcls(topics)
  }

  async #syncConfigs (topics: readonly MirroredTopic[]): Promise<void> {
    const now = Date.now()
    if (!this.#flow.syncTopicConfigs || now - this.#configsSyncedAtMs < this.#flow.syncTopicConfigsIntervalMs) return
    this.#configsSyncedAtMs = now
    const { topicSync, observer, labels, logger } = this.#options
    try {
      observer.topicConfigsSynced?.(labels, await topicSync.syncConfigs(topics))
    } catch (error) {
      observer.retry?.(labels, 'sync_topic_configs', errorLabel(error))
      logger.warn('syncing topic configs failed; trying again at the next interval', { error })
    }
  }

  async #syncAcls (topics: readonly MirroredTopic[]): Promise<void> {
    const now = Date.now()
    if (!this.#flow.syncTopicAcls || now - this.#aclsSyncedAtMs < this.#flow.syncTopicAclsIntervalMs) return
    this.#aclsSyncedAtMs = now
    const { topicSync, observer, labels, logger } = this.#options
    try {
      observer.topicAclsSynced?.(labels, await topicSync.syncAcls(topics))
    } catch (error) {
      observer.retry?.(labels, 'sync_topic_acls', errorLabel(error))
      logger.warn('syncing topic ACLs failed; trying again at the next interval', { error })
    }
  }
}
