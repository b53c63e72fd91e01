import { ErrorCodes, MirrorError, type ErrorCode } from '../shared/errors.js'

interface KafkaJsErrorShape {
  name?: string
  message?: string
  type?: string
  retriable?: boolean
  cause?: unknown
  originalError?: unknown
}

/** Follows kafkajs' wrappers (retries exceeded, nested causes) down to the error that started it. */
function rootCause (error: unknown): KafkaJsErrorShape {
  let current = error as KafkaJsErrorShape
  for (let depth = 0; depth < 8; depth++) {
    const next = (current?.cause ?? current?.originalError) as KafkaJsErrorShape | undefined
    if (next === undefined || next === null || typeof next !== 'object') break
    current = next
  }
  return current ?? {}
}

const AUTH_TYPES = new Set(['SASL_AUTHENTICATION_FAILED', 'ILLEGAL_SASL_STATE', 'UNSUPPORTED_SASL_MECHANISM', 'TOPIC_AUTHORIZATION_FAILED', 'GROUP_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED'])

/**
 * Converts an error thrown by the Kafka client into a `MirrorError`. `retriable` follows the
 * original cause: a request that ran out of client retries on a connection error is still worth
 * retrying later (the broker may come back), a `MESSAGE_TOO_LARGE` never is.
 */
export function toMirrorError (error: unknown, context: string, code: ErrorCode = ErrorCodes.KAFKA): MirrorError {
  if (error instanceof MirrorError) return error
  const root = rootCause(error)
  const top = (error ?? {}) as KafkaJsErrorShape
  const kafkaCode = root.type ?? top.type
  const name = root.name ?? top.name ?? 'Error'
  const authentication = (kafkaCode !== undefined && AUTH_TYPES.has(kafkaCode)) || name === 'KafkaJSSASLAuthenticationError'
  const connection = name === 'KafkaJSConnectionError' || name === 'KafkaJSRequestTimeoutError' || name === 'KafkaJSConnectionClosedError' ||
    name === 'KafkaJSBrokerNotFound' || name === 'KafkaJSMetadataNotLoaded' || name === 'KafkaJSLockTimeout' || name === 'KafkaJSStaleTopicMetadataAssignment'
  const retriable = !authentication && (connection || root.retriable === true || top.retriable === true)
  const reason = root.message ?? top.message ?? String(error)
  return new MirrorError(authentication ? ErrorCodes.AUTHENTICATION : connection ? ErrorCodes.CONNECTION : code, `${context}: ${reason}`, {
    retriable,
    cause: error,
    ...(kafkaCode === undefined ? {} : { kafkaCode }),
  })
}

/** Short error code for metric labels: the Kafka error name, or the client's error class. */
export function errorLabel (error: unknown): string {
  if (error instanceof MirrorError) return error.kafkaCode ?? error.code
  const root = rootCause(error)
  return root.type ?? root.name ?? 'unknown'
}
