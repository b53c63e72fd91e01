/**
 * The mirror's fetcher on the wire layer: one fetch loop per source broker over `BrokerConnection`, in
 * incremental fetch sessions (KIP-227), handing out record batches as the raw bytes of the response.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { FetchSession, type FetchSessionCounts, type FetchSessionFields, type FetchTopicRequest } from '../fetch-session.js'
import type { BrokerConnection, BrokerConnectionOptions, ResponseOf } from './broker-connection.js'
import { BOOTSTRAP_NODE, BrokerConnections, type BrokerAddress } from './broker-connections.js'
import { FetchAssignments, type ClaimedPartition } from './fetch-assignments.js'
import { fetchErrorAction } from './fetch-errors.js'
import { KafkaErrorCodes as FetchErrors, kafkaErrorName } from './kafka-error-codes.js'
import { fetchRequest, responseTopicName, sessionResponse, wantedPartitions, type FetchRequestSettings } from './fetch-request-builder.js'
import { fetchedBatches, IsolationLevel, type RawBatch } from './fetched-batches.js'

export interface BrokerFetcherOptions {
  /** Brokers to ask for metadata first. */
  readonly bootstrap: readonly BrokerAddress[]
  /** How to connect to each broker: client id, TLS, SASL, timeouts. */
  readonly connection: Omit<BrokerConnectionOptions, 'host' | 'port'>
  /** Kafka's `isolation.level`. Default `read_uncommitted`. */
  readonly isolationLevel?: 'read_uncommitted' | 'read_committed'
  /** How long a broker may hold a fetch for `minBytes` to arrive (Kafka's `fetch.max.wait.ms`), in milliseconds. Default 500. */
  readonly maxWaitMs?: number
  /** The bytes a broker waits for before it answers (Kafka's `fetch.min.bytes`). Default 1. */
  readonly minBytes?: number
  /** The most bytes one answer carries (Kafka's `fetch.max.bytes`; KIP-74: one batch larger than this still comes). Default 52,428,800. */
  readonly maxBytes?: number
  /** The most bytes of one partition in one answer (Kafka's `max.partition.fetch.bytes`). Default 1,048,576. */
  readonly partitionMaxBytes?: number
  /** KIP-392: the fetcher's rack (Kafka's `client.rack`), sent as the Fetch request's rack id; '' (the default) for none. */
  readonly rack?: string
  /** How long Metadata answers, and a preferred read replica (KIP-392), are trusted, in milliseconds (Kafka's `metadata.max.age.ms`). Default 300,000. */
  readonly metadataMaxAgeMs?: number
  /** The wait before a failed fetch or Metadata request is tried again, in milliseconds (Kafka's `retry.backoff.ms`). Default 100. */
  readonly retryBackoffMs?: number
  /** KIP-227: fetch in incremental fetch sessions. Default true; false sends every partition in every request. */
  readonly fetchSessions?: boolean
}

/** One partition's part of a fetch answer. */
export interface FetchedPartition {
  readonly topic: string
  readonly partition: number
  /** The offset the request fetched from: the first batch may start before it (a fetch from inside a batch returns the whole batch). */
  readonly fetchOffset: bigint
  /** The batches, in offset order, as views of the response: never copied or decoded. */
  readonly batches: readonly RawBatch[]
  /** The next offset the fetcher fetches from: past every batch read, handed out or skipped (control batches, aborted transactions). */
  readonly nextFetchOffset: bigint
  readonly highWatermark: bigint
  readonly lastStableOffset: bigint
  readonly logStartOffset: bigint
  /** Batches read and not handed out: control batches and (read_committed) aborted transactions' batches. */
  readonly skippedBatches: number
}

