import type { FlowConfig } from '../../config/mirror-config.js'
import { InternalTopicWriter, readInternalTopic } from '../../kafka/internal-topic.js'
import type { MirrorProducerFilter } from '../../kafka/batch-handover.js'
import type { Logger } from '../../shared/logger.js'
import { SerialQueue } from '../../shared/serial-queue.js'
import { flowLabels, type FlowLabels } from '../../ports/pipeline-observer.js'
import type { OffsetsObserver } from './offsets-observer.js'
import { decodeMirrorProducer, encodeMirrorProducer } from '../../mirror-topics/offset-sync-record.js'
import { offsetSyncsReplication } from './offset-sync-writer.js'

/** The compacted topic on cluster `cluster` where the mirror from `sourceAlias` into it publishes its producer ids. */
function mirrorProducersTopic (sourceAlias: string): string {
  return `mirror-producers.${sourceAlias}.internal`
}

/** How many producer ids known not to be the opposite mirror's are remembered (the oldest are forgotten first). */
const FOREIGN_CACHE = 100_000

/**
 * Active-active over same-named topics (identity replication in both directions) without loops:
 * a flow X->Y publishes the producer id of each of its producers on Y, in
 * `mirror-producers.X.internal`, before that producer writes anything (`publish`). The flow Y->X
 * reads that topic on its source Y (`classify`): a batch on Y whose producer id is listed was
 * written by the X->Y mirror, came from X, and is skipped. Producer ids are given by the broker
 * and never reused, so a user's producer is never taken for the mirror; an id not seen before
 * makes `classify` read the topic again (the mirror published it before its first batch, so the
 * read finds it if it is the mirror's). This works the same for forwarded and decoded batches:
 * the producer id is in every batch header, no record is changed.
 */
export class MirrorProducers implements MirrorProducerFilter {
  readonly #flow: FlowConfig
  readonly #logger: Logger
  readonly #writer: InternalTopicWriter
  readonly #mirror = new Set<string>()
  readonly #foreign = new Set<string>()
  /** Reads of the opposite mirror's topic, one after the other. */
  readonly #reads = new SerialQueue()
  /** The read waiting to start, which callers arriving meanwhile share. */
  #queued: Promise<void> | undefined
  /** Once started (the producer lanes publish concurrently: they share one start). */
  #starting: Promise<void> | undefined
  readonly #observer: OffsetsObserver
  readonly #labels: FlowLabels

  constructor (flow: FlowConfig, logger: Logger, observer: OffsetsObserver = {}) {
    this.#flow = flow
    this.#observer = observer
    this.#labels = flowLabels(flow)
    this.#logger = logger.child({ flow: flow.name, component: 'mirror-producers' })
    this.#writer = new InternalTopicWriter(flow.target, this.#logger, { maxRequestSizeBytes: flow.producer.maxRequestSizeBytes })
  }

  /** The topic this flow publishes into (on its target). */
  get topic (): string { return mirrorProducersTopic(this.#flow.source.alias) }

  /** The topic of the opposite direction's mirror (on this flow's source). */
  get oppositeTopic (): string { return mirrorProducersTopic(this.#flow.target.alias) }

  start (): Promise<void> {
    this.#starting ??= (async () => {
      await this.#writer.start()
      await this.#writer.ensureCompactedTopic(this.topic, offsetSyncsReplication(this.#flow))
    })()
    // A failed start is tried again by the next call.
    this.#starting.catch(() => { this.#starting = undefined })
    return this.#starting
  }

  /** Makes `producerId` (one of this flow's producers on the target) known before it writes. */
  async publish (producerId: bigint): Promise<void> {
    await this.start()
    await this.#writer.write(this.topic, [encodeMirrorProducer(producerId, this.#flow.name)], { maxAttempts: 5 })
    this.#logger.debug('published the producer id of a target producer', { producerId: producerId.toString(), topic: this.topic })
  }

  async classify (producerIds: readonly string[]): Promise<ReadonlySet<string>> {
    const unknown = producerIds.filter(id => id !== '-1' && !this.#mirror.has(id) && !this.#foreign.has(id))
    if (unknown.length > 0) {
      await this.#read()
      for (const id of unknown) if (!this.#mirror.has(id)) this.#remember(id)
    }
    return this.#mirror
  }

  skipped (records: number): void {
    this.#observer.oppositeMirrorSkipped?.(this.#labels, records)
  }

  #remember (id: string): void {
    if (this.#foreign.size >= FOREIGN_CACHE) this.#foreign.delete(this.#foreign.values().next().value as string)
    this.#foreign.add(id)
  }

  /**
   * Reads the opposite mirror's producer ids: a read that starts after this call (so it sees
   * every id published before the batches being classified were fetched). Callers arriving while
   * one waits to start share it.
   */
  #read (): Promise<void> {
    if (this.#queued !== undefined) return this.#queued
    // A task never starts within `run`: `#queued` is set before the read clears it on starting.
    const queued = this.#reads.run(async () => {
      this.#queued = undefined
      await readInternalTopic(this.#flow.source, this.oppositeTopic, (key, value) => {
        const id = decodeMirrorProducer(key, value)
        if (id !== undefined) this.#mirror.add(id.toString())
      }, this.#logger)
    })
    this.#queued = queued
    return queued
  }

  async stop (): Promise<void> {
    await this.#starting?.catch(() => { /* a failed start failed to the caller of start(); stop only waits for it to end */ })
    await this.#writer.stop()
  }
}
