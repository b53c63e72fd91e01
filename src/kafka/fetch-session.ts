/*
 * Incremental fetch sessions (KIP-227) for kafkajs' consumer, which has none: without them every
 * Fetch request names every assigned partition and every response lists every one of them, so a
 * caught-up mirror of 10,000 partitions encodes and decodes 10,000 partitions every
 * `fetch.max.wait.ms`. With a session the broker remembers the partitions and their fetch
 * offsets; a request carries only the partitions added or changed (a new fetch offset) and those
 * dropped ("forgotten"), and a response only the partitions with something new (records, a
 * moved high watermark, an error). Pure bookkeeping: the patched `consumer/consumerGroup.js`
 * (patches/kafkajs+2.2.4.patch) asks `FetchSessions.forNode` for the request's session fields and
 * hands the answer back (wired up in `kafkajs-internals.ts`); the wire layer's `BrokerFetcher`
 * keeps one `FetchSession` per broker loop, with the partitions' leader epochs (KIP-320).
 */

/** One partition of a Fetch request as kafkajs' consumer builds it. */
export interface FetchPartitionRequest {
  readonly partition: number
  /** The offset to fetch from, as kafkajs keeps it (a decimal string). */
  readonly fetchOffset: string
  readonly maxBytes: number
  /** KIP-320: the leader epoch the fetcher knows (absent: kafkajs' consumer, which sends none). A change is sent in the next request. */
  readonly currentLeaderEpoch?: number
  /** KIP-320: the epoch of the last batch fetched (absent: none sent). A change is sent in the next request. */
  readonly lastFetchedEpoch?: number
}

/** One topic of a Fetch request. */
export interface FetchTopicRequest {
  readonly topic: string
  readonly partitions: readonly FetchPartitionRequest[]
}

/** The fields of one Fetch request (v7+) a session decides. */
export interface FetchSessionFields {
  readonly sessionId: number
  readonly sessionEpoch: number
  /** The partitions to send: all of them in a full request, only the added or changed ones in an incremental one. */
  readonly topics: readonly FetchTopicRequest[]
  /** Partitions to drop from the session (incremental requests only). */
  readonly forgottenTopics: ReadonlyArray<{ readonly topic: string, readonly partitions: readonly number[] }>
}

/** What of a Fetch response the session looks at (kafkajs' decoded v7+ response). */
export interface FetchSessionResponse {
  /** Absent in answers to Fetch below v7 (a broker without sessions). */
  readonly errorCode?: number
  readonly sessionId?: number
  readonly clientSideThrottleTime?: number
  readonly responses: ReadonlyArray<{ readonly topicName: string, readonly partitions: ReadonlyArray<{ readonly partition: number }> }>
}

/** One request of a session: its fields, and how it ended (exactly one of `completed` or `failed`). */
export interface FetchSessionRequest {
  readonly fields: FetchSessionFields
  /** True for a full request (every partition sent). */
  readonly full: boolean
  /** The broker answered: true when the answer can be used, false when it must be dropped (a session error: the next request is a full one). */
  completed: (response: FetchSessionResponse) => boolean
  /** No usable answer (connection lost, timeout, a partition error kafkajs threw for): the next request is a full one opening a new session. */
  failed: () => void
}

/** Fetch session error codes (KIP-227). */
export const FETCH_SESSION_ID_NOT_FOUND = 70
export const INVALID_FETCH_SESSION_EPOCH = 71

/** No session (request) or the broker made none (response). */
const NO_SESSION_ID = 0
/** The epoch of a full request that opens a session (and closes the one named, if any). */
const INITIAL_EPOCH = 0
/** The epoch of a full request outside any session. */
const SESSIONLESS_EPOCH = -1
const MAX_EPOCH = 2_147_483_647

/** Counts of one consumer's fetch requests, by kind, for tests and logs. */
export interface FetchSessionCounts {
  full: number
  incremental: number
  /** Answers that ended a session: a session error, an unexpected partition, a failed request. */
  resets: number
  /** Full requests outside the session because another request to the same broker was in flight. */
  sessionless: number
}