/** What one Fetch answer of one broker brought. */
export interface FetchedResponse {
  /** The node id of the broker that answered (the leader, or a preferred read replica: KIP-392). */
  readonly node: number
  /** The answer's size in bytes: every batch below is a view of it. */
  readonly responseBytes: number
  /** The bytes the batches' views keep alive (the buffer under the answer, at least `responseBytes`): what a memory bound counts. */
  readonly retainedBytes: number
  /** The partitions with batches or a moved position. */
  readonly partitions: readonly FetchedPartition[]
}

/** Something about one partition the caller decides on; the partition is not fetched again until it is assigned again. */
export interface FetchEvent {
  readonly kind: 'offset-out-of-range' | 'diverging-epoch' | 'partition-error'
  readonly topic: string
  readonly partition: number
  readonly fetchOffset: bigint
  /** Kafka's error name (`OFFSET_OUT_OF_RANGE`); 'DIVERGING_EPOCH' for a diverging epoch. */
  readonly error: string
  /** KIP-320: the largest epoch the leader's log and ours share, and where it ends there: the log was truncated below `fetchOffset`. */
  readonly divergingEpoch?: { readonly epoch: number, readonly endOffset: bigint }
  readonly logStartOffset?: bigint
  readonly highWatermark?: bigint
}

/** What the fetcher tells its caller. */
export interface FetchListener {
  /**
   * One answer's batches. The loop of the broker that answered hands over its next answer only once the promise
   * resolves, and fetches at most that one meanwhile (backpressure, Invariant D).
   */
  fetched: (response: FetchedResponse) => Promise<void>
  /** A partition stopped for something the caller decides on (Invariant C of `FetchAssignments`). */
  event: (event: FetchEvent) => void
  /** The fetcher stopped on a failure it does not retry (the listener's own promise rejected). */
  failed: (error: Error) => void
}

/** Counts of the fetcher's requests and answers, for tests, logs and metrics. */
export interface FetchCounts {
  readonly sessions: FetchSessionCounts
  /** Bytes of the Fetch requests written, by kind (size prefix and header included). */
  fullRequestBytes: number
  incrementalRequestBytes: number
  /** Fetch requests sent, by the node id of the broker they went to. */
  readonly requestsByNode: Map<number, number>
  /** Bytes of every Fetch answer read. */
  responseBytes: number
  /** Metadata requests answered. */
  metadataRefreshes: number
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

/** A partition of an answer not handed over yet, with the assignment it was fetched for. */
interface PendingPartition {
  readonly fetched: FetchedPartition
  readonly generation: number
}

/** An answer of one loop waiting for the listener to take the one before. */
interface PendingAnswer {
  readonly responseBytes: number
  readonly retainedBytes: number
  readonly partitions: readonly PendingPartition[]
}

/**
 * Fetches the assigned partitions from their leaders (or, KIP-392, the replica a leader prefers for the
 * fetcher's rack), one loop per broker, one request in flight per loop.
 *
 * Invariants (checked by `checkInvariants()`, kept by `FetchAssignments`): A, a partition is carried by one
 * broker loop's request at a time; B, the offsets handed out per partition follow each other without overlap
 * (each batch ends past the previous one's last offset; only `assign` restarts the sequence, after a reported
 * event or a seek); C, a partition stopped for an event is not fetched again until it is assigned again;
 * D, a loop hands an answer to the listener only once the listener's promise for its previous answer resolved,
 * and no other loop fetches a partition of an answer being handed over. A loop fetches its next answer while
 * the listener takes the last one (as Java's consumer fetches ahead), so the broker's time and the listener's
 * overlap; backpressure: a loop holds at most two answers, the one being handed over and the next.
 * Retries live here: a failed request or a retriable partition error is tried again after `retryBackoffMs`,
 * leader errors after Metadata answered again; there is no give-up (the caller stops the fetcher).
 */
export class BrokerFetcher {
  readonly #options: BrokerFetcherOptions
  readonly #listener: FetchListener
  readonly #settings: FetchRequestSettings
  readonly #assignments = new FetchAssignments()
  readonly #connections: BrokerConnections
  readonly #sessions = new Map<number, FetchSession>()
  readonly #loops = new Map<number, Promise<void>>()
  readonly #topicIds = new Map<string, string>()
  readonly #topicNames = new Map<string, string>()
  readonly #wakers = new Set<() => void>()
  readonly #stopping = new AbortController()
  #metadata: Promise<void> | undefined
  #metadataTimer: NodeJS.Timeout | undefined
  #started = false
  #stopped: Promise<void> | undefined
  readonly counts: FetchCounts

