import type { FetchControl, SourceListener } from '../ports/ports.js'
import type { TranscoderLoad } from '../ports/transcoder-load.js'
import type { KafkaRecord } from '../shared/kafka-record.js'
import { BatchTranscoder, codecId, TranscodeWindow } from './batch-transcoder.js'
import { CorruptRecordBatch } from './corrupt-record-batch.js'
import { KafkaForwardedBatch, type ForwardingPolicy } from './forwarded-record-batch.js'

/**
 * Tells the producers of the mirror of the opposite direction (which wrote into this source
 * cluster) from everyone else's, by producer id, so their batches are not copied back.
 */
export interface MirrorProducerFilter {
  /** The ids among `producerIds` that belong to the opposite mirror; may reload what it knows first (an id it never saw). */
  classify: (producerIds: readonly string[]) => Promise<ReadonlySet<string>>
  /** Counts records skipped that way. */
  skipped: (records: number) => void
}

/** One item of a partition's fetch, in offset order: a decoded record, a batch to forward (or decode), or a corrupt batch. */
export type FetchedItem = KafkaRecord | KafkaForwardedBatch | CorruptRecordBatch

/** One partition's part of one fetch, as a record source hands it to `BatchHandover`. */
export interface FetchedRun {
  readonly topic: string
  readonly partition: number
  readonly highWatermark: bigint
  readonly items: readonly FetchedItem[]
  /** The offset the fetch began at: a batch may start before it (the broker returns whole batches). */
  readonly fetchedOffset: bigint
  /** The next offset to fetch after this run: past its last item, and past batches skipped (control, aborted). */
  readonly nextOffset: bigint
}

/**
 * Batches of one partition's fetch recompressed at once (the one handed on next and those after
 * it): with 16 partitions handed over concurrently, enough to keep the codecs' threads busy, while
 * what waits per partition stays within a few batches.
 */
const TRANSCODE_AHEAD = 3

function firstOffsetOf (item: FetchedItem): bigint {
  return item instanceof KafkaForwardedBatch || item instanceof CorruptRecordBatch ? item.baseOffset : BigInt(item.offset)
}

/**
 * Hands one partition's fetched items to the pipeline in order, whichever client fetched them: each
 * forwarded batch on its own, decoded records in runs of up to `max.poll.records`, corrupt batches to
 * `onCorrupt`, the opposite mirror's batches left out, batches that only need another codec recompressed
 * ahead of their turn. Shared by the kafkajs and the wire record sources.
 *
 * Invariant (order): the pipeline gets a partition's items in fetch order, each `from` the end of what it
 * got before, and nothing after `control.isActive()` turned false.
 */
export class BatchHandover {
  readonly #maxPollRecords: number
  readonly #producers: MirrorProducerFilter | undefined
  /** Recompresses batches declined only for their codec into the target's; undefined without a codec to change to, or when every batch is decoded. */
  readonly #transcoder: BatchTranscoder | undefined

  constructor (maxPollRecords: number, forwarding: ForwardingPolicy, producers: MirrorProducerFilter | undefined) {
    this.#maxPollRecords = maxPollRecords
    this.#producers = producers
    // With every batch decoded (decodeAll) none is declined for its codec alone: no transcoder, and no transcoder gauges.
    const target = forwarding.targetCodec === undefined || forwarding.decodeAll !== undefined ? undefined : codecId(forwarding.targetCodec)
    this.#transcoder = target === undefined ? undefined : new BatchTranscoder(target, forwarding.maxBatchBytes)
  }

  /** True when batches declined for their codec alone are recompressed (else they are decoded, and counted so). */
  get transcodes (): boolean {
    return this.#transcoder !== undefined
  }

  get load (): TranscoderLoad | undefined {
    const transcoder = this.#transcoder
    return transcoder === undefined ? undefined : { busySlots: transcoder.running, waitingBatches: transcoder.waiting }
  }

  start (): void {
    this.#transcoder?.start()
  }

  async stop (): Promise<void> {
    await this.#transcoder?.stop()
  }