interface SessionPartition {
  fetchOffset: string
  maxBytes: number
  currentLeaderEpoch: number | undefined
  lastFetchedEpoch: number | undefined
  /** The build in which the partition was last wanted: the others are forgotten. */
  seen: number
}

function sessionFieldsOf (request: FetchPartitionRequest): Omit<SessionPartition, 'seen'> {
  const { fetchOffset, maxBytes, currentLeaderEpoch, lastFetchedEpoch } = request
  return { fetchOffset, maxBytes, currentLeaderEpoch, lastFetchedEpoch }
}

/** Whether the broker's copy of a partition in the session (`held`) still says what `request` says: then it is not sent again. */
function sameSessionFields (held: SessionPartition, request: FetchPartitionRequest): boolean {
  return held.fetchOffset === request.fetchOffset && held.maxBytes === request.maxBytes &&
    held.currentLeaderEpoch === request.currentLeaderEpoch && held.lastFetchedEpoch === request.lastFetchedEpoch
}

/**
 * The client side of one fetch session with one broker. At most one request of it is in flight;
 * a request built while another is in flight goes outside the session (a full request with epoch
 * -1), so the epochs the broker sees are always in order. After an error the next request is a
 * full one, so the broker's and this side's view of the partitions never stay apart.
 */
export class FetchSession {
  #sessionId = NO_SESSION_ID
  #epoch = INITIAL_EPOCH
  #inFlight = false
  /** The broker answered without session fields (Fetch below v7): every request is a plain full one. */
  #unsupported = false
  #build = 0
  /** The partitions the broker holds in the session, as last sent, by topic then partition. */
  readonly #partitions = new Map<string, Map<number, SessionPartition>>()
  /** `wanted` of the last request of this session (see `next`). */
  #lastWanted: readonly FetchTopicRequest[] | undefined
  readonly counts: FetchSessionCounts

  constructor (counts: FetchSessionCounts = { full: 0, incremental: 0, resets: 0, sessionless: 0 }) {
    this.counts = counts
  }

