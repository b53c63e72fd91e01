/**
 * The mirror's idempotent producer on the wire layer: record batches sent as they are (their header
 * rewritten with our producer id, epoch and sequence), one Produce request per broker carrying a batch
 * for each partition that broker leads, acks=-1, and for every batch the exact offset the target gave
 * its first record. The producer state (sequences, epoch bumps) is `IdempotentProducerState`'s.
 */
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { BATCH_OFFSETS } from '../record-batch-header.js'
import type { BrokerConnection, BrokerConnectionOptions, ResponseOf } from './broker-connection.js'
import { BOOTSTRAP_NODE, BrokerConnections } from './broker-connections.js'
import {
  IdempotentProducerState,
  isLeaderError,
  NO_ANSWER,
  ProduceErrors,
  produceErrorName,
  type SequenceFields,
} from './idempotent-producer-state.js'
import { produceRequest, produceResults, type PartitionBatch, type PartitionResult } from './produce-request-builder.js'

export interface BrokerProduceSinkOptions {
  /** Brokers to ask for metadata and producer ids first. */
  readonly bootstrap: ReadonlyArray<{ readonly host: string, readonly port: number }>
  /** How to connect to each broker: client id, TLS, SASL, timeouts. */
  readonly connection: Omit<BrokerConnectionOptions, 'host' | 'port'>
  /** The Produce request's own timeout: how long the leader waits for the in-sync replicas, in milliseconds. Default 30,000. */
  readonly produceTimeoutMs?: number
  /** The wait before a failed batch or metadata request is tried again, in milliseconds. Default 100. */
  readonly retryBackoffMs?: number
  /**
   * Told a producer id an epoch bump brought (InitProducerId without a transactional id answers a new id,
   * KIP-360) before any batch is written with it; the sink breaks (every batch fails) when it rejects.
   */
  readonly onNewProducerId?: (producerId: bigint) => Promise<void>
}

/** Where the target wrote a batch. */
export interface ProducedBatch {
  /** The offset of the batch's first record on the target. */
  readonly baseOffset: bigint
  /** The broker's append time for a LogAppendTime topic, else -1. */
  readonly logAppendTimeMs: bigint
}

interface Pending {
  readonly key: string
  readonly batch: PartitionBatch
  readonly recordCount: number
  readonly resolve: (produced: ProducedBatch) => void
  readonly reject: (error: Error) => void
}

const BOOTSTRAP = BOOTSTRAP_NODE
/** Retriable answers of InitProducerId: the broker's producer id manager or coordinator is not ready. */
const INIT_RETRIABLE = new Set<number>([
  ProduceErrors.COORDINATOR_LOAD_IN_PROGRESS,
  ProduceErrors.COORDINATOR_NOT_AVAILABLE,
  ProduceErrors.NOT_COORDINATOR,
  ProduceErrors.REQUEST_TIMED_OUT,
  ProduceErrors.NETWORK_EXCEPTION,
])

/**
 * Sends batches to the leaders of their partitions with the idempotent producer's sequences.
 *
 * Invariant E: a batch's promise resolves only with the base offset the broker answered for that
 * batch's own sequence (a resent batch the broker already held is answered with its first offset), so
 * the mirror's offset mapping is exact; it rejects when the batch is given up, never silently.
 * Invariant F: a partition's requests in flight all go to one broker: a new leader gets the partition's
 * batches only once the old one has answered every request it holds (responses on one connection
 * come in order, so acknowledgements come in sequence order).
 * Retries live here and only here: a failed batch waits `retryBackoffMs` and is resent by the next pass;
 * there is no delivery timeout (the caller stops the sink to give up).
 */
export class BrokerProduceSink {
  readonly #options: BrokerProduceSinkOptions
  readonly #state = new IdempotentProducerState<Pending>()
  readonly #connections: BrokerConnections
  /** Leader node per partition key (`topic-partition`); absent: look it up. */
  readonly #leaders = new Map<string, number>()
  readonly #topicIds = new Map<string, string>()
  readonly #topicNames = new Map<string, string>()
  /** Batches not yet handed to the producer state, per partition key, in call order. */
  readonly #queued = new Map<string, Pending[]>()
  /** The broker a partition's requests in flight went to, and how many (Invariant F). */
  readonly #inFlight = new Map<string, { node: number, requests: number }>()
  #metadata: Promise<void> | undefined
  #bumping = false
  #pumpScheduled = false
  #retryTimer: NodeJS.Timeout | undefined
  #stopped = false
  /** Every batch whose promise has not settled yet. */
  readonly #open = new Set<Pending>()
  /** A failure that ends the sink (InitProducerId refused): every batch is rejected with it. */
  #failure: MirrorError | undefined

