import type { ClusterConnection } from '../../config/cluster-connection.js'
import type { ReplicationPolicyKind } from '../../config/mirror-config.js'
import type { ClusterPairArgs, CommonArgs } from '../cli/cluster-args.js'

/** The flags of `mirror-check failover` and `failback` (and `groups`, which plans a failover). */
export interface FailoverArgs extends CommonArgs, ClusterPairArgs {
  group?: string[]
  groups?: string
  'group-regex'?: string
  'all-groups'?: boolean
  'groups-exclude': string
  topic?: string[]
  execute: boolean
  'dry-run'?: boolean
  /** Alias of the source cluster in the flow source -> target (names its offset-syncs topic on the target). */
  'source-alias'?: string
  /** Alias of the target cluster in the flow target -> source (names its offset-syncs topic on the source). */
  'target-alias'?: string
  'offset-syncs-topic'?: string
  'reverse-offset-syncs-topic'?: string
  /** failover only: the flow is MirrorMaker 2. */
  mm2?: boolean
  'mm2-offset-syncs-topic'?: string
  'replication-policy'?: ReplicationPolicyKind
  separator?: string
  /** failover only: also list the source records of the moved topics that are not on the target (`mirror-check rpo`). */
  rpo?: boolean
}

/** Which way consumers move: failover leaves the source for the target, failback the target for the source. */
export type FailoverDirection = 'failover' | 'failback'

/** One of the two clusters a failover names. */
export interface Side {
  /** `source` or `target`, as the flags name the clusters. */
  readonly role: 'source' | 'target'
  readonly connection: ClusterConnection
}
export function where (side: Side): string {
  return `the ${side.role} cluster (${side.connection.brokers.join(',')})`
}
