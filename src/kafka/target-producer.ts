import type { FlowConfig } from '../config/mirror-config.js'
import { clientChoiceSetting, type ClientChoice } from './client-choice.js'

/** The environment variable that picks the at-least-once target producer: `wire` (the project's own wire layer) or `kafkajs`. */
export const TARGET_PRODUCER_ENV = 'MIRROR_TARGET_PRODUCER'

/** Which producer writes an at-least-once flow's records to its target. */
export type TargetProducer = ClientChoice

/** What `MIRROR_TARGET_PRODUCER` asks for (unset or empty: undefined); any other value is a `ConfigError` naming it. */
export function targetProducerSetting (env: NodeJS.ProcessEnv): TargetProducer | undefined {
  return clientChoiceSetting(env, TARGET_PRODUCER_ENV)
}

/**
 * The producer of an at-least-once flow (exactly-once flows write through kafkajs' transactional
 * producer, `KafkaTransactionalSink`, whatever this says). The rule: the wire layer's sink when it is
 * asked for (`MIRROR_TARGET_PRODUCER=wire`), the flow's producer is idempotent (`enable.idempotence`,
 * the wire sink's only kind; the target always gets acks=all); kafkajs' sink otherwise. The wire layer
 * speaks every security setup the mirror takes (TLS, SASL PLAIN, SCRAM, OAUTHBEARER, AWS_MSK_IAM, GSSAPI:
 * `wire/wire-connection-options.ts`).
 */
export function targetProducerOf (flow: FlowConfig, env: NodeJS.ProcessEnv): TargetProducer {
  return targetProducerSetting(env) === 'wire' && flow.producer.idempotent ? 'wire' : 'kafkajs'
}
