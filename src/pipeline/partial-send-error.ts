import { MirrorError } from '../shared/errors.js'
import type { PartitionAck } from './ports.js'

/**
 * A send that failed after the target had written some of its partitions (a request to one broker
 * answered, another failed). `written` says which, and where; a retry sends only the others, so
 * nothing is written twice. Code, retriability and Kafka error name are those of `cause`.
 */
export class PartialSendError extends MirrorError {
  readonly written: readonly PartitionAck[]

  constructor (cause: MirrorError, written: readonly PartitionAck[]) {
    super(cause.code, cause.message, { cause, retriable: cause.retriable, ...(cause.kafkaCode === undefined ? {} : { kafkaCode: cause.kafkaCode }) })
    this.written = written
  }
}
