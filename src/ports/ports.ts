import type { KafkaRecord } from '../shared/kafka-record.js'
import type { BatchSpanInput } from './batch-span-input.js'
import type { DeepPathReason, ForwardedBatch } from './forwarded-batch.js'
import type { BatchSpan, MirrorBatch } from './mirror-batch.js'
import type { TranscoderLoad } from './transcoder-load.js'

/**
 * What the pipeline needs from the outside world, as interfaces. `src/kafka/` implements them
 * with kafkajs; tests implement them in memory. The pipeline never builds a client itself.
 */

/**
 * Records of one partition from one fetch, in offset order: decoded records, or one record batch
 * to forward undecoded (`forwarded`, with `records` empty). A fetch that holds both is handed over
 * as several of these, in order.
 */
export interface FetchedBatch {
  readonly topic: string
  readonly partition: number
  readonly highWatermark: bigint
  readonly records: readonly KafkaRecord[]
  readonly forwarded?: ForwardedBatch
  /** Offset after the last offset the fetch covered, control records (transaction markers) included. */
  readonly nextOffset?: bigint
  /**
   * Where this batch continues from: the fetch's own offset for its first batch, the end of the
   * batch before it for the others. No offset between it and the first record holds a record to
   * copy. Exactly-once checks it against what was handed over (a fetch ahead of that is refused).
   */
  readonly from?: bigint
}

/**
 * A fetched source record batch whose CRC-32C does not match its bytes: corrupt on the source
 * cluster. Never forwarded nor decoded. `endOffset` (past its last offset) comes from a header
 * field the CRC covers, so it is only as good as the header.
 */
export interface CorruptBatch {
  readonly baseOffset: bigint
  readonly endOffset: bigint
  /** The CRC the batch carries, and the one its bytes give. */
  readonly storedCrc: number
  readonly computedCrc: number
  /** A control batch (transaction marker). */
  readonly control: boolean
  readonly sizeBytes: number
}

/** Lets a batch handler keep the group membership alive while it waits (backpressure). */
export interface FetchControl {
  heartbeat: () => Promise<void>
  /** False once the consumer stops or the batch went stale in a rebalance: stop handing it over. */
  isActive: () => boolean
}

/** What a record source tells the pipeline. */
export interface SourceListener {
  /** Called per fetched batch; the source fetches that partition again only after it settles. */
  onBatch: (batch: FetchedBatch, control: FetchControl) => Promise<void>
  /**
   * The source moved to `nextOffset` over offsets without records (control records, aborted
   * data), from `from` (where that fetch began, or the end of what it handed over) when known.
   */
  onSkipped: (topic: string, partition: number, nextOffset: bigint, from?: bigint) => void
  /** The partitions this process owns changed (keys from `partitionKey`). */
  onAssignment: (owned: ReadonlySet<string>) => void
  /**
   * This member is about to join its group again (a rebalance began): the eager protocol gives
   * every partition up at the rejoin. The source joins once the promise settles (or its bound
   * passed), and the group takes this generation's commits until then: the moment to commit what
   * the target acknowledged.
   */
  onRebalancing: () => Promise<void>
  /** The source stopped on an error it will not recover from. */
  onCrash: (error: Error) => void
  /** The source answered one fetch request (any stream, any broker): the fetch rate. */
  onFetched?: () => void
  /** A fetched batch is decoded although the flow forwards batches (pass-through), and why. */
  onDecoded?: (reason: DeepPathReason, bytes: number) => void
  /**
   * A fetched batch is corrupt (`CorruptBatch`); what was fetched before it was handed over.
   * `rangeProblem` says why its offset range cannot be trusted (its header disagrees with the
   * fetch), else undefined. True: the source moves past the batch (`onSkipped` follows); false:
   * it hands over nothing more of this fetch (the flow stops).
   */
  onCorrupt: (topic: string, partition: number, batch: CorruptBatch, rangeProblem: string | undefined) => boolean
}

/** A source offset to commit: the next offset to mirror. */
export interface CommitOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
}

/**
 * The mirror's consumer group on the source cluster. Offsets are committed only through `commit`.
 * One instance serves one subscription: a changed topic list gets a new instance (`RecordSourceFactory`).
 */
