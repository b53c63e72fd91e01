import { ErrorCodes, MirrorError } from '../shared/errors.js'

/**
 * A producer lane's open transaction can no longer commit: another process took the lane's
 * transactional id (fenced), the transaction timed out on the target, or the producer lost its
 * state. Nothing of that transaction will be visible to read_committed consumers; the lane's
 * partitions resume from the positions last committed on the target.
 */
export class TransactionFailedError extends MirrorError {
  constructor (message: string, options: { cause?: unknown, kafkaCode?: string } = {}) {
    super(ErrorCodes.TRANSACTION_FAILED, message, { ...options, retriable: false })
  }
}
