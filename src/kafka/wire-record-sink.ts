import type { ClusterConnection } from '../config/cluster-connection.js'
import type { ProducerSettings } from '../config/mirror-config.js'
import type { ForwardedBatch } from '../ports/forwarded-batch.js'
import { PartialSendError, type PartitionFailure } from '../ports/partial-send-error.js'
import type { PartitionAck, PartitionWrite, RecordSink } from '../ports/ports.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import { partitionKey } from '../shared/partition-key.js'
import { withEncodedBatches } from './decoded-record-batch.js'
import { KafkaForwardedBatch } from './forwarded-record-batch.js'
import { compressionTypes } from './record-sink.js'
import { retryWhileStarting } from './start-retry.js'
import { BrokerProduceSink, type ProducedBatch } from './wire/broker-produce-sink.js'
import type { WireClusterOptions } from './wire/wire-connection-options.js'

/** Answers to a forwarded batch that no resend of the same bytes changes: its records go decoded instead (the pipeline decodes them). */
const FORWARD_REFUSED: ReadonlySet<string> = new Set(['CORRUPT_MESSAGE', 'INVALID_RECORD'])

/** The writes of one target partition in one send, and what they are made of (a forwarded batch or a records array, each by identity). */
interface PartitionSend {
  readonly topic: string
  readonly partition: number
  readonly writes: readonly PartitionWrite[]
  readonly parts: ReadonlyArray<ForwardedBatch | readonly KafkaRecord[]>
}

/** A partition's batch handed to the produce sink whose outcome no `send` has returned yet. */
interface Pending {
  readonly parts: ReadonlyArray<ForwardedBatch | readonly KafkaRecord[]>
  /** Settles with the sink's answer; never rejects (a failure is its value). */
  readonly outcome: Promise<{ produced: ProducedBatch } | { error: unknown }>
}

/** What a partition's part of a `send` came to when it returned. */
type Outcome = { produced: ProducedBatch } | { error: unknown } | 'timed out'

/**
 * One producer on the target through the project's own wire layer (`BrokerProduceSink`): each
 * partition of a `send` is one v2 record batch (forwarded batches of the partition joined, decoded
 * records encoded: `KafkaForwardedBatch.joined`, `withEncodedBatches`), written with acks=-1 and the
 * idempotent producer's sequences; its acknowledgement is the exact base offset the target gave it.
 *
 * Who retries what, and why no record is written twice:
 * - `BrokerProduceSink` resends a batch until the target answers it (a lost connection, a leader
 *   moving, a timeout), always with the same producer id, epoch and sequence, so the broker answers a
 *   copy it holds with the first offset (KAFKA-5494) instead of writing it again. It has no delivery
 *   timeout; `stop()` gives up.
 * - The pipeline's worker retries a failed `send` (shared/retry.ts, counted in
 *   kafka_mirror_retries_total) by sending the partitions not written yet through this same sink.
 *   A `send` that runs out of `timeoutMs` fails retriably but leaves its batches with the produce
 *   sink (Invariant R): the worker's next `send` of the same records waits for that batch's answer
 *   instead of handing the produce sink a second copy, which would get new sequence numbers and be
 *   written twice. A batch is handed to the produce sink again only after a `send` returned its failure.
 *
 * Invariant R: per target partition, at most one batch this sink handed to the produce sink has an
 * outcome no `send` returned yet (`#pending`); a `send` of the same parts takes that outcome, one of
 * other parts waits for it to settle before its own batch goes.
 */
export class WireRecordSink implements RecordSink {
  readonly #connection: ClusterConnection
  readonly #wire: WireClusterOptions
  readonly #settings: ProducerSettings
  readonly #logger: Logger
  readonly #onProducerStarted: ((producerId: bigint) => Promise<void>) | undefined
  #sink: BrokerProduceSink | undefined
  /** The produce sink a start is opening: stopped by `stop()` too. */
  #opening: BrokerProduceSink | undefined
  #connected = false
  /** Aborted by `stop()`: ends a start that waits out a passing fault of the target. */
  #stopping: AbortController | undefined
  /** Per partition key, the batch whose outcome no `send` returned yet (Invariant R). */
  readonly #pending = new Map<string, Pending>()

  constructor (
    connection: ClusterConnection,
    wire: WireClusterOptions,
    settings: ProducerSettings,
    logger: Logger,
    onProducerStarted?: (producerId: bigint) => Promise<void>
  ) {
    this.#connection = connection
    this.#wire = wire
    this.#settings = settings
    this.#logger = logger
    this.#onProducerStarted = onProducerStarted
  }