export interface RecordSource {
  readonly connected: boolean
  /** The transcoder's load now; undefined when the source has no codec to transcode into. */
  readonly transcoding?: TranscoderLoad | undefined
  /** Partitions this process owns now (keys from `partitionKey`). */
  owned: () => ReadonlySet<string>
  /** Joins the group subscribed to `topics` (which exist) and starts fetching. */
  start: (topics: readonly string[], listener: SourceListener) => Promise<void>
  commit: (offsets: readonly CommitOffset[]) => Promise<void>
  /**
   * Exactly-once: fetching of these owned partitions starts over at `offset` (a lane whose
   * transaction was aborted goes back to its committed positions). Batches fetched before and not
   * handed over yet turn inactive (`FetchControl.isActive` false): the source fetches them again.
   */
  seek: (offsets: readonly CommitOffset[]) => void
  /** Stops fetching while keeping group membership, so acknowledged offsets can still be committed. */
  pause: () => void
  /** Leaves the group and closes connections. Safe to call twice. */
  stop: () => Promise<void>
}

export type RecordSourceFactory = () => RecordSource

/** Records for one target partition, in the order they must be written: decoded records, or one forwarded batch (`records` empty). */
export interface PartitionWrite {
  readonly topic: string
  readonly partition: number
  readonly records: readonly KafkaRecord[]
  readonly forwarded?: ForwardedBatch
}

/** The target's acknowledgement for one partition: records got `baseOffset`, `baseOffset + 1`, ... */
export interface PartitionAck {
  readonly topic: string
  readonly partition: number
  readonly baseOffset: bigint
}

/**
 * One producer on the target. Each `send` writes one record batch per partition, so the records
 * of a partition get consecutive target offsets. Errors are `MirrorError`s: `retriable` says
 * whether sending again can succeed, and a `PartialSendError` names the partitions that were
 * written anyway. Sending the unwritten partitions again through the same sink never writes a
 * record twice (the idempotent producer's sequence numbers let the broker drop a copy it has).
 */
export interface RecordSink {
  readonly connected: boolean
  start: () => Promise<void>
  send: (writes: readonly PartitionWrite[], timeoutMs: number) => Promise<PartitionAck[]>
  stop: () => Promise<void>
}

export interface TopicDescription {
  readonly name: string
  readonly partitions: number
}

export interface NewTopic {
  readonly name: string
  readonly partitions: number
  readonly replicationFactor: number
  readonly configs: Readonly<Record<string, string>>
}

/** An ACL on one topic (a literal resource name), in Kafka's names: operation `READ`, `WRITE`, `ALL`, ...; permission `ALLOW` or `DENY`. */
export interface TopicAcl {
  readonly topic: string
  readonly principal: string
  readonly host: string
  readonly operation: string
  readonly permission: 'ALLOW' | 'DENY'
}

/** Topic metadata and topic creation on one cluster. */
export interface TopicCatalog {
  readonly alias: string
  start: () => Promise<void>
  stop: () => Promise<void>
  /**
   * Every topic of the cluster with its partition count, from one Metadata answer (at 10,000
   * partitions each answer is megabytes of objects: a refresh asks each cluster once).
   */
  describeTopics: () => Promise<TopicDescription[]>
  /**
   * The configs of each topic that are not at their default (set on the topic or by a dynamic
   * broker config), leaving out read-only, sensitive and static broker values: what MirrorMaker 2
   * considers for copying. With `withDefaults`, the values at their default too; with
   * `setOnTopicOnly`, only the values set on the topic itself (no broker-wide ones).
   */
  topicConfigs: (topics: readonly string[], withDefaults?: boolean, setOnTopicOnly?: boolean) => Promise<Map<string, Record<string, string>>>
  createTopics: (topics: readonly NewTopic[]) => Promise<void>
  /** The ACLs on `topics` (literal resource names); undefined when the cluster has no authorizer. */
  topicAcls: (topics: readonly string[]) => Promise<TopicAcl[] | undefined>
  createTopicAcls: (acls: readonly TopicAcl[]) => Promise<void>
  /**
   * Sets `configs` on `topic` and takes `removedKeys` off it (back to the cluster's default),
   * keeping the topic's other explicitly set configs as they are.
   */
  setTopicConfigs: (topic: string, configs: Readonly<Record<string, string>>, removedKeys?: readonly string[]) => Promise<void>
  createPartitions: (topic: string, count: number) => Promise<void>
}

/** Target offsets of a run of records of one batch: records `from .. from + count - 1` got `targetBaseOffset ..`. */
export interface AckSegment {
  readonly from: number
  readonly count: number
  readonly targetBaseOffset: bigint
}

