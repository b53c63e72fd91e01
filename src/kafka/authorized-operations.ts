import { kafkajsProtocol, type ProtocolDecoder, type ProtocolRequest } from './kafkajs-internals.js'

/** Metadata's API key; v8 (Kafka 2.3, KIP-430) is the first that can return the caller's authorized operations. */
export const METADATA = 3
/** DescribeGroups' API key; v3 (Kafka 2.3, KIP-430) is the first that can return the caller's authorized operations. */
export const DESCRIBE_GROUPS = 15
/** The versions built here: v8 (v9 on is the flexible encoding; v11 drops the cluster's operations). */
export const METADATA_VERSIONS: readonly number[] = [8]
/** The versions built here: v3 (v4 adds group_instance_id to members; v5 on is flexible). */
export const DESCRIBE_GROUPS_VERSIONS: readonly number[] = [3]

/** Kafka's ACL operations by code (`AclOperation`): bit `code` of an authorized-operations field is set when the caller may do it. */
const ACL_OPERATIONS = {
  Read: 3,
  Write: 4,
  Create: 5,
  Delete: 6,
  Alter: 7,
  Describe: 8,
  ClusterAction: 9,
  DescribeConfigs: 10,
  AlterConfigs: 11,
  IdempotentWrite: 12,
} as const
export type AclOperationName = keyof typeof ACL_OPERATIONS

/** The field's value when the broker did not compute it (`Integer.MIN_VALUE`): the caller may not even describe the resource. */
const NOT_COMPUTED = -2147483648

/** The operations of a KIP-430 bit field; empty when the broker did not compute it. */
function operationsOf (bits: number): ReadonlySet<AclOperationName> {
  if (bits === NOT_COMPUTED) return new Set()
  return new Set((Object.entries(ACL_OPERATIONS) as Array<[AclOperationName, number]>).filter(([, code]) => (bits & (1 << code)) !== 0).map(([name]) => name))
}

/** What the caller may do on one topic: the Kafka error code of the topic in the answer (0, or 3 when it does not exist, 29 when it may not describe it) and its operations. */
export interface TopicOperations {
  readonly errorCode: number
  readonly operations: ReadonlySet<AclOperationName>
}

/** The caller's own rights on a cluster and on named topics, as the broker's authorizer decides them. */
export interface AuthorizedOperations {
  readonly cluster: ReadonlySet<AclOperationName>
  readonly topics: ReadonlyMap<string, TopicOperations>
}

/**
 * Metadata v8 of `topics` with `include_cluster_authorized_operations` and
 * `include_topic_authorized_operations` (KIP-430): the broker's authorizer answers, for the
 * principal that sends it, which operations it may do on the cluster and on each named topic,
 * including one that does not exist yet. No right is needed to ask (no DescribeAcls), and
 * nothing is changed: `allow_auto_topic_creation` is false.
 *
 *   Request => [topics] allow_auto_topic_creation include_cluster_authorized_operations include_topic_authorized_operations
 *     topics => name
 *   Response => throttle_time_ms [brokers] cluster_id controller_id [topics] cluster_authorized_operations
 *     brokers => node_id host port rack
 *     topics => error_code name is_internal [partitions] topic_authorized_operations
 *       partitions => error_code partition_index leader_id leader_epoch [replica_nodes] [isr_nodes] [offline_replicas]
 */