  get connected (): boolean { return this.#connected }

  /** Checks Invariant R and the produce sink's own invariants. */
  checkInvariants (): void {
    this.#sink?.checkInvariants()
    for (const [key, pending] of this.#pending) {
      if (pending.parts.length === 0) throw new Error(`invariant R: ${key} has a pending batch made of nothing`)
    }
  }

  async start (): Promise<void> {
    const stopping = new AbortController()
    this.#stopping = stopping
    const sink = await retryWhileStarting('starting the target producer', () => this.#open(), this.#logger, stopping.signal)
    if (this.#onProducerStarted !== undefined) {
      try {
        await this.#onProducerStarted(sink.producer.producerId)
      } catch (error) {
        await sink.stop()
        const reason = (error as Error).message
        const message = `cannot publish the producer id of the mirror on the ${this.#connection.alias} cluster: ${reason}`
        throw new MirrorError(ErrorCodes.KAFKA, message, { cause: error })
      }
    }
    if (stopping.signal.aborted) {
      await sink.stop()
      throw new MirrorError(ErrorCodes.STOPPED, 'the target producer stopped while starting', { retriable: true })
    }
    this.#sink = sink
    this.#connected = true
    this.#logger.info('target producer: wire', { producerId: sink.producer.producerId.toString() })
  }

  /** A produce sink with its producer id (InitProducerId answered); one that failed to start is stopped. */
  async #open (): Promise<BrokerProduceSink> {
    const publish = this.#onProducerStarted
    const sink = new BrokerProduceSink({
      bootstrap: this.#wire.bootstrap,
      connection: this.#wire.connection,
      ...(this.#connection.requestTimeoutMs === undefined ? {} : { produceTimeoutMs: this.#connection.requestTimeoutMs }),
      // Active-active: an epoch bump brings a new producer id, published before anything is written with it.
      ...(publish === undefined ? {} : { onNewProducerId: publish }),
    })
    this.#opening = sink
    try {
      await sink.start()
    } catch (error) {
      await sink.stop()
      throw this.#error(error, `cannot start a producer on the ${this.#connection.alias} cluster (${this.#connection.brokers.join(',')})`)
    } finally {
      this.#opening = undefined
    }
    return sink
  }

  async send (writes: readonly PartitionWrite[], timeoutMs = 30_000): Promise<PartitionAck[]> {
    let sink = this.#sink
    if (sink?.failure !== undefined) {
      // The produce sink took no batch since it broke (a producer id refused): a new producer writes from here on.
      this.#logger.warn('target producer broken; starting a new one', { error: sink.failure })
      await this.stop()
      await this.start()
      sink = this.#sink
    }
    if (sink === undefined) throw new MirrorError(ErrorCodes.STOPPED, 'producer is not started', { retriable: true })
    const sends = partitionSends(writes)
    const outcomes = await this.#outcomes(sink, sends, timeoutMs)
    const acks: PartitionAck[] = []
    const failed: PartitionFailure[] = []
    for (const [index, send] of sends.entries()) {
      const outcome = outcomes[index]!
      const where = `${send.topic}-${send.partition}`
      if (outcome === 'timed out') {
        const error = new MirrorError(ErrorCodes.SEND_FAILED, `writing ${where} to the ${this.#connection.alias} cluster: no answer within ${timeoutMs} ms`, {
          retriable: true,
          kafkaCode: 'REQUEST_TIMED_OUT',
        })
        failed.push({ topic: send.topic, partition: send.partition, error })
        continue
      }
      // Invariant R: this outcome is returned now; the next send of the partition hands over a batch of its own.
      this.#pending.delete(partitionKey(send.topic, send.partition))
      if ('produced' in outcome) {
        acks.push({ topic: send.topic, partition: send.partition, baseOffset: outcome.produced.baseOffset })
        continue
      }
      const forwarded = send.writes.some(write => write.forwarded !== undefined)
      failed.push({ topic: send.topic, partition: send.partition, error: this.#partitionError(outcome.error, where, forwarded) })
    }
    if (failed.length === 0) {
      this.#connected = true
      return acks
    }
    // A partition refused for good decides: retrying the whole send cannot write it.
    const error = failed.find(failure => !failure.error.retriable)?.error ?? failed[0]!.error
    if (error.retriable) this.#connected = false
    throw new PartialSendError(error, acks, failed)
  }

  /** Each partition's outcome, in `sends` order, or 'timed out' for one the target did not answer within `timeoutMs`. */
  async #outcomes (sink: BrokerProduceSink, sends: readonly PartitionSend[], timeoutMs: number): Promise<Outcome[]> {
    const outcomes = sends.map(send => this.#pendingFor(sink, send).outcome)
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timed out'>(resolve => { timer = setTimeout(() => resolve('timed out'), timeoutMs) })
    try {
      return await Promise.all(outcomes.map(outcome => Promise.race([outcome, timedOut])))
    } finally {
      clearTimeout(timer)
    }
  }

  /** The pending batch of `send`'s partition for these parts: the one handed over before (Invariant R), or a new one. */
  #pendingFor (sink: BrokerProduceSink, send: PartitionSend): Pending {
    const key = partitionKey(send.topic, send.partition)
    const earlier = this.#pending.get(key)
    if (earlier !== undefined && sameParts(earlier.parts, send.parts)) return earlier
    // Other records than the pending batch's (a send given up by its caller): they go once that batch has settled, in partition order.
    const after = earlier === undefined ? Promise.resolve() : earlier.outcome.then(() => undefined)
    const outcome = after
      .then(async () => await this.#produce(sink, send))
      .then(produced => ({ produced }), (error: unknown) => ({ error }))
    const pending: Pending = { parts: send.parts, outcome }
    this.#pending.set(key, pending)
    return pending
  }

  /** Hands `send`'s records to the produce sink as one batch. */
  async #produce (sink: BrokerProduceSink, send: PartitionSend): Promise<ProducedBatch> {
    const encoded = await withEncodedBatches(send.writes, compressionTypes[this.#settings.compression])
    const parts = encoded.map(write => write.forwarded)
    if (parts.length === 0 || !parts.every(part => part instanceof KafkaForwardedBatch)) {
      throw new MirrorError(ErrorCodes.INTERNAL, `a write to ${send.topic}-${send.partition} holds no records, or forwarded and decoded records together`)
    }
    const { bytes, crcChecked } = KafkaForwardedBatch.joined(send.partition, parts)
    return await sink.send(send.topic, send.partition, bytes, crcChecked)
  }

  /** The pipeline's error for a partition the produce sink failed: retriable as the sink says, a forwarded batch's refusal for good. */
  #partitionError (error: unknown, where: string, forwarded: boolean): MirrorError {
    const converted = this.#error(error, `writing ${where} to the ${this.#connection.alias} cluster failed`)
    if (forwarded && FORWARD_REFUSED.has(converted.kafkaCode ?? '') && converted.retriable) {
      return new MirrorError(converted.code, converted.message, { cause: error, retriable: false, kafkaCode: converted.kafkaCode })
    }
    return converted
  }

  /** `error` as a MirrorError whose message starts with `context`, keeping its code, retriability and Kafka error name. */
  #error (error: unknown, context: string): MirrorError {
    if (!(error instanceof MirrorError)) {
      return new MirrorError(ErrorCodes.SEND_FAILED, `${context}: ${(error as Error)?.message ?? String(error)}`, { cause: error })
    }
    return new MirrorError(error.code, `${context}: ${error.message}`, {
      cause: error,
      retriable: error.retriable,
      ...(error.kafkaCode === undefined ? {} : { kafkaCode: error.kafkaCode }),
    })
  }

  async stop (): Promise<void> {
    this.#stopping?.abort()
    const sink = this.#sink
    this.#sink = undefined
    // The stopped produce sink fails what it holds: nothing pending is answered any more.
    this.#pending.clear()
    await Promise.all([sink?.stop(), this.#opening?.stop()])
  }
}

/** `writes` per target partition, in the order partitions first appear; each partition's writes in order. */
export function partitionSends (writes: readonly PartitionWrite[]): PartitionSend[] {
  const sends = new Map<string, { topic: string, partition: number, writes: PartitionWrite[], parts: Array<ForwardedBatch | readonly KafkaRecord[]> }>()
  for (const write of writes) {
    const key = partitionKey(write.topic, write.partition)
    let send = sends.get(key)
    if (send === undefined) sends.set(key, send = { topic: write.topic, partition: write.partition, writes: [], parts: [] })
    send.writes.push(write)
    send.parts.push(write.forwarded ?? write.records)
  }
  return [...sends.values()]
}

/** Whether two partitions' parts are the same forwarded batches and record arrays, in the same order. */
export function sameParts (a: ReadonlyArray<ForwardedBatch | readonly KafkaRecord[]>, b: ReadonlyArray<ForwardedBatch | readonly KafkaRecord[]>): boolean {
  return a.length === b.length && a.every((part, index) => part === b[index])
}