/** A source offset about to be committed, with the lag known at that moment. */
export interface CommitCandidate extends CommitOffset {
  readonly lagRecords: bigint
}

/**
 * Hears about every acknowledged batch, and is flushed before each source commit. The offset-sync
 * writer implements it: syncs covering a record are durable before its source offset is committed.
 */
export interface AckListener {
  acknowledged: (batch: MirrorBatch, segments: readonly AckSegment[]) => void
  /**
   * When the listener still reads the bytes of `batch` after `acknowledged` returned (the digest
   * of a forwarded batch): settles once it is done with them, so the queue keeps them counted until
   * then (`BoundedQueue.hold`, at least once). Undefined when it is done already.
   */
  heldUntil?: (batch: MirrorBatch) => Promise<void> | undefined
  /** `committing`: the source offsets the commit that follows will write (the mirror's position). */
  flush: (committing?: readonly CommitCandidate[]) => Promise<void>
  /**
   * Exactly-once: the records that describe `acks` (held by a lane's transaction about to commit;
   * `positions`: where each of its partitions resumes), written in that transaction, so they are
   * durable exactly when its records are: a crash right after the commit leaves no record without
   * them. The same acknowledgements reach `acknowledged` once the transaction committed.
   */
  transactionRecords?: (acks: readonly TransactionAck[], positions: readonly SourcePosition[]) => TransactionRecord[]
}

/** An acknowledged batch held by a lane's open transaction (exactly-once). */
export interface TransactionAck {
  readonly batch: MirrorBatch
  readonly segments: readonly AckSegment[]
}

/** A record for one of the mirror's topics on the target, written inside a lane's transaction (exactly-once). */
export interface TransactionRecord {
  readonly topic: string
  /** JSON text (the sidecar's own topics) or bytes (MirrorMaker 2's records). */
  readonly key: string | Buffer
  readonly value: string | Buffer
}

/** Starts a span per batch; `enabled` false means no spans are made at all. */
export interface BatchTracer {
  readonly enabled: boolean
  startBatchSpan: (input: BatchSpanInput) => BatchSpan
}

/** Exactly-once: the next source offset of a partition, as the target holds it (committed with the records below it). */
export interface SourcePosition {
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
}

/**
 * A producer lane that writes in transactions on the target (exactly-once). `send` writes inside
 * the open transaction (it opens one when none is). Errors that end the transaction are
 * `TransactionFailedError`s.
 */
export interface TransactionalSink extends RecordSink {
  /** Takes the lane's transactional ids: any other process holding one is fenced, and its open transaction aborted. */
  acquire: () => Promise<void>
  /** Gives the ids up without committing (what is open is aborted by the next owner or times out). */
  release: () => Promise<void>
  /**
   * Positions the open transaction will hold: written with its next `send` (in the same request,
   * so they cost no request of their own). A transaction whose sends did not all succeed must not
   * be committed: it may hold positions past what it wrote.
   */
  stagePositions: (positions: readonly SourcePosition[]) => void
  /**
   * Writes `positions` and `records` (the offset syncs of what it holds) in the open transaction
   * and asks for its commit. Resolves once the next transaction may be written (`send` may go on
   * while this one is being committed); `committed` settles when this one is: it rejects with a
   * `TransactionFailedError` when it did not commit, and so does every later transaction's (a
   * transaction commits only after the one before it did).
   */
  commitTransaction: (positions: readonly SourcePosition[], records?: readonly TransactionRecord[]) => Promise<{ readonly committed: Promise<void> }>
}

/** Where a flow's positions live on the target (exactly-once): read, as committed, when a lane is taken. */
export interface PositionStore {
  /** Creates the positions topic if needed and checks that the target can run transactions. */
  start: () => Promise<void>
  stop: () => Promise<void>
  /** The committed positions of `partitions` (keys from `partitionKey`); a partition never mirrored exactly once has none. */
  read: (partitions: readonly string[]) => Promise<Map<string, bigint>>
}

/** The adapters one flow works through. */
export interface FlowPorts {
  /** Makes the source consumer group; called again when the topic list changes. */
  readonly source: RecordSourceFactory
  /** One sink per producer lane. */
  readonly sinks: readonly RecordSink[]
  /** With exactly-once: the same sinks as transactional ones, and the position store. */
  readonly exactlyOnce?: { readonly sinks: readonly TransactionalSink[], readonly positions: PositionStore }
  readonly sourceTopics: TopicCatalog
  readonly targetTopics: TopicCatalog
}