  constructor (options: BrokerFetcherOptions, listener: FetchListener) {
    this.#options = options
    this.#listener = listener
    this.#connections = new BrokerConnections(options.bootstrap, options.connection)
    this.#settings = {
      maxWaitMs: options.maxWaitMs ?? 500,
      minBytes: options.minBytes ?? 1,
      maxBytes: options.maxBytes ?? 52_428_800,
      partitionMaxBytes: options.partitionMaxBytes ?? 1_048_576,
      isolationLevel: options.isolationLevel === 'read_committed' ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED,
      rackId: options.rack ?? '',
    }
    this.counts = {
      sessions: { full: 0, incremental: 0, resets: 0, sessionless: 0 },
      fullRequestBytes: 0,
      incrementalRequestBytes: 0,
      requestsByNode: new Map(),
      responseBytes: 0,
      metadataRefreshes: 0,
    }
  }

  get #backoffMs (): number { return this.#options.retryBackoffMs ?? 100 }
  get #metadataMaxAgeMs (): number { return this.#options.metadataMaxAgeMs ?? 300_000 }

  /** Starts the loops of the partitions assigned so far (Metadata first). Once-only. */
  async start (): Promise<void> {
    if (this.#started || this.#stopped !== undefined) throw new MirrorError(ErrorCodes.INTERNAL, 'broker fetcher started twice, or after stop()')
    this.#started = true
    await this.#refreshMetadata()
  }

  /** Fetches `topic`-`partition` from `offset` on: a new partition, or a new position for one assigned (an answer in flight for it is dropped). */
  assign (topic: string, partition: number, offset: bigint): void {
    this.#assignments.assign(topic, partition, offset)
    this.#changed()
  }

  /** Stops fetching `topic`-`partition`; an answer in flight for it is dropped. */
  unassign (topic: string, partition: number): void {
    this.#assignments.unassign(topic, partition)
    this.#wake()
  }

  /** The next offset the fetcher fetches `topic`-`partition` from; undefined when not assigned. */
  position (topic: string, partition: number): bigint | undefined {
    return this.#assignments.position(topic, partition)
  }

  /** Checks Invariants A to C (see `FetchAssignments`). */
  checkInvariants (): void {
    this.#assignments.checkInvariants()
  }

  /** Stops the loops and closes the connections; waits for each loop's listener promise in hand. Once-only. */
  stop (): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping.abort()
      clearTimeout(this.#metadataTimer)
      this.#wake()
      await this.#connections.stopAll()
      await Promise.all(this.#loops.values())
    })()
    return this.#stopped
  }

