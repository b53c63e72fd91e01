import { ErrorCodes, MirrorError } from '../../../shared/errors.js'

/** Kafka's error codes the group APIs answer with (`org.apache.kafka.common.protocol.Errors`). */
export const GroupErrors = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  REQUEST_TIMED_OUT: 7,
  NETWORK_EXCEPTION: 13,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  ILLEGAL_GENERATION: 22,
  INCONSISTENT_GROUP_PROTOCOL: 23,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26,
  REBALANCE_IN_PROGRESS: 27,
  GROUP_AUTHORIZATION_FAILED: 30,
  MEMBER_ID_REQUIRED: 79,
  GROUP_MAX_SIZE_REACHED: 81,
  FENCED_INSTANCE_ID: 82,
  UNSTABLE_OFFSET_COMMIT: 88,
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
  UNSUPPORTED_ASSIGNOR: 112,
  STALE_MEMBER_EPOCH: 113,
} as const

const NAMES = new Map<number, string>(Object.entries(GroupErrors).map(([name, code]) => [code, name]))

/** Kafka's name of a group error code (`REBALANCE_IN_PROGRESS`), or `error code N`. */
export function groupErrorName (code: number): string {
  return NAMES.get(code) ?? `error code ${code}`
}

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
