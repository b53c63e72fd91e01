import type { FlowConfig } from '../../config/mirror-config.js'
import { targetTopicName } from '../../config/mirror-config.js'
import { isInternalTopic } from '../../config/topic-filter.js'

/** Kafka's ACL operations the mirror needs, as `kafka-acls --operation` and Strimzi's `operations` spell them. */
export type Operation = 'Read' | 'Write' | 'Create' | 'Alter' | 'Describe' | 'DescribeConfigs' | 'AlterConfigs'

export type ResourceType = 'topic' | 'group' | 'cluster' | 'transactional-id'

/** One ACL resource: a literal name, or a prefix (`prefixed`) such as the transactional ids of a flow's producer lanes. */
export interface AclResource {
  readonly type: ResourceType
  /** `kafka-cluster` for the cluster; `*` for every name. */
  readonly name: string
  readonly pattern: 'literal' | 'prefixed'
}

/** One right the mirror's principal needs on one cluster, and the feature that needs it. */
export interface RequiredRight {
  readonly resource: AclResource
  readonly operation: Operation
  readonly feature: string
}

/** What one cluster of a flow holds and the run needs there. */
export interface ClusterRights {
  readonly rights: readonly RequiredRight[]
  /** Topics the run writes that do not exist yet: it creates them (the rights include Create on each). */
  readonly toCreate: readonly string[]
}

/** The topics of both clusters a flow's rights depend on. */
export interface FlowTopics {
  /** Every topic the principal sees on the source. */
  readonly source: readonly string[]
  /** Every topic the principal sees on the target. */
  readonly target: readonly string[]
}

/** The source topics the flow copies: its topic filter, less Kafka's and the mirror's internal topics. */
export function copiedTopics (flow: FlowConfig, sourceTopics: readonly string[]): string[] {
  return sourceTopics.filter(topic => flow.topics.matches(topic) && !isInternalTopic(topic)).sort()
}

/** The transactional id prefix of a flow's exactly-once producer lanes (`<group>.lane-<n>`, `src/kafka/flow-ports.ts`). */
function transactionalIdPrefix (flow: FlowConfig): string {
  return `${flow.consumer.groupId}.lane-`
}

const topic = (name: string): AclResource => ({ type: 'topic', name, pattern: 'literal' })
const group = (name: string): AclResource => ({ type: 'group', name, pattern: 'literal' })
const CLUSTER: AclResource = { type: 'cluster', name: 'kafka-cluster', pattern: 'literal' }

/**
 * The rights the flow's run needs on its source and target, by feature (docs/security.md holds
 * the same table): the copy, topic creation, config and ACL sync, offset syncs, checkpoints and
 * group offset sync, heartbeats, digests, exactly-once and the MirrorMaker 2 takeover. Create is
 * listed only for a topic that does not exist yet. Group rights of checkpoints and group offset
 * sync are on every group (`*`): the groups they follow change while the mirror runs.
 */
export function requiredRights (flow: FlowConfig, topics: FlowTopics): { source: ClusterRights, target: ClusterRights } {
  const source = new RightsList(new Set(topics.source))
  const target = new RightsList(new Set(topics.target))
  const copied = copiedTopics(flow, topics.source)

  for (const name of copied) {
    source.add(topic(name), ['Read', 'Describe'], 'copy')
    source.add(topic(name), ['DescribeConfigs'], 'retention metric (kafka_mirror_source_retention_seconds)')
    const targetName = targetTopicName(flow.replicationPolicy, flow.source.alias, name)
    target.topic(targetName, ['Write', 'Describe'], 'copy')
    target.add(topic(targetName), ['Alter'], 'partitions added on the source')
    if (flow.syncTopicConfigs) {
      source.add(topic(name), ['DescribeConfigs'], 'topic config sync')
      target.add(topic(targetName), ['DescribeConfigs', 'AlterConfigs'], 'topic config sync')
    }
  }
  source.add(group(flow.consumer.groupId), ['Read'], "the mirror's consumer group")
  if (flow.syncTopicAcls) {
    source.add(CLUSTER, ['Describe'], 'topic ACL sync')
    target.add(CLUSTER, ['Describe', 'Alter'], 'topic ACL sync')
  }
  if (flow.offsetSyncs.enabled) target.topic(flow.offsetSyncs.topic, ['Read', 'Write', 'Describe'], 'offset syncs')
  const mm2Syncs = flow.offsetSyncs.mm2
  if (mm2Syncs !== undefined) {
    (mm2Syncs.location === 'source' ? source : target).topic(mm2Syncs.topic, ['Read', 'Write', 'Describe'], "MirrorMaker 2's offset syncs")
  }
  if (flow.groupSync.emitCheckpoints) {
    target.topic(flow.groupSync.checkpointsTopic, ['Read', 'Write', 'Describe'], 'checkpoints')
    source.add(group('*'), ['Describe'], 'checkpoints (group offsets read)')
  }
  if (flow.groupSync.enabled) target.add(group('*'), ['Read', 'Describe'], 'group offset sync')
  if (flow.heartbeats.enabled) {
    target.topic(flow.heartbeats.topic, ['Write', 'Describe'], 'heartbeats')
    source.topic(flow.heartbeats.topic, ['Write', 'Describe'], 'heartbeats')
  }
  if (flow.digests?.enabled === true) target.topic(flow.digests.topic, ['Read', 'Write', 'Describe'], 'digests')
  if (flow.exactlyOnce !== undefined) {
    target.topic(flow.exactlyOnce.positionsTopic, ['Read', 'Write', 'Describe'], 'exactly-once positions')
    target.add({ type: 'transactional-id', name: transactionalIdPrefix(flow), pattern: 'prefixed' }, ['Write', 'Describe'], 'exactly-once transactions')
  }
  if (flow.mm2Positions !== undefined && topics.target.includes(flow.mm2Positions.offsetsTopic)) {
    target.add(topic(flow.mm2Positions.offsetsTopic), ['Read', 'Describe'], "MirrorMaker 2's positions (takeover)")
  }
  return { source: source.done(), target: target.done() }
}

/** The rights of one cluster, each (resource, operation) once, under the first feature that needs it. */
class RightsList {
  readonly #rights = new Map<string, RequiredRight>()
  readonly #toCreate = new Set<string>()

  constructor (readonly existing: ReadonlySet<string>) {}

  add (resource: AclResource, operations: readonly Operation[], feature: string): void {
    for (const operation of operations) {
      const key = `${resource.type}\u0000${resource.pattern}\u0000${resource.name}\u0000${operation}`
      if (!this.#rights.has(key)) this.#rights.set(key, { resource, operation, feature })
    }
  }

  /** A topic the run writes: Create too when it does not exist yet. */
  topic (name: string, operations: readonly Operation[], feature: string): void {
    if (!this.existing.has(name)) {
      this.#toCreate.add(name)
      this.add(topic(name), ['Create'], feature)
    }
    this.add(topic(name), operations, feature)
  }

  done (): ClusterRights {
    return { rights: [...this.#rights.values()], toCreate: [...this.#toCreate].sort() }
  }
}
