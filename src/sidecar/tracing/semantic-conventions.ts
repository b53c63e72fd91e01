import type { Attributes } from '@opentelemetry/api'

/**
 * Span attribute names: OpenTelemetry messaging semantic conventions 1.45 (status "development")
 * and the mirror's own attributes under `kafka_mirror.*`. The conventions own `kafka.*` since 1.45
 * (`kafka.offset`, `kafka.message.key`, ...), so the mirror's attributes sit under the same stem as
 * its Prometheus metrics (`kafka_mirror_*`): one word finds both, and a top-level namespace with an
 * underscore is not one the conventions would take for a product.
 */
export const TraceAttributes = {
  MESSAGING_SYSTEM_NAME: 'messaging.system.name',
  MESSAGING_OPERATION_TYPE: 'messaging.operation.type',
  MESSAGING_OPERATION_NAME: 'messaging.operation.name',
  MESSAGING_DESTINATION_NAME: 'messaging.destination.name',
  MESSAGING_DESTINATION_PARTITION_ID: 'messaging.destination.partition.id',
  MESSAGING_BATCH_MESSAGE_COUNT: 'messaging.batch.message_count',
  MESSAGING_CONSUMER_GROUP_NAME: 'messaging.consumer.group.name',
  KAFKA_OFFSET: 'kafka.offset',
  ERROR_TYPE: 'error.type',
  MIRROR_FLOW: 'kafka_mirror.flow',
  MIRROR_SOURCE: 'kafka_mirror.source',
  MIRROR_TARGET: 'kafka_mirror.target',
  MIRROR_SOURCE_TOPIC: 'kafka_mirror.source.topic',
  MIRROR_LAST_OFFSET: 'kafka_mirror.last_offset',
  MIRROR_LINKS_DROPPED: 'kafka_mirror.links_dropped',
  RETRY_OPERATION: 'kafka_mirror.retry.operation',
  RETRY_ERROR_CODE: 'kafka_mirror.retry.error_code',
  RETRY_ATTEMPT: 'kafka_mirror.retry.attempt',
  RETRY_BACKOFF_MS: 'kafka_mirror.retry.backoff_ms',
} as const

/**
 * The name each renamed attribute had under messaging semantic conventions 1.44 (and the mirror's
 * own `kafka.mirror.*` names of that time). Attributes not listed kept their names.
 */
const NAMES_BEFORE_1_45: Readonly<Record<string, string>> = {
  [TraceAttributes.MESSAGING_SYSTEM_NAME]: 'messaging.system',
  [TraceAttributes.KAFKA_OFFSET]: 'messaging.kafka.offset',
  [TraceAttributes.MIRROR_FLOW]: 'kafka.mirror.flow',
  [TraceAttributes.MIRROR_SOURCE]: 'kafka.mirror.source',
  [TraceAttributes.MIRROR_TARGET]: 'kafka.mirror.target',
  [TraceAttributes.MIRROR_SOURCE_TOPIC]: 'kafka.mirror.source.topic',
  [TraceAttributes.MIRROR_LAST_OFFSET]: 'kafka.mirror.last_offset',
  [TraceAttributes.MIRROR_LINKS_DROPPED]: 'kafka.mirror.links_dropped',
  [TraceAttributes.RETRY_OPERATION]: 'kafka.mirror.retry.operation',
  [TraceAttributes.RETRY_ERROR_CODE]: 'kafka.mirror.retry.error_code',
  [TraceAttributes.RETRY_ATTEMPT]: 'kafka.mirror.retry.attempt',
  [TraceAttributes.RETRY_BACKOFF_MS]: 'kafka.mirror.retry.backoff_ms',
}

/**
 * Which attribute names spans carry: `current` (1.45 only, the default) or `duplicate` (1.45 and,
 * for every renamed attribute, its 1.44 name as well).
 */
export type SemconvEmission = 'current' | 'duplicate'

/**
 * Reads `OTEL_SEMCONV_STABILITY_OPT_IN` (a comma-separated list, as OpenTelemetry documents it for
 * messaging): `messaging/dup` emits both the current and the 1.44 names, so dashboards and queries
 * written for 1.44 keep working while they move; `messaging` or no messaging value emits the
 * current names only. `messaging/dup` wins when both are listed; values for other categories
 * (`http`, `database`) are ignored. OpenTelemetry defines no value for "old names only", so there
 * is none here: `messaging/dup` is the way to keep 1.44 names.
 */
export function semconvEmission (env: NodeJS.ProcessEnv): SemconvEmission {
  const values = (env.OTEL_SEMCONV_STABILITY_OPT_IN ?? '').split(',').map(value => value.trim().toLowerCase())
  return values.includes('messaging/dup') ? 'duplicate' : 'current'
}

/** The attributes as given (current names), plus the 1.44 name of each renamed one when duplicating. */
export function conventionAttributes (attributes: Attributes, emission: SemconvEmission): Attributes {
  if (emission === 'current') return attributes
  const both: Attributes = { ...attributes }
  for (const [name, value] of Object.entries(attributes)) {
    const before = NAMES_BEFORE_1_45[name]
    if (before !== undefined) both[before] = value
  }
  return both
}