  get #isStopped (): boolean {
    return this.#stopped !== undefined
  }

  /** Something assigned changed: loops for new brokers, Metadata for partitions without a leader, every idle loop woken. */
  #changed (): void {
    if (!this.#started || this.#isStopped) return
    if (this.#assignments.leaderless() > 0 || [...this.#assignments.topics()].some(topic => !this.#topicIds.has(topic))) {
      // #refreshMetadata handles its own failures (asked again after the backoff).
      void this.#refreshMetadata()
    }
    this.#ensureLoops()
    this.#wake()
  }

  #ensureLoops (): void {
    for (const node of this.#assignments.readNodes(Date.now())) {
      if (this.#loops.has(node)) continue
      // #loop catches every failure of its own; a failure of the listener stops the fetcher (#fail).
      this.#loops.set(node, this.#loop(node))
    }
  }

  #wake (): void {
    const wakers = [...this.#wakers]
    this.#wakers.clear()
    for (const wake of wakers) wake()
  }

  /** Resolves when `#wake` is called (or the fetcher stops). */
  #woken (): Promise<void> {
    if (this.#isStopped) return Promise.resolve()
    return new Promise(resolve => this.#wakers.add(resolve))
  }

  async #backoff (): Promise<void> {
    // Aborted by stop(): the loop then sees it stopped.
    await sleep(this.#backoffMs, undefined, { signal: this.#stopping.signal }).catch(() => undefined)
  }

  #sessionOf (node: number): FetchSession {
    let session = this.#sessions.get(node)
    if (session === undefined) this.#sessions.set(node, session = new FetchSession(this.counts.sessions))
    return session
  }

  /**
   * The fetch loop of broker `node`: claim its partitions, fetch, hand the answer to the listener once it took the
   * previous one (Invariant D), and fetch again meanwhile.
   */
  async #loop (node: number): Promise<void> {
    /** The hand-over of the loop's last answer; resolves to false when the listener rejected (the fetcher failed). */
    let handing: Promise<boolean> = Promise.resolve(true)
    while (!this.#isStopped) {
      const claimed = this.#assignments.claim(node, Date.now())
      if (claimed.length === 0) {
        this.#assignments.settle(node)
        // A hand-over ending wakes every loop (`#handOver`): a partition it held may be this loop's to fetch now.
        await this.#woken()
        continue
      }
      let answer: PendingAnswer | undefined
      try {
        answer = await this.#fetchOnce(node, claimed)
      } catch (error) {
        // An answer that would break Invariant B: the fetcher stops rather than hand it out.
        this.#assignments.settle(node)
        this.#fail(error)
        await handing
        return
      }
      this.#assignments.settle(node)
      if (answer !== undefined) {
        if (!await handing) return
        handing = this.#handOver(node, answer)
      }
      this.#ensureLoops()
      this.#wake()
    }
    await handing
  }

  /** Hands `answer` to the listener, without the partitions assigned again since it was fetched; false when the listener rejected. */
  async #handOver (node: number, answer: PendingAnswer): Promise<boolean> {
    const partitions = answer.partitions.filter(({ fetched, generation }) => this.#assignments.generation(fetched.topic, fetched.partition) === generation)
      .map(({ fetched }) => fetched)
    if (partitions.length === 0 || this.#isStopped) return true
    this.#assignments.handing(node, partitions)
    try {
      await this.#listener.fetched({ node, responseBytes: answer.responseBytes, retainedBytes: answer.retainedBytes, partitions })
      return true
    } catch (error) {
      this.#fail(error)
      return false
    } finally {
      this.#assignments.handed(node, partitions)
      this.#wake()
    }
  }

  /** One request of loop `node` for `claimed`, its answer handled: what to hand the listener, if anything. */
  async #fetchOnce (node: number, claimed: readonly ClaimedPartition[]): Promise<PendingAnswer | undefined> {
    const wanted = wantedPartitions(claimed, this.#settings.partitionMaxBytes)
    const sessionRequest = this.#options.fetchSessions === false ? sessionless(wanted, this.counts.sessions) : this.#sessionOf(node).next(wanted)
    let connection: BrokerConnection
    let answer: Awaited<ReturnType<BrokerConnection['sendMeasured']>> & { response: ResponseOf<'Fetch'> }
    try {
      connection = await this.#connections.get(node)
      this.counts.requestsByNode.set(node, (this.counts.requestsByNode.get(node) ?? 0) + 1)
      answer = await connection.sendMeasured('Fetch', fetchRequest(sessionRequest.fields, this.#settings, this.#topicIds))
    } catch {
      // No answer (broker gone, restarted, timed out): the session starts afresh with a full request, a preferred
      // replica is given up for the leader (KIP-392), and Metadata is asked again, as the leader may have moved.
      sessionRequest.failed()
      if (this.#isStopped) return
      void this.#connections.drop(node)
      for (const { topic, partition } of claimed) this.#assignments.clearPreferredReplica(topic, partition)
      // #refreshMetadata handles its own failures.
      void this.#refreshMetadata()
      await this.#backoff()
      return
    }
    if (sessionRequest.full) this.counts.fullRequestBytes += answer.requestBytes
    else this.counts.incrementalRequestBytes += answer.requestBytes
    this.counts.responseBytes += answer.frameBytes
    const { response } = answer
    // KIP-227: FETCH_SESSION_ID_NOT_FOUND and INVALID_FETCH_SESSION_EPOCH (or any answer the session cannot take) drop
    // the answer; the session's next request is a full one.
    if (!sessionRequest.completed(sessionResponse(response, this.#topicNames)) || (response.errorCode ?? 0) !== FetchErrors.NONE) {
      await this.#backoff()
      return
    }
    const handled = this.#handle(claimed, response)
    if (handled.refresh) await this.#refreshMetadata()
    // KIP-219: the broker answered at once and asks the client to wait out its quota.
    const throttleMs = Math.max(response.throttleTimeMs, handled.retry ? this.#backoffMs : 0)
    if (throttleMs > 0) await sleep(throttleMs, undefined, { signal: this.#stopping.signal }).catch(() => undefined)
    if (handled.partitions.length === 0) return undefined
    return { responseBytes: answer.frameBytes, retainedBytes: answer.retainedBytes, partitions: handled.partitions }
  }

  /** The partitions of an answer: positions moved, errors and events dealt with. */
  #handle (claimed: readonly ClaimedPartition[], response: ResponseOf<'Fetch'>): { partitions: PendingPartition[], refresh: boolean, retry: boolean } {
    const byKey = new Map(claimed.map(entry => [`${entry.topic}\u0000${entry.partition}`, entry]))
    const partitions: PendingPartition[] = []
    let refresh = false
    let retry = false
    for (const topicAnswer of response.responses) {
      const topic = responseTopicName(topicAnswer, this.#topicNames)
      if (topic === undefined) continue
      for (const answer of topicAnswer.partitions) {
        const request = byKey.get(`${topic}\u0000${answer.partitionIndex}`)
        if (request === undefined || !this.#assignments.current(request)) continue
        const { partition } = request
        const fetchOffset = request.position
        if (answer.errorCode !== FetchErrors.NONE) {
          // KIP-392: a follower that has not caught up answers OFFSET_OUT_OF_RANGE: back to the leader, which decides.
          if (answer.errorCode === FetchErrors.OFFSET_OUT_OF_RANGE && this.#assignments.clearPreferredReplica(topic, partition)) continue
          const action = fetchErrorAction(answer.errorCode)
          if (action === 'refresh') {
            // KIP-320: FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER: our view of the leader is stale.
            this.#assignments.leaderLost(topic, partition)
            refresh = true
          } else if (action === 'retry') {
            retry = true
          } else {
            const error = kafkaErrorName(answer.errorCode)
            this.#stopPartition({
              kind: answer.errorCode === FetchErrors.OFFSET_OUT_OF_RANGE ? 'offset-out-of-range' : 'partition-error',
              topic,
              partition,
              fetchOffset,
              error,
              logStartOffset: answer.logStartOffset ?? -1n,
              highWatermark: answer.highWatermark,
            })
          }
          continue
        }
        const diverging = answer.divergingEpoch
        if (diverging !== undefined && (diverging.epoch >= 0 || diverging.endOffset >= 0n)) {
          // KIP-320: the leader's log diverged from what we fetched (truncated below our position): reported, never fetched past.
          this.#stopPartition({ kind: 'diverging-epoch', topic, partition, fetchOffset, error: 'DIVERGING_EPOCH', divergingEpoch: { ...diverging } })
          continue
        }
        if ((answer.preferredReadReplica ?? -1) >= 0) {
          // KIP-392: the leader names the replica to read from (for our rack); followed until metadata.max.age.ms or an error.
          this.#assignments.preferReplica(topic, partition, answer.preferredReadReplica!, Date.now() + this.#metadataMaxAgeMs)
        }
        const found = fetchedBatches(answer.records, fetchOffset, this.#settings.isolationLevel, answer.abortedTransactions)
        const handed = { firstLastOffset: found.batches[0]?.lastOffset, lastHandedOffset: found.batches.at(-1)?.lastOffset }
        this.#assignments.advance(request, handed, found.nextFetchOffset, found.lastEpoch)
        if (found.batches.length === 0 && found.nextFetchOffset === fetchOffset) continue
        const fetched: FetchedPartition = {
          topic,
          partition,
          fetchOffset,
          batches: found.batches,
          nextFetchOffset: found.nextFetchOffset,
          highWatermark: answer.highWatermark,
          lastStableOffset: answer.lastStableOffset,
          logStartOffset: answer.logStartOffset ?? -1n,
          skippedBatches: found.skippedBatches,
        }
        partitions.push({ fetched, generation: request.generation })
      }
    }
    return { partitions, refresh, retry }
  }

  #stopPartition (event: FetchEvent): void {
    this.#assignments.stop(event.topic, event.partition, event.error)
    this.#listener.event(event)
  }

  #fail (error: unknown): void {
    if (this.#isStopped) return
    const failure = error instanceof Error ? error : new Error(String(error))
    // The fetcher's own stop() cannot fail: it closes connections whose failures went to their requests.
    void this.stop()
    this.#listener.failed(failure)
  }

  /** Metadata for the topics assigned: leaders, leader epochs (KIP-320), topic ids, brokers; one request at a time, again every `metadataMaxAgeMs`. */
  #refreshMetadata (): Promise<void> {
    this.#metadata ??= (async () => {
      try {
        const topics = [...this.#assignments.topics()]
        const connection = await this.#connections.get(BOOTSTRAP_NODE)
        const response = await connection.send('Metadata', { topics: topics.map(name => ({ name })), allowAutoTopicCreation: false })
        this.counts.metadataRefreshes++
        this.#connections.learn(response.brokers)
        for (const topic of response.topics) {
          if (topic.name === null || topic.errorCode !== 0) continue
          if (topic.topicId !== undefined && topic.topicId !== ZERO_UUID) {
            this.#topicIds.set(topic.name, topic.topicId)
            this.#topicNames.set(topic.topicId, topic.name)
          }
          for (const partition of topic.partitions) {
            const leader = partition.errorCode === 0 ? partition.leaderId : -1
            this.#assignments.leaderIs(topic.name, partition.partitionIndex, leader, partition.leaderEpoch ?? -1)
          }
        }
      } catch {
        // The bootstrap broker cannot answer now: dropped; the partitions without a leader ask again after the backoff.
        void this.#connections.drop(BOOTSTRAP_NODE)
      } finally {
        this.#metadata = undefined
      }
      if (this.#isStopped) return
      clearTimeout(this.#metadataTimer)
      this.#metadataTimer = setTimeout(() => { void this.#refreshMetadata() }, this.#assignments.leaderless() > 0 ? this.#backoffMs : this.#metadataMaxAgeMs)
      this.#metadataTimer.unref()
      this.#ensureLoops()
      this.#wake()
    })()
    return this.#metadata
  }
}

/** A full request outside any session (fetch sessions off): every partition, every time. */
function sessionless (wanted: FetchTopicRequest[], counts: FetchSessionCounts): ReturnType<FetchSession['next']> {
  counts.sessionless++
  const fields: FetchSessionFields = { sessionId: 0, sessionEpoch: -1, topics: wanted, forgottenTopics: [] }
  return { fields, full: true, completed: () => true, failed: () => { /* no session to reset */ } }
}
