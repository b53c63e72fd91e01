import { kafkajsProtocol, type ProtocolDecoder, type ProtocolRequest } from './kafkajs-internals.js'

/** IncrementalAlterConfigs' API key (KIP-339, Kafka 2.3 and later). */
export const INCREMENTAL_ALTER_CONFIGS = 44

/** The request versions built here: v0 (v1 differs only in its flexible encoding). */
export const INCREMENTAL_ALTER_CONFIGS_VERSIONS: readonly number[] = [0]

/** ConfigResource's type of a topic. */
const TOPIC_RESOURCE = 2

/** The operations of a config change: SET 0, DELETE 1 (APPEND 2 and SUBTRACT 3, for list configs, are not used). */
const OPERATION = { set: 0, delete: 1 } as const

/** One change of a topic's config: set to `value`, or deleted (back to the cluster's default). */
export type ConfigChange =
  | { readonly name: string, readonly operation: 'set', readonly value: string }
  | { readonly name: string, readonly operation: 'delete' }

/** What the broker answered for one resource. */
interface ResourceAnswer {
  readonly errorCode: number
  readonly errorMessage: string | null
  readonly resourceName: string | null
}

/**
 * IncrementalAlterConfigs v0 of one topic: each named key set or deleted, every other config of the
 * topic left as it is. Unlike AlterConfigs, which replaces a topic's whole set of dynamic configs
 * and so needs it read first, it loses no change another client makes between the read and the
 * write (an operator's value of an excluded key).
 *
 *   Request => [resources] validate_only
 *     resources => resource_type resource_name [configs]
 *       configs => name config_operation value (NULLABLE_STRING)
 *   Response => throttle_time_ms [responses]
 *     responses => error_code error_message resource_type resource_name
 *
 * `parse` throws kafkajs' error of the resource's error code, its message (the broker's reason) kept.
 */
export function incrementalAlterTopicConfigs (topic: string, changes: readonly ConfigChange[]): (version: number) => ProtocolRequest {
  return version => ({
    request: {
      apiKey: INCREMENTAL_ALTER_CONFIGS,
      apiVersion: version,
      apiName: 'IncrementalAlterConfigs',
      encode: async () => {
        const configs = changes.map(change =>
          kafkajsProtocol.encoder()
            .writeString(change.name)
            .writeInt8(OPERATION[change.operation])
            .writeString(change.operation === 'set' ? change.value : null))
        const resource = kafkajsProtocol.encoder().writeInt8(TOPIC_RESOURCE).writeString(topic).writeArray(configs)
        return kafkajsProtocol.encoder().writeArray([resource]).writeBoolean(false)
      },
    },
    response: {
      decode: async bytes => {
        const decoder = kafkajsProtocol.decoder(bytes)
        decoder.readInt32() // throttle_time_ms: read past (a v0 answer comes after the broker's own throttling delay)
        return decoder.readArray((d: ProtocolDecoder): ResourceAnswer => {
          const answer = { errorCode: d.readInt16(), errorMessage: d.readString() }
          d.readInt8()
          return { ...answer, resourceName: d.readString() }
        })
      },
      parse: async decoded => {
        for (const answer of decoded as ResourceAnswer[]) {
          const error = kafkajsProtocol.errorOf(answer.errorCode)
          if (error === undefined) continue
          if (answer.errorMessage !== null && answer.errorMessage !== '') error.message = `${error.message}: ${answer.errorMessage}`
          throw error
        }
        return decoded
      },
    },
  })
}