  /**
   * Hands `run` over in order. A batch that must be decoded (its `deepReason`, or it begins before
   * the fetch offset) is decoded only when its turn comes, after the queue took what came before, so
   * at most one run of decoded records waits outside the queue.
   */
  async handOver (run: FetchedRun, handlers: SourceListener, control: FetchControl): Promise<void> {
    const { topic, partition, highWatermark, items, fetchedOffset, nextOffset } = run
    let records: KafkaRecord[] = []
    /** The offset up to which what was handed over reaches (past skipped batches of the opposite mirror too). */
    let covered = fetchedOffset
    const flush = async (next: bigint): Promise<void> => {
      if (records.length === 0) return
      const taken = records
      records = []
      const from = covered
      covered = next
      await handlers.onBatch({ topic, partition, highWatermark, records: taken, nextOffset: next, from }, control)
    }
    const mirrored =
      this.#producers === undefined
        ? undefined
        : await this.#producers.classify(items.flatMap(item => item instanceof KafkaForwardedBatch ? [item.producerId] : []))
    // The batches of the fetch that only need another codec are recompressed ahead of their turn
    // (TRANSCODE_AHEAD at a time) and each is awaited when its turn comes, so order holds.
    const transcoding = this.#transcodeWindow(items, fetchedOffset, mirrored)
    for (const [index, item] of items.entries()) {
      if (!control.isActive()) return
      const following = items[index + 1]
      const next = following === undefined ? nextOffset : firstOffsetOf(following)
      if (item instanceof CorruptRecordBatch) {
        await flush(item.baseOffset)
        if (!control.isActive()) return
        // The fetch position moves past the batch's last offset: only as good as the header.
        const bound = following === undefined ? highWatermark : next
        const rangeProblem =
          item.endOffset <= covered
            ? `its header says it ends at offset ${item.endOffset - 1n}, before offset ${covered} where the fetch stood`
            : item.endOffset > bound
              ? `its header says it ends at offset ${item.endOffset - 1n}, past ${bound - 1n} where ${following === undefined ? 'the partition ends (high watermark)' : 'the next batch begins'}`
              : undefined
        if (!handlers.onCorrupt(topic, partition, item, rangeProblem)) return
        handlers.onSkipped(topic, partition, item.endOffset, covered)
        covered = item.endOffset
        continue
      }
      if (item instanceof KafkaForwardedBatch && mirrored?.has(item.producerId) === true) {
        // Written here by the mirror of the opposite direction: it came from our target, so it is not copied back.
        this.#producers?.skipped(item.recordCount)
        if (records.length > 0 && following === undefined) await flush(next)
        continue
      }
      const pending = item instanceof KafkaForwardedBatch ? transcoding?.take(item) : undefined
      const transcoded = pending === undefined ? undefined : await pending
      if (pending !== undefined && transcoded === undefined && item instanceof KafkaForwardedBatch) handlers.onDecoded?.('codec', item.sizeBytes)
      if (!(item instanceof KafkaForwardedBatch)) {
        records.push(item)
      } else if ((item.deepReason === undefined || transcoded !== undefined) && item.baseOffset >= fetchedOffset) {
        await flush(item.baseOffset)
        if (!control.isActive()) return
        const from = covered
        covered = next
        await handlers.onBatch({ topic, partition, highWatermark, records: [], forwarded: transcoded ?? item, nextOffset: next, from }, control)
        continue
      } else {
        if (item.deepReason === undefined) handlers.onDecoded?.('starts_before_position', item.sizeBytes)
        else if (item.deepReason === 'codec' && this.#transcoder !== undefined && pending === undefined) handlers.onDecoded?.('codec', item.sizeBytes)
        for (const record of await item.decode()) if (BigInt(record.offset) >= fetchedOffset) records.push(record)
      }
      if (records.length >= this.#maxPollRecords || following === undefined) await flush(next)
    }
    await flush(nextOffset)
    if (covered < nextOffset && control.isActive()) handlers.onSkipped(topic, partition, nextOffset, covered)
  }

  /**
   * The batches of `items` declined only for their codec (and not before the fetch offset, nor the
   * opposite mirror's), recompressed `TRANSCODE_AHEAD` at a time in fetch order; undefined without a
   * transcoder. A result is undefined when the batch is to be decoded after all.
   */
  #transcodeWindow (
    items: readonly FetchedItem[],
    fetchedOffset: bigint,
    mirrored: ReadonlySet<string> | undefined
  ): TranscodeWindow<KafkaForwardedBatch, KafkaForwardedBatch | undefined> | undefined {
    const transcoder = this.#transcoder
    if (transcoder === undefined) return undefined
    const eligible = items.filter((item): item is KafkaForwardedBatch =>
      item instanceof KafkaForwardedBatch && item.deepReason === 'codec' && item.baseOffset >= fetchedOffset && mirrored?.has(item.producerId) !== true)
    return new TranscodeWindow(eligible, async batch => await batch.recompressed(async bytes => await transcoder.transcode(bytes)), TRANSCODE_AHEAD)
  }
}
