/** Error codes shared by the sidecar and the CLI, with a common prefix, as `as const` values. */
export const ErrorCodes = {
  CONFIG: 'MIRROR_CONFIG',
  CONNECTION: 'MIRROR_CONNECTION',
  AUTHENTICATION: 'MIRROR_AUTHENTICATION',
  SEND_FAILED: 'MIRROR_SEND_FAILED',
  COMMIT_FAILED: 'MIRROR_COMMIT_FAILED',
  KAFKA: 'MIRROR_KAFKA',
  STOPPED: 'MIRROR_STOPPED',
  MESSAGE_HANDLER: 'MIRROR_MESSAGE_HANDLER',
  /** Records lost without a failure (a recreated source or target topic): the flow stops without committing. */
  DATA_LOSS: 'MIRROR_DATA_LOSS',
  /** Exactly-once: a producer lane's transaction cannot commit (fenced by another process, timed out). */
  TRANSACTION_FAILED: 'MIRROR_TRANSACTION_FAILED',
  /** A source record batch whose CRC-32C does not match its bytes (corrupt on the source cluster). */
  CORRUPT_BATCH: 'MIRROR_CORRUPT_BATCH',
  INTERNAL: 'MIRROR_INTERNAL',
} as const
export type ErrorCode = typeof ErrorCodes[keyof typeof ErrorCodes]

export interface MirrorErrorOptions {
  readonly retriable?: boolean
  readonly cause?: unknown
  /** The Kafka protocol error name when the error came from a broker (`MESSAGE_TOO_LARGE`). */
  readonly kafkaCode?: string
}

/** The project's one error type. `retriable` tells the retry helper whether to try again. */
export class MirrorError extends Error {
  override readonly name = 'MirrorError'
  readonly code: ErrorCode
  readonly retriable: boolean
  readonly kafkaCode: string | undefined

  constructor (code: ErrorCode, message: string, options: MirrorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.retriable = options.retriable ?? false
    this.kafkaCode = options.kafkaCode
  }
}

/** One problem in the configuration: the key, the value as given, and what to do. */
export interface ConfigProblem {
  readonly key: string
  readonly value?: string
  readonly message: string
}

function formatProblem (problem: ConfigProblem): string {
  return problem.value === undefined
    ? `${problem.key}: ${problem.message}`
    : `${problem.key} "${problem.value}": ${problem.message}`
}

/** Every problem found while reading the configuration, reported together before anything connects. */
export class ConfigError extends MirrorError {
  readonly problems: readonly ConfigProblem[]

  constructor (problems: readonly ConfigProblem[]) {
    super(ErrorCodes.CONFIG, problems.map(formatProblem).join('\n'))
    this.problems = problems
  }
}

/** Follows `cause` (a client's `originalError`, the first of an aggregate's `errors`) through wrappers, at most 8 deep, to the error that started it. */
export function rootCause (error: unknown): unknown {
  let current = error
  for (let depth = 0; depth < 8; depth++) {
    const wrapper = current as { cause?: unknown, originalError?: unknown, errors?: unknown } | null | undefined
    // An aggregate (kafkajs' createTopics "Topic creation errors") holds the broker's errors in `errors`.
    const next = wrapper?.cause ?? wrapper?.originalError ?? (Array.isArray(wrapper?.errors) ? wrapper.errors[0] : undefined)
    if (next === undefined || next === null || typeof next !== 'object') break
    current = next
  }
  return current
}

/**
 * Short error code for metric labels: a `MirrorError`'s Kafka error name (`MESSAGE_TOO_LARGE`) or
 * its code; for any other error, the `type` or class name of its root cause.
 */
export function errorLabel (error: unknown): string {
  if (error instanceof MirrorError) return error.kafkaCode ?? error.code
  const root = rootCause(error) as { type?: unknown, name?: unknown } | null | undefined
  const label = root?.type ?? root?.name
  return typeof label === 'string' ? label : 'unknown'
}

export function isRetriable (error: unknown): boolean {
  return error instanceof MirrorError ? error.retriable : false
}
