/**
 * Fetch requests of the wire layer from a fetch session's fields (`../fetch-session.ts`, KIP-227), and the
 * session's view of their answers. Topics go by name up to Fetch v12 and by topic id from v13 (KIP-516); the
 * codec writes whichever the negotiated version carries.
 */
import type { FetchSessionFields, FetchSessionResponse, FetchTopicRequest } from '../fetch-session.js'
import type { RequestOf, ResponseOf } from './broker-connection.js'
import type { ClaimedPartition } from './fetch-assignments.js'
import type { IsolationLevel } from './fetched-batches.js'

/** What a Fetch request asks besides its partitions. */
export interface FetchRequestSettings {
  readonly maxWaitMs: number
  readonly minBytes: number
  readonly maxBytes: number
  readonly partitionMaxBytes: number
  readonly isolationLevel: IsolationLevel
  /** KIP-392: the consumer's rack (`client.rack`); '' for none. */
  readonly rackId: string
}

/** The partitions claimed for a request, grouped by topic as the session takes them (offsets as decimal strings, epochs as KIP-320 sends them). */
export function wantedPartitions (claimed: readonly ClaimedPartition[], partitionMaxBytes: number): FetchTopicRequest[] {
  const byTopic = new Map<string, FetchTopicRequest['partitions'][number][]>()
  for (const { topic, partition, position, currentLeaderEpoch, lastFetchedEpoch } of claimed) {
    let partitions = byTopic.get(topic)
    if (partitions === undefined) byTopic.set(topic, partitions = [])
    partitions.push({ partition, fetchOffset: String(position), maxBytes: partitionMaxBytes, currentLeaderEpoch, lastFetchedEpoch })
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }))
}

/** The Fetch request for a session's `fields`; `topicIds` names each topic's id (KIP-516, Fetch v13+). */
export function fetchRequest (fields: FetchSessionFields, settings: FetchRequestSettings, topicIds: ReadonlyMap<string, string>): RequestOf<'Fetch'> {
  const idOf = (topic: string): string => topicIds.get(topic) ?? 'AAAAAAAAAAAAAAAAAAAAAA'
  return {
    maxWaitMs: settings.maxWaitMs,
    minBytes: settings.minBytes,
    maxBytes: settings.maxBytes,
    isolationLevel: settings.isolationLevel,
    sessionId: fields.sessionId,
    sessionEpoch: fields.sessionEpoch,
    topics: fields.topics.map(({ topic, partitions }) => ({
      topic,
      topicId: idOf(topic),
      partitions: partitions.map(request => ({
        partition: request.partition,
        // KIP-320: -1 (unknown) lets the broker skip the epoch check.
        currentLeaderEpoch: request.currentLeaderEpoch ?? -1,
        fetchOffset: BigInt(request.fetchOffset),
        lastFetchedEpoch: request.lastFetchedEpoch ?? -1,
        logStartOffset: -1n,
        partitionMaxBytes: request.maxBytes,
      })),
    })),
    forgottenTopicsData: fields.forgottenTopics.map(({ topic, partitions }) => ({ topic, topicId: idOf(topic), partitions: [...partitions] })),
    rackId: settings.rackId,
  }
}

/** The name of a response topic: its name up to Fetch v12, its id's name from v13 (undefined: an id this fetcher does not know). */
export function responseTopicName (topic: { readonly topic?: string, readonly topicId?: string }, topicNames: ReadonlyMap<string, string>): string | undefined {
  if (topic.topic !== undefined && topic.topic !== '') return topic.topic
  return topic.topicId === undefined ? undefined : topicNames.get(topic.topicId)
}

/** What the session looks at in a Fetch answer (KIP-227), with topics by name; KIP-219's throttle time as the client's to keep. */
export function sessionResponse (response: ResponseOf<'Fetch'>, topicNames: ReadonlyMap<string, string>): FetchSessionResponse {
  return {
    errorCode: response.errorCode,
    sessionId: response.sessionId,
    clientSideThrottleTime: response.throttleTimeMs,
    responses: response.responses.map(topic => ({
      // A topic id we do not know cannot be in the session: it reads as a partition the session does not hold.
      topicName: responseTopicName(topic, topicNames) ?? `unknown topic id ${topic.topicId ?? ''}`,
      partitions: topic.partitions.map(({ partitionIndex }) => ({ partition: partitionIndex })),
    })),
  }
}
