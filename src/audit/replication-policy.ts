/** How MirrorMaker 2 names a topic on the target: `identity` keeps it, `default` prefixes the source alias. */
export const ReplicationPolicies = ['identity', 'default'] as const
export type ReplicationPolicyName = typeof ReplicationPolicies[number]

export interface ReplicationPolicy {
  readonly name: ReplicationPolicyName
  /** Source cluster alias (DefaultReplicationPolicy: `<alias><separator><topic>`). */
  readonly sourceAlias: string
  /** `replication.policy.separator`; default '.'. */
  readonly separator: string
}

/** The target topic a source topic is copied to under `policy`. */
export function targetTopicName (topic: string, policy: ReplicationPolicy): string {
  return policy.name === 'identity' ? topic : `${policy.sourceAlias}${policy.separator}${topic}`
}
