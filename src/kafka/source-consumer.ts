import type { FlowConfig } from '../config/mirror-config.js'
import type { ConfigProblem } from '../shared/errors.js'
import { clientChoiceSetting, type ClientChoice } from './client-choice.js'

/** The environment variable that picks the at-least-once source consumer: `wire` (the project's own wire layer) or `kafkajs`. */
export const SOURCE_CONSUMER_ENV = 'MIRROR_SOURCE_CONSUMER'

/** Which consumer reads an at-least-once flow's source. */
export type SourceConsumer = ClientChoice

/** What `MIRROR_SOURCE_CONSUMER` asks for (unset or empty: undefined); any other value is a `ConfigError` naming it. */
export function sourceConsumerSetting (env: NodeJS.ProcessEnv): SourceConsumer | undefined {
  return clientChoiceSetting(env, SOURCE_CONSUMER_ENV)
}

/**
 * The source consumer of a flow. The rule: the wire layer's (`WireRecordSource`: KIP-848 or cooperative
 * rebalancing, static membership) when it is asked for (`MIRROR_SOURCE_CONSUMER=wire`) and the flow is
 * at-least-once; kafkajs' otherwise (an exactly-once flow's lanes need the bucket assignor, a kafkajs one).
 */
export function sourceConsumerOf (flow: FlowConfig, env: NodeJS.ProcessEnv): SourceConsumer {
  return sourceConsumerSetting(env) === 'wire' && flow.exactlyOnce === undefined ? 'wire' : 'kafkajs'
}

/**
 * What the kafkajs source cannot do that a flow asks for: KIP-848 (`group.protocol=consumer`) and static
 * membership (`group.instance.id`) need the wire source. Checked before anything connects.
 */
export function sourceConsumerProblems (flows: readonly FlowConfig[], env: NodeJS.ProcessEnv): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const flow of flows) {
    if (sourceConsumerOf(flow, env) === 'wire') continue
    const why = flow.exactlyOnce === undefined
      ? 'set MIRROR_SOURCE_CONSUMER=wire, the source consumer that speaks it'
      : 'exactly-once flows read through kafkajs, which does not speak it: remove the key'
    if (flow.consumer.groupProtocol === 'consumer') {
      problems.push({ key: 'group.protocol', value: 'consumer', message: `flow ${flow.name}: KIP-848's consumer protocol; ${why}` })
    }
    if (flow.consumer.groupInstanceId !== undefined) {
      problems.push({ key: 'group.instance.id', value: flow.consumer.groupInstanceId, message: `flow ${flow.name}: static membership (KIP-345); ${why}` })
    }
  }
  return problems
}
