import { MirrorError } from '../shared/errors.js'
import type { PartitionAck } from './ports.js'

/** A partition of a send that the target did not write, and why (the broker's answer for it). */
export interface PartitionFailure {
  readonly topic: string
  readonly partition: number
  readonly error: MirrorError
}

/**
 * A send that failed for some of its partitions only, or after the target had written some of
 * them (a request to one broker answered, another failed; one partition of an answer refused).
 * `written` says which partitions are on the target, and where: a retry sends only the others, so
 * nothing is written twice. `failed` names the partitions refused and each one's own error, where
 * the client told them apart (empty: every unwritten partition failed with this error). Code,
 * retriability and Kafka error name are those of `cause`: not retriable when any partition was
 * refused for good.
 */
export class PartialSendError extends MirrorError {
  readonly written: readonly PartitionAck[]
  readonly failed: readonly PartitionFailure[]

  constructor (cause: MirrorError, written: readonly PartitionAck[], failed: readonly PartitionFailure[] = []) {
    super(cause.code, cause.message, { cause, retriable: cause.retriable, ...(cause.kafkaCode === undefined ? {} : { kafkaCode: cause.kafkaCode }) })
    this.written = written
    this.failed = failed
  }
}