  constructor (options: BrokerProduceSinkOptions) {
    if (options.bootstrap.length === 0) throw new MirrorError(ErrorCodes.CONFIG, 'the produce sink needs at least one bootstrap broker')
    this.#options = options
    this.#connections = new BrokerConnections(options.bootstrap, options.connection)
  }

  /** The producer id and epoch the batches are written with. */
  get producer (): { producerId: bigint, epoch: number } {
    return { producerId: this.#state.producerId, epoch: this.#state.epoch }
  }

  /** The failure that ended the sink (a producer id refused or not published): it takes no batch any more. */
  get failure (): MirrorError | undefined {
    return this.#failure
  }

  /** Checks the producer state's invariants (A to C, see `IdempotentProducerState`). */
  checkInvariants (): void {
    this.#state.checkInvariants()
  }

  /** Connects to a bootstrap broker and gets a producer id (InitProducerId). */
  async start (): Promise<void> {
    const { producerId, producerEpoch } = await this.#initProducerId(-1n, -1)
    this.#state.initialized(producerId, producerEpoch)
  }

  /**
   * Sends `bytes` (one whole v2 batch, not a control batch) to `topic`-`partition`, after every batch sent
   * to that partition before it; resolves with where the target wrote it (Invariant E).
   */
  send (topic: string, partition: number, bytes: Buffer, crcChecked = false): Promise<ProducedBatch> {
    if (this.#stopped) return Promise.reject(new MirrorError(ErrorCodes.STOPPED, 'produce sink stopped'))
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    const key = `${topic}-${partition}`
    return new Promise<ProducedBatch>((resolve, reject) => {
      const pending: Pending = {
        key,
        batch: { topic, topicId: '', partition, bytes, crcChecked },
        recordCount: bytes.readInt32BE(BATCH_OFFSETS.recordCount),
        resolve: produced => { this.#open.delete(pending); resolve(produced) },
        reject: error => { this.#open.delete(pending); reject(error) },
      }
      this.#open.add(pending)
      const queue = this.#queued.get(key) ?? []
      queue.push(pending)
      this.#queued.set(key, queue)
      this.#schedule()
    })
  }

  /** Fails what is not acknowledged yet with a MIRROR_STOPPED error and closes the connections. Once-only. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    clearTimeout(this.#retryTimer)
    const stopped = new MirrorError(ErrorCodes.STOPPED, 'produce sink stopped')
    for (const pending of [...this.#open]) pending.reject(stopped)
    this.#queued.clear()
    await this.#connections.stopAll()
  }

  #schedule (delayMs = 0): void {
    if (this.#stopped) return
    if (delayMs > 0) {
      this.#retryTimer ??= setTimeout(() => { this.#retryTimer = undefined; this.#schedule() }, delayMs)
      return
    }
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    queueMicrotask(() => {
      this.#pumpScheduled = false
      this.#pump()
    })
  }

  /** One pass: what can be sent goes out, one request per broker per round, one batch per partition per request. */
  #pump (): void {
    if (this.#stopped || this.#failure !== undefined) return
    if (this.#state.bumpPending) {
      // #bump handles its own failures (retried, or the sink broken).
      if (this.#state.quiet && !this.#bumping) void this.#bump()
      return
    }
    const rounds = new Map<number, Array<Array<{ pending: Pending, fields: SequenceFields }>>>()
    const add = (node: number, round: number, pending: Pending, fields: SequenceFields): void => {
      const requests = rounds.get(node) ?? []
      rounds.set(node, requests)
      while (requests.length <= round) requests.push([])
      requests[round]!.push({ pending, fields })
      const flight = this.#inFlight.get(pending.key)
      this.#inFlight.set(pending.key, { node, requests: (flight?.requests ?? 0) + 1 })
    }
    let unknownLeaders = false
    const leaderFor = (key: string): number | undefined => {
      const leader = this.#leaders.get(key)
      if (leader === undefined) unknownLeaders = true
      const flight = this.#inFlight.get(key)
      // Invariant F: while the old leader holds requests of the partition, nothing goes to another broker.
      if (leader === undefined || (flight !== undefined && flight.node !== leader)) return undefined
      return leader
    }
    // Rounds of this pass used per partition: its next batch goes into the next request to its leader.
    const used = new Map<string, number>()
    for (const key of this.#state.resendPartitions) {
      const leader = leaderFor(key)
      if (leader === undefined) continue
      const resends = this.#state.resends(key)
      resends.forEach(({ batch, fields }, round) => add(leader, round, batch, fields))
      used.set(key, resends.length)
    }
    for (const [key, queue] of this.#queued) {
      if (queue.length === 0 || !this.#state.canSend(key)) continue
      const leader = leaderFor(key)
      if (leader === undefined) continue
      let round = used.get(key) ?? 0
      while (queue.length > 0) {
        const pending = queue[0]!
        const fields = this.#state.send(key, pending, pending.recordCount)
        if (fields === undefined) break
        queue.shift()
        add(leader, round++, pending, fields)
      }
    }
    // A failure #produce does not turn into a resend is a broken rule of the state: the sink stops taking batches (#broken).
    for (const [node, requests] of rounds) this.#produce(node, requests).catch((error: unknown) => this.#broken(error))
    // #refreshMetadata handles its own failures (asked again after the backoff).
    if (unknownLeaders) void this.#refreshMetadata()
  }

  async #produce (node: number, requests: ReadonlyArray<ReadonlyArray<{ pending: Pending, fields: SequenceFields }>>): Promise<void> {
    let connection: BrokerConnection
    try {
      connection = await this.#connection(node)
    } catch {
      // Not reachable: every batch counts as unanswered (never sent, so not written) and waits for fresh metadata.
      for (const request of requests) this.#unanswered(node, request)
      return
    }
    // Sent in order on one connection: the broker appends and answers them in that order.
    await Promise.all(requests.map(async request => {
      const batches = request.map(({ pending, fields }) => ({ batch: { ...pending.batch, topicId: this.#topicIds.get(pending.batch.topic) ?? '' }, fields }))
      const body = produceRequest(batches, this.#options.produceTimeoutMs ?? 30_000)
      try {
        const response = await connection.send('Produce', body)
        this.#answered(node, request, produceResults(response, this.#topicNames))
      } catch (error) {
        if (this.#stopped) {
          for (const { pending } of request) pending.reject(error as Error)
          return
        }
        this.#unanswered(node, request)
      }
    }))
  }

  #settled (key: string): void {
    const flight = this.#inFlight.get(key)
    if (flight === undefined) return
    if (flight.requests <= 1) this.#inFlight.delete(key)
    else this.#inFlight.set(key, { node: flight.node, requests: flight.requests - 1 })
  }

  #unanswered (node: number, request: ReadonlyArray<{ pending: Pending }>): void {
    void this.#dropConnection(node)
    for (const { pending } of request) {
      this.#settled(pending.key)
      this.#failed(pending, NO_ANSWER, 'no answer')
    }
    this.#schedule(this.#options.retryBackoffMs ?? 100)
  }

  #answered (node: number, request: ReadonlyArray<{ pending: Pending }>, results: readonly PartitionResult[]): void {
    let failures = false
    for (const { pending } of request) {
      this.#settled(pending.key)
      const result = results.find(entry => entry.topic === pending.batch.topic && entry.partition === pending.batch.partition)
      if (result === undefined) {
        failures = true
        this.#failed(pending, NO_ANSWER, `broker ${node} did not answer for the partition`)
        continue
      }
      if (result.errorCode === 0) {
        this.#state.acknowledged(pending.key, pending)
        pending.resolve({ baseOffset: result.baseOffset, logAppendTimeMs: result.logAppendTimeMs })
        continue
      }
      failures = true
      this.#failed(pending, result.errorCode, result.errorMessage ?? produceErrorName(result.errorCode))
    }
    this.#schedule(failures ? this.#options.retryBackoffMs ?? 100 : 0)
  }

  /** Nothing can be sent any more (a producer id refused, a rule of the producer state broken): every batch not acknowledged fails with `error`. */
  #broken (error: unknown): void {
    this.#failure ??= error instanceof MirrorError ? error : new MirrorError(ErrorCodes.INTERNAL, `produce sink: ${(error as Error).message}`, { cause: error })
    for (const pending of [...this.#open]) pending.reject(this.#failure)
    this.#queued.clear()
  }

  #failed (pending: Pending, code: number, message: string): void {
    if (isLeaderError(code)) this.#leaders.delete(pending.key)
    const verdict = this.#state.failed(pending.key, pending, code)
    if (verdict === 'fatal') {
      const name = produceErrorName(code)
      pending.reject(new MirrorError(ErrorCodes.SEND_FAILED, `${pending.key}: ${name}: ${message}`, { kafkaCode: name }))
    }
  }

  /**
   * KIP-360 (KAFKA-5793): InitProducerId with the current producer id and epoch, once no request is in
   * flight; batches the state gives up (perhaps written under the old epoch, or failed) are rejected,
   * with the batches queued behind them on their partitions, so nothing is written after a gap.
   */
  async #bump (): Promise<void> {
    this.#bumping = true
    try {
      const { producerId, producerEpoch } = await this.#initProducerId(this.#state.producerId, this.#state.epoch)
      if (this.#stopped) return
      if (producerId !== this.#state.producerId && this.#options.onNewProducerId !== undefined) {
        try {
          await this.#options.onNewProducerId(producerId)
        } catch (error) {
          const reason = (error as Error).message
          this.#broken(new MirrorError(ErrorCodes.KAFKA, `the new producer id ${producerId} could not be published: ${reason}`, { cause: error }))
          return
        }
        if (this.#stopped) return
      }
      const { unresolved } = this.#state.bumped(producerId, producerEpoch)
      const givenUp = new Set<string>()
      for (const { batch: pending, error, maybeWritten } of unresolved) {
        givenUp.add(pending.key)
        const name = error === NO_ANSWER ? 'NO_ANSWER' : produceErrorName(error)
        const outcome = maybeWritten ? 'it may have been written; read the target before sending it again' : 'it was not written'
        const message = `${pending.key}: given up at a producer epoch bump after ${name}: ${outcome}`
        // Retriable: the caller may send the records again under the new epoch (at least once: one that may have been written can then be twice).
        pending.reject(new MirrorError(ErrorCodes.SEND_FAILED, message, { kafkaCode: name, retriable: true }))
      }
      for (const key of givenUp) {
        for (const pending of this.#queued.get(key) ?? []) {
          pending.reject(new MirrorError(ErrorCodes.SEND_FAILED, `${key}: an earlier batch of the partition was given up; not sent`, { retriable: true }))
        }
        this.#queued.delete(key)
      }
    } catch (error) {
      if (this.#stopped) return
      if (!(error instanceof MirrorError && error.retriable)) {
        // The broker refuses a producer id: nothing can be sent any more; every batch not acknowledged fails with its answer.
        this.#broken(error)
        return
      }
      // Retriable (the bootstrap broker unreachable, a coordinator not ready): the next pass tries again after the backoff.
    } finally {
      this.#bumping = false
    }
    this.#schedule(this.#state.bumpPending ? this.#options.retryBackoffMs ?? 100 : 0)
  }

  /**
   * InitProducerId through a bootstrap broker. One that cannot be reached or does not answer is dropped
   * and the next one asked (`BrokerConnections` takes them in turn), so a start while a bootstrap broker
   * is down goes through another; it fails only when none of them answers in one round.
   */
  async #initProducerId (producerId: bigint, producerEpoch: number): Promise<{ producerId: bigint, producerEpoch: number }> {
    let unanswered = 0
    for (;;) {
      let response: ResponseOf<'InitProducerId'>
      try {
        const connection = await this.#connection(BOOTSTRAP)
        response = await connection.send('InitProducerId', { transactionalId: null, transactionTimeoutMs: 60_000, producerId, producerEpoch })
      } catch (error) {
        await this.#dropConnection(BOOTSTRAP)
        if (++unanswered >= this.#options.bootstrap.length || this.#stopped) throw error
        continue
      }
      if (response.errorCode === 0) return { producerId: response.producerId, producerEpoch: response.producerEpoch }
      const name = produceErrorName(response.errorCode)
      if (!INIT_RETRIABLE.has(response.errorCode) || this.#stopped) {
        throw new MirrorError(ErrorCodes.KAFKA, `InitProducerId: ${name}`, { kafkaCode: name, retriable: false })
      }
      await new Promise(resolve => setTimeout(resolve, this.#options.retryBackoffMs ?? 100))
    }
  }

  /** Metadata for the topics of the partitions whose leader is unknown; one request at a time. */
  #refreshMetadata (): Promise<void> {
    this.#metadata ??= (async () => {
      const topics = new Set<string>()
      for (const key of [...this.#queued.keys(), ...this.#state.resendPartitions]) {
        if (!this.#leaders.has(key)) topics.add(key.slice(0, key.lastIndexOf('-')))
      }
      try {
        const connection = await this.#connection(BOOTSTRAP)
        const response = await connection.send('Metadata', { topics: [...topics].map(name => ({ name })), allowAutoTopicCreation: false })
        this.#connections.learn(response.brokers)
        for (const topic of response.topics) {
          if (topic.name === null || topic.errorCode !== 0) continue
          if (topic.topicId !== undefined) {
            this.#topicIds.set(topic.name, topic.topicId)
            this.#topicNames.set(topic.topicId, topic.name)
          }
          for (const partition of topic.partitions) {
            const key = `${topic.name}-${partition.partitionIndex}`
            if (partition.errorCode === 0 && partition.leaderId >= 0) this.#leaders.set(key, partition.leaderId)
            else this.#leaders.delete(key)
          }
        }
      } catch {
        // A bootstrap broker that cannot answer now: the connection is dropped and the next pass asks again after the backoff.
        void this.#dropConnection(BOOTSTRAP)
      } finally {
        this.#metadata = undefined
      }
      this.#schedule(this.#options.retryBackoffMs ?? 100)
    })()
    return this.#metadata
  }

  #connection (node: number): Promise<BrokerConnection> {
    return this.#connections.get(node)
  }

  async #dropConnection (node: number): Promise<void> {
    await this.#connections.drop(node)
  }
}
