import type { FlowConfig } from '../../config/mirror-config.js'

/** A Kafka API the run needs at `minVersion` or later, and the feature that needs it. */
export interface RequiredApi {
  readonly name: string
  readonly minVersion: number
  readonly feature: string
}

/** A required API the broker does not serve (`servedMaxVersion` undefined) or serves only below `minVersion`. */
export interface MissingApi extends RequiredApi {
  readonly apiKey: number
  readonly servedMaxVersion: number | undefined
}

type ApiTable = Map<number, RequiredApi>

function need (table: ApiTable, apiKey: number, name: string, minVersion: number, feature: string): void {
  const known = table.get(apiKey)
  if (known === undefined || known.minVersion < minVersion) table.set(apiKey, { name, minVersion, feature })
}

/**
 * The API keys and least versions each cluster of the flow must serve: record batches v2
 * (Produce v3, Fetch v4: Kafka 0.11), the preflight's own KIP-430 requests (Metadata v8,
 * DescribeGroups v3: Kafka 2.3), transactions for exactly-once, IncrementalAlterConfigs when
 * `use.incremental.alter.configs=required`, the ACL requests of ACL sync.
 */
export function requiredApis (flow: FlowConfig): { source: ReadonlyMap<number, RequiredApi>, target: ReadonlyMap<number, RequiredApi> } {
  const source: ApiTable = new Map()
  const target: ApiTable = new Map()
  for (const table of [source, target]) need(table, 3, 'Metadata', 8, 'preflight (authorized operations, KIP-430)')
  need(source, 1, 'Fetch', 4, 'copy (record batch v2)')
  need(source, 2, 'ListOffsets', 1, 'copy')
  need(source, 8, 'OffsetCommit', 2, "the mirror's consumer group")
  need(source, 9, 'OffsetFetch', 1, "the mirror's consumer group")
  need(source, 11, 'JoinGroup', 0, "the mirror's consumer group")
  need(source, 15, 'DescribeGroups', 3, 'preflight (authorized operations, KIP-430)')
  need(target, 0, 'Produce', 3, 'copy (record batch v2)')
  need(target, 19, 'CreateTopics', 0, 'topic creation')
  need(target, 32, 'DescribeConfigs', 0, 'topic creation')
  if (flow.producer.idempotent || flow.exactlyOnce !== undefined) need(target, 22, 'InitProducerId', 0, 'idempotent producer')
  if (flow.exactlyOnce !== undefined) {
    need(target, 24, 'AddPartitionsToTxn', 0, 'exactly-once transactions')
    need(target, 26, 'EndTxn', 0, 'exactly-once transactions')
  }
  if (flow.groupSync.enabled) need(target, 15, 'DescribeGroups', 3, 'preflight (authorized operations, KIP-430)')
  if (flow.syncTopicConfigs && flow.incrementalAlterConfigs === 'required') {
    need(target, 44, 'IncrementalAlterConfigs', 0, 'use.incremental.alter.configs=required')
  }
  if (flow.syncTopicAcls) {
    need(source, 29, 'DescribeAcls', 0, 'topic ACL sync')
    need(target, 30, 'CreateAcls', 0, 'topic ACL sync')
  }
  return { source, target }
}
