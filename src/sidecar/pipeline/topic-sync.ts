import { targetTopicName, type FlowConfig, type ReplicationPolicy } from '../../config/mirror-config.js'
import type { TopicAcl, TopicCatalog } from '../../ports/ports.js'
import type { Logger } from '../../shared/logger.js'

/**
 * MirrorMaker 2's rule for the ACLs of a target topic (`sync.topic.acls`): the source topic's
 * ACLs, except those allowing WRITE (only the mirror writes a copy), with ALLOW ALL narrowed to
 * READ; the resource is the target topic's name. Undefined when the ACL is not copied.
 */
function targetAcl (acl: TopicAcl, targetTopic: string): TopicAcl | undefined {
  if (acl.permission === 'ALLOW' && acl.operation === 'WRITE') return undefined
  const operation = acl.permission === 'ALLOW' && acl.operation === 'ALL' ? 'READ' : acl.operation
  return { ...acl, topic: targetTopic, operation }
}

function aclKey (acl: TopicAcl): string {
  return JSON.stringify([acl.topic, acl.principal, acl.host, acl.operation, acl.permission])
}

/** A source topic the flow copies, where it goes, and how many partitions it has. */
export interface MirroredTopic {
  readonly source: string
  readonly target: string
  readonly partitions: number
}

/**
 * MirrorMaker 2's cycle rule for the default policy: `B.orders` on A came from B, so the A->B
 * flow must not copy it back (that is how two-way flows avoid loops). Identity names carry no
 * provenance, so nothing can be detected there.
 */
export function isCycle (topic: string, policy: ReplicationPolicy, targetAlias: string): boolean {
  if (policy.kind !== 'default') return false
  let rest = topic
  for (;;) {
    const at = rest.indexOf(policy.separator)
    if (at <= 0) return false
    if (rest.slice(0, at) === targetAlias) return true
    rest = rest.slice(at + policy.separator.length)
  }
}

/**
 * Finds the source topics a flow mirrors and makes sure each has a target topic with at least as
 * many partitions: missing ones are created with the source's partition count and the configs
 * the flow copies (`FlowConfig.topicConfigFilter`); partitions added on the source are added on the target.
 */
export class TopicSync {
  readonly #source: TopicCatalog
  readonly #target: TopicCatalog
  readonly #flow: FlowConfig
  readonly #logger: Logger
  /** `max.message.bytes` of target topics where this sync set or read it explicitly. */
  readonly #maxMessageBytes = new Map<string, number>()
  /** Target topics already warned about for `message.timestamp.type=LogAppendTime`. */
  readonly #logAppendTimeWarned = new Set<string>()

  constructor (source: TopicCatalog, target: TopicCatalog, flow: FlowConfig, logger: Logger) {
    this.#source = source
    this.#target = target
    this.#flow = flow
    this.#logger = logger
  }

  /**
   * The target topic's `max.message.bytes` where known: as this sync created the topic with it, or
   * as set on the topic when its configs were last synced. Undefined: the broker's default applies.
   */
  maxMessageBytes (targetTopic: string): number | undefined {
    return this.#maxMessageBytes.get(targetTopic)
  }