  /** The session id the broker gave (0: none yet). */
  get sessionId (): number { return this.#sessionId }
  /** The epoch of the next request (0: the next request is a full one). */
  get epoch (): number { return this.#epoch }

  /**
   * The request for the partitions kafkajs wants to fetch now (`wanted`, every one of them, with
   * their fetch offsets). The array passed for the last request, passed again, is taken for
   * unchanged without looking into it, so a caller must not change an array once passed. (The
   * patched consumer passes its last array again while no offset, assignment or pause state of the
   * node changed: `consumerGroup.fetch` in patches/kafkajs+2.2.4.patch.)
   */
  next (wanted: readonly FetchTopicRequest[]): FetchSessionRequest {
    if (this.#inFlight || this.#unsupported) {
      this.counts.sessionless++
      return {
        fields: { sessionId: NO_SESSION_ID, sessionEpoch: SESSIONLESS_EPOCH, topics: wanted, forgottenTopics: [] },
        full: true,
        completed: () => true,
        failed: () => { /* no session to reset */ },
      }
    }
    this.#inFlight = true
    const full = this.#sessionId === NO_SESSION_ID || this.#epoch === INITIAL_EPOCH
    if (!full && wanted === this.#lastWanted) {
      this.counts.incremental++
      return this.#request(false, [], [])
    }
    this.#lastWanted = wanted
    const build = ++this.#build
    const send: FetchTopicRequest[] = full ? [...wanted] : []
    if (full) this.#partitions.clear()
    for (const { topic, partitions } of wanted) {
      let known = this.#partitions.get(topic)
      if (known === undefined) this.#partitions.set(topic, known = new Map())
      let changed: FetchPartitionRequest[] | undefined
      for (const request of partitions) {
        const held = known.get(request.partition)
        if (held === undefined) {
          known.set(request.partition, { ...sessionFieldsOf(request), seen: build })
        } else {
          held.seen = build
          if (sameSessionFields(held, request)) continue
          Object.assign(held, sessionFieldsOf(request))
        }
        if (!full) (changed ??= []).push(request)
      }
      if (changed !== undefined) send.push({ topic, partitions: changed })
    }
    const forgottenTopics: Array<{ topic: string, partitions: number[] }> = []
    for (const [topic, known] of this.#partitions) {
      let gone: number[] | undefined
      for (const [partition, held] of known) {
        if (held.seen === build) continue
        known.delete(partition)
        ;(gone ??= []).push(partition)
      }
      if (known.size === 0) this.#partitions.delete(topic)
      if (gone !== undefined) forgottenTopics.push({ topic, partitions: gone })
    }
    if (full) this.counts.full++
    else this.counts.incremental++
    return this.#request(full, send, forgottenTopics)
  }

  #request (full: boolean, send: FetchTopicRequest[], forgottenTopics: FetchSessionFields['forgottenTopics']): FetchSessionRequest {
    let settled = false
    const settle = (): boolean => {
      if (settled) return false
      settled = true
      this.#inFlight = false
      return true
    }
    return {
      fields: { sessionId: this.#sessionId, sessionEpoch: full ? INITIAL_EPOCH : this.#epoch, topics: send, forgottenTopics },
      full,
      completed: response => settle() && this.#completed(full, response),
      failed: () => { if (settle()) this.#reset(this.#sessionId) },
    }
  }

  #completed (full: boolean, response: FetchSessionResponse): boolean {
    if (response.sessionId === undefined) {
      // Only a full request is ever sent before the first answer, so this answer is complete.
      this.#unsupported = true
      this.#partitions.clear()
      return true
    }
    if ((response.errorCode ?? 0) !== 0) {
      // An unknown session starts afresh; a wrong epoch (or any other error) closes ours and opens a new one.
      this.#reset(response.errorCode === FETCH_SESSION_ID_NOT_FOUND ? NO_SESSION_ID : this.#sessionId)
      return false
    }
    if (full) {
      // KIP-219: an empty full answer with a throttle time is the broker asking to back off, not the session's partitions.
      if (response.responses.length === 0 && (response.clientSideThrottleTime ?? 0) > 0 && this.#size() > 0) {
        this.#reset(NO_SESSION_ID)
        return false
      }
      this.#sessionId = response.sessionId
      this.#epoch = response.sessionId === NO_SESSION_ID ? INITIAL_EPOCH : 1
      return true
    }
    for (const { topicName, partitions } of response.responses) {
      const known = this.#partitions.get(topicName)
      if (partitions.some(({ partition }) => known?.has(partition) !== true)) {
        // A partition the session does not hold: the two sides disagree, so start over with a full request.
        this.#reset(this.#sessionId)
        return false
      }
    }
    if (response.sessionId === NO_SESSION_ID) {
      // The broker closed the session (evicted from its cache): the next request is a full one.
      this.#sessionId = NO_SESSION_ID
      this.#epoch = INITIAL_EPOCH
      return true
    }
    this.#epoch = this.#epoch === MAX_EPOCH ? 1 : this.#epoch + 1
    return true
  }

  /** The next request is a full one; naming `sessionId` (not 0) asks the broker to close that session as it opens the new one. */
  #reset (sessionId: number): void {
    this.counts.resets++
    this.#sessionId = sessionId
    this.#epoch = INITIAL_EPOCH
    this.#partitions.clear()
  }

  #size (): number {
    let size = 0
    for (const known of this.#partitions.values()) size += known.size
    return size
  }
}

/** The fetch sessions of one kafkajs consumer group instance, one per broker (node id). */
export class FetchSessions {
  readonly #byNode = new Map<string, FetchSession>()
  /** Summed over the brokers. */
  readonly counts: FetchSessionCounts = { full: 0, incremental: 0, resets: 0, sessionless: 0 }

  forNode (nodeId: number | string): FetchSession {
    const key = String(nodeId)
    let session = this.#byNode.get(key)
    if (session === undefined) this.#byNode.set(key, session = new FetchSession(this.counts))
    return session
  }
}