export function authorizedOperationsRequest (topics: readonly string[]): (version: number) => ProtocolRequest {
  return version => ({
    request: {
      apiKey: METADATA,
      apiVersion: version,
      apiName: 'Metadata',
      encode: async () =>
        kafkajsProtocol.encoder()
          .writeArray(topics.map(name => kafkajsProtocol.encoder().writeString(name)))
          .writeBoolean(false)
          .writeBoolean(true)
          .writeBoolean(true),
    },
    response: {
      decode: async bytes => {
        const decoder = kafkajsProtocol.decoder(bytes)
        decoder.readInt32() // throttle_time_ms
        decoder.readArray(d => [d.readInt32(), d.readString(), d.readInt32(), d.readString()])
        decoder.readString() // cluster_id
        decoder.readInt32() // controller_id
        const answered = decoder.readArray((d: ProtocolDecoder): [string, TopicOperations] => {
          const errorCode = d.readInt16()
          const name = d.readString() ?? ''
          d.readInt8() // is_internal
          d.readArray(p => {
            p.readInt16()
            p.readInt32()
            p.readInt32()
            p.readInt32()
            for (let list = 0; list < 3; list++) p.readArray(n => n.readInt32())
            return undefined
          })
          return [name, { errorCode, operations: operationsOf(d.readInt32()) }]
        })
        return { cluster: operationsOf(decoder.readInt32()), topics: new Map(answered) } satisfies AuthorizedOperations
      },
      // Per-topic error codes are the answer here (TOPIC_AUTHORIZATION_FAILED names a missing right), not failures.
      parse: async decoded => decoded,
    },
  })
}

/** What the caller may do on one consumer group: the Kafka error code (0, or 30 when it may not describe it) and its operations. */
export interface GroupOperations {
  readonly errorCode: number
  readonly operations: ReadonlySet<AclOperationName>
}

/**
 * DescribeGroups v3 of one group with `include_authorized_operations` (KIP-430), sent to the group's
 * coordinator: the caller's operations on the group, also when the group does not exist (state Dead).
 *
 *   Request => [groups] include_authorized_operations
 *   Response => throttle_time_ms [groups]
 *     groups => error_code group_id group_state protocol_type protocol_data [members] authorized_operations
 *       members => member_id client_id client_host member_metadata member_assignment
 */
export function groupOperationsRequest (groupId: string): (version: number) => ProtocolRequest {
  return version => ({
    request: {
      apiKey: DESCRIBE_GROUPS,
      apiVersion: version,
      apiName: 'DescribeGroups',
      encode: async () => kafkajsProtocol.encoder().writeArray([kafkajsProtocol.encoder().writeString(groupId)]).writeBoolean(true),
    },
    response: {
      decode: async bytes => {
        const decoder = kafkajsProtocol.decoder(bytes)
        decoder.readInt32() // throttle_time_ms
        const groups = decoder.readArray((d: ProtocolDecoder): GroupOperations => {
          const errorCode = d.readInt16()
          for (let field = 0; field < 4; field++) d.readString() // group_id, group_state, protocol_type, protocol_data
          d.readArray(m => [m.readString(), m.readString(), m.readString(), m.readBytes(), m.readBytes()])
          return { errorCode, operations: operationsOf(d.readInt32()) }
        })
        return groups[0] ?? { errorCode: -1, operations: new Set() }
      },
      // GROUP_AUTHORIZATION_FAILED is the answer here (a missing right), not a failure.
      parse: async decoded => decoded,
    },
  })
}

/** FindCoordinator's API key and the version built here (v1, Kafka 0.11: key types; v3 on is flexible). */
export const FIND_COORDINATOR = 10
export const FIND_COORDINATOR_VERSIONS: readonly number[] = [1]

/** FindCoordinator's key types: a consumer group, a transactional id. */
export const COORDINATOR_KEY = { group: 0, transaction: 1 } as const

/**
 * FindCoordinator v1 of one key: only the answer's error code, which is where the broker's
 * authorizer speaks: GROUP_AUTHORIZATION_FAILED (30) without Describe on the group,
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) without Describe on the transactional id. Nothing
 * is created or changed.
 *
 *   Request => key key_type
 *   Response => throttle_time_ms error_code error_message node_id host port
 */
export function findCoordinatorRequest (key: string, keyType: number): (version: number) => ProtocolRequest {
  return version => ({
    request: {
      apiKey: FIND_COORDINATOR,
      apiVersion: version,
      apiName: 'FindCoordinator',
      encode: async () => kafkajsProtocol.encoder().writeString(key).writeInt8(keyType),
    },
    response: {
      decode: async bytes => {
        const decoder = kafkajsProtocol.decoder(bytes)
        decoder.readInt32() // throttle_time_ms
        return decoder.readInt16()
      },
      // The error code is the answer (an authorization failure names a missing right), not a failure.
      parse: async decoded => decoded,
    },
  })
}
