import type { ProducerSettings } from './mirror-config.js'
import type { ProblemList } from './values.js'
import { parseBoolean, parseChoice } from './values.js'

/** Default time between the transactions a producer lane commits (exactly-once): what read_committed consumers of the target wait at most. */
export const DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS = 100

/** Default `transaction.timeout.ms` of the mirror's transactional producers (kafkajs' and Kafka's producer default). */
export const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000

/** `--exactly.once` (MirrorMaker 1 command line): true or false. */
export function parseExactlyOnceFlag (key: string, raw: string | undefined, problems: ProblemList): boolean | undefined {
  return parseBoolean(key, raw, problems)
}

/** MirrorMaker 2's `<target alias>.exactly.once.source.support`: `enabled` turns exactly-once on; `preparing` and `disabled` leave it off. */
export function parseExactlyOnceSupport (key: string, raw: string | undefined, problems: ProblemList): boolean | undefined {
  const value = parseChoice(key, raw, ['enabled', 'preparing', 'disabled'] as const, problems)
  return value === undefined ? undefined : value === 'enabled'
}

/** Settings that contradict exactly-once, each a problem naming the key. */
export function checkExactlyOnceProducer (key: string, producer: ProducerSettings, producerWhere: string, problems: ProblemList): void {
  if (!producer.idempotent) {
    problems.add(
      `${producerWhere}enable.idempotence`,
      'false',
      `contradicts ${key}: transactions need the idempotent producer; remove the key or set it to true`
    )
  }
}
