/** What the fetcher does with each of Kafka's error codes a Fetch answer carries for a partition. */
import { KafkaErrorCodes as FetchErrors } from './kafka-error-codes.js'

/**
 * Errors after which the partition's leader (and leader epoch) is looked up again with Metadata and the fetch
 * retried: the broker is no longer (or not yet) its leader, or the epoch we sent is older or newer than the
 * broker's (KIP-320: FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), or the topic's id moved (KIP-516).
 */
const REFRESH_AND_RETRY = new Set<number>([
  FetchErrors.NOT_LEADER_OR_FOLLOWER,
  FetchErrors.LEADER_NOT_AVAILABLE,
  FetchErrors.UNKNOWN_TOPIC_OR_PARTITION,
  FetchErrors.REPLICA_NOT_AVAILABLE,
  FetchErrors.KAFKA_STORAGE_ERROR,
  FetchErrors.FENCED_LEADER_EPOCH,
  FetchErrors.UNKNOWN_LEADER_EPOCH,
  FetchErrors.OFFSET_NOT_AVAILABLE,
  FetchErrors.UNKNOWN_TOPIC_ID,
  FetchErrors.INCONSISTENT_TOPIC_ID,
  FetchErrors.FETCH_SESSION_TOPIC_ID_ERROR,
])

/** Errors retried as they are, after the backoff (the request's answer for that partition is dropped). */
const RETRY = new Set<number>([FetchErrors.CORRUPT_MESSAGE, FetchErrors.REQUEST_TIMED_OUT, FetchErrors.NETWORK_EXCEPTION])

/** What the fetcher does with a partition's error: refresh metadata and retry, retry, or stop the partition and report it. */
export function fetchErrorAction (code: number): 'refresh' | 'retry' | 'report' {
  if (REFRESH_AND_RETRY.has(code)) return 'refresh'
  if (RETRY.has(code)) return 'retry'
  return 'report'
}
