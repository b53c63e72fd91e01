import { ErrorCodes, MirrorError } from '../../../shared/errors.js'
import { KafkaErrorCodes, kafkaErrorName } from '../kafka-error-codes.js'

/** Kafka's error codes the group APIs answer with: the wire layer's one table of them. */
export const GroupErrors = KafkaErrorCodes

/** Kafka's name of a group error code (`REBALANCE_IN_PROGRESS`), or `error code N`. */
export const groupErrorName = kafkaErrorName

/** Errors after which the coordinator must be looked up again (the group moved or its coordinator is not ready). */
const COORDINATOR_MOVED = new Set<number>([
  GroupErrors.NOT_COORDINATOR,
  GroupErrors.COORDINATOR_NOT_AVAILABLE,
  GroupErrors.REQUEST_TIMED_OUT,
  GroupErrors.NETWORK_EXCEPTION,
])

/** True when `code` says the coordinator moved or is gone: look it up again before the next request. */
export function coordinatorMoved (code: number): boolean {
  return COORDINATOR_MOVED.has(code)
}

/** A MirrorError for a group API's error answer; retriable for the coordinator's transient states. */
export function groupError (api: string, groupId: string, code: number, message?: string | null): MirrorError {
  const retriable = coordinatorMoved(code) || code === GroupErrors.COORDINATOR_LOAD_IN_PROGRESS || code === GroupErrors.UNRELEASED_INSTANCE_ID
  const name = groupErrorName(code)
  return new MirrorError(ErrorCodes.KAFKA, `${api} of group ${groupId}: ${name}${message === undefined || message === null ? '' : `: ${message}`}`, {
    retriable,
    kafkaCode: name,
  })
}