  #noteMaxMessageBytes (targetTopic: string, configs: Readonly<Record<string, string>>): void {
    const value = Number(configs['max.message.bytes'])
    if (Number.isInteger(value) && value > 0) this.#maxMessageBytes.set(targetTopic, value)
    else this.#maxMessageBytes.delete(targetTopic)
  }

  /** `use.defaults.from = source`: the source's default values are copied too. */
  get #withSourceDefaults (): boolean { return this.#flow.topicConfigFilter.useDefaultsFrom === 'source' }

  /** The source topic configs the flow copies: those `TopicConfigFilter.copies`. */
  #copied (configs: Readonly<Record<string, string>> | undefined): Record<string, string> {
    return Object.fromEntries(Object.entries(configs ?? {}).filter(([key]) => this.#flow.topicConfigFilter.copies(key)))
  }

  /**
   * Brings the copied configs (`FlowConfig.topicConfigFilter`) of existing target topics in line
   * with their source topics, as MirrorMaker 2's `sync.topic.configs` does after creation too: a
   * value set on the source is set on the target; with `use.defaults.from = target`, a copied key
   * set on the target topic but at its default on the source is taken off the target topic, back
   * to the target cluster's default (MirrorMaker 2's DELETE operation); a key the filter does not
   * copy keeps whatever the target has. Returns the number of topics changed.
   */
  async syncConfigs (topics: readonly MirroredTopic[]): Promise<number> {
    if (!this.#flow.syncTopicConfigs || topics.length === 0) return 0
    const [sourceConfigs, targetConfigs] = await Promise.all([
      this.#source.topicConfigs(topics.map(t => t.source), this.#withSourceDefaults),
      this.#target.topicConfigs(topics.map(t => t.target), false, true),
    ])
    let changed = 0
    for (const topic of topics) {
      const wanted = this.#copied(sourceConfigs.get(topic.source))
      const current = targetConfigs.get(topic.target) ?? {}
      if (current['message.timestamp.type'] === 'LogAppendTime' && !this.#logAppendTimeWarned.has(topic.target)) {
        this.#logAppendTimeWarned.add(topic.target)
        this.#logger.warn('target topic has message.timestamp.type=LogAppendTime: the target broker re-stamps every copied record with its own time', {
          topic: topic.target,
        })
      }
      const differing = Object.fromEntries(Object.entries(wanted).filter(([key, value]) => current[key] !== value))
      const removed = this.#withSourceDefaults ? [] : Object.keys(current).filter(key => !(key in wanted) && this.#flow.topicConfigFilter.copies(key))
      const after = { ...current, ...wanted }
      for (const key of removed) delete after[key]
      this.#noteMaxMessageBytes(topic.target, after)
      if (Object.keys(differing).length === 0 && removed.length === 0) continue
      await this.#target.setTopicConfigs(topic.target, differing, removed)
      this.#logger.info('synced target topic configs', { topic: topic.target, configs: differing, ...(removed.length === 0 ? {} : { removed }) })
      changed++
    }
    return changed
  }

  /**
   * Creates on the target the ACLs of the mirrored topics (`targetAcl`) that it does not have yet;
   * never removes one. Returns how many were created; 0 when either cluster has no authorizer.
   */
  async syncAcls (topics: readonly MirroredTopic[]): Promise<number> {
    if (topics.length === 0) return 0
    const sourceAcls = await this.#source.topicAcls(topics.map(t => t.source))
    if (sourceAcls === undefined || sourceAcls.length === 0) return 0
    const targetAcls = await this.#target.topicAcls(topics.map(t => t.target))
    if (targetAcls === undefined) return 0
    const targetOf = new Map(topics.map(t => [t.source, t.target]))
    const present = new Set(targetAcls.map(aclKey))
    const missing = new Map<string, TopicAcl>()
    for (const acl of sourceAcls) {
      const target = targetOf.get(acl.topic)
      const wanted = target === undefined ? undefined : targetAcl(acl, target)
      if (wanted !== undefined && !present.has(aclKey(wanted))) missing.set(aclKey(wanted), wanted)
    }
    if (missing.size === 0) return 0
    await this.#target.createTopicAcls([...missing.values()])
    this.#logger.info('synced topic ACLs to the target', { acls: [...missing.values()].map(a => `${a.permission} ${a.principal} ${a.operation} ${a.topic}`) })
    return missing.size
  }

  async refresh (): Promise<Map<string, MirroredTopic>> {
    const flow = this.#flow
    const wanted = new Map<string, MirroredTopic>()
    for (const description of await this.#source.describeTopics()) {
      const name = description.name
      if (description.partitions === 0 || !flow.topics.matches(name) || isCycle(name, flow.replicationPolicy, flow.target.alias)) continue
      wanted.set(name, { source: name, target: targetTopicName(flow.replicationPolicy, flow.source.alias, name), partitions: description.partitions })
    }
    if (wanted.size === 0) return wanted
    const targetPartitions = new Map((await this.#target.describeTopics()).map(d => [d.name, d.partitions]))
    const missing = [...wanted.values()].filter(t => !targetPartitions.has(t.target))
    const present = [...wanted.values()].filter(t => targetPartitions.has(t.target))

    if (missing.length > 0) {
      const configs = new Map<string, Record<string, string>>()
      if (flow.syncTopicConfigs) {
        for (const [topic, set] of await this.#source.topicConfigs(missing.map(t => t.source), this.#withSourceDefaults)) configs.set(topic, this.#copied(set))
      }
      await this.#target.createTopics(
        missing.map(t => ({ name: t.target, partitions: t.partitions, replicationFactor: flow.replicationFactor, configs: configs.get(t.source) ?? {} }))
      )
      for (const t of missing) {
        this.#noteMaxMessageBytes(t.target, configs.get(t.source) ?? {})
        this.#logger.info('created target topic', { topic: t.target, partitions: t.partitions, configs: configs.get(t.source) ?? {} })
      }
    }
    for (const t of present) {
      const count = targetPartitions.get(t.target) ?? 0
      if (count < t.partitions) {
        await this.#target.createPartitions(t.target, t.partitions)
        this.#logger.info('added partitions to target topic', { topic: t.target, from: count, to: t.partitions })
      }
    }
    return wanted
  }
}
