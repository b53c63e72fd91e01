import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client'
import type { FlowConfig } from '../../config/mirror-config.js'
import {
  flowLabels,
  type CommittedOffset,
  ConsumedBatch,
  FlowLabels,
  FlowSnapshot,
  PartitionSnapshot,
  PipelineObserver,
  ProducedBatch,
} from '../../ports/pipeline-observer.js'
import type { BatchPath, DeepPathReason } from '../../ports/forwarded-batch.js'
import { BatchHistogram, type HistogramChild } from './batch-histogram.js'
import { ComputedGauge, type GaugeSample } from './computed-gauge.js'
import { CounterFamily, type CounterChild } from './counter-family.js'
import { LabelNames as L, LATENCY_BUCKETS_SECONDS, Metrics, PartitionStatuses, REQUEST_BUCKETS_SECONDS, Results } from './metric-names.js'
import { packageVersion } from '../../shared/package-version.js'
import { metricText, type LabelTexts, type TextMetric } from './prometheus-text.js'
import { CommitWindow, evaluatePartitionStatus } from './partition-status.js'
import { partitionKey } from '../../shared/partition-key.js'

export interface MirrorMetricsOptions {
  /** Sidecar version in `kafka_mirror_build_info`; default: the version in package.json. */
  readonly version?: string
  /** Commits per partition the status evaluator looks at; default 10 (Burrow's default). */
  readonly statusWindowCommits?: number
  /** Also export prom-client's process and Node.js metrics (event loop, GC, heap); default true. */
  readonly defaultMetrics?: boolean
  /** Clock (ms since epoch) for lag in seconds, status and commit age; default `Date.now`. */
  readonly nowMs?: () => number
  /**
   * `metrics.partition.labels`: export lag, status and committed offset per partition (true, the
   * default) or per topic (false: lag in records summed, lag in seconds the largest, partitions
   * counted per status, no committed offset), for clusters with many partitions.
   */
  readonly partitionLabels?: boolean
  /** The configured flows: their commit interval is exported and their commit age counts from construction. */
  readonly flows?: ReadonlyArray<Pick<FlowConfig, 'name' | 'source' | 'target' | 'offsetCommitIntervalMs' | 'throughputLimitBytes'>>
}

/** A metrics exposition: the body and the content type to send it with. */
export interface Exposition {
  readonly contentType: string
  /** The whole text; empty when it went to an `ExpositionOutput`. */
  readonly body: string
}

/** Where `exposition` writes the text as it is formatted: `start` once with the content type, then `write` per piece. */
export interface ExpositionOutput {
  readonly start: (contentType: string) => void
  readonly write: (chunk: string) => void
}

type FlowLabelValues = Record<typeof L.FLOW | typeof L.SOURCE | typeof L.TARGET, string>

/** The metrics the observer callbacks write to; the rest are gauges filled at scrape time. */
interface Instruments {
  readonly consumedRecords: CounterFamily<string>
  readonly consumedBytes: CounterFamily<string>
  readonly producedRecords: CounterFamily<string>
  readonly producedBytes: CounterFamily<string>
  readonly replicationLatency: BatchHistogram<string>
  readonly recordAgeAtPoll: BatchHistogram<string>
  readonly produceRequestDuration: BatchHistogram<string>
  readonly transactionCommitDuration: BatchHistogram<string>
  readonly transactions: Counter
  readonly retries: Counter
  readonly batches: CounterFamily<string>
  readonly fetchRequests: CounterFamily<string>
  readonly corruptBatches: Counter
  readonly throttled: Counter
  readonly topicConfigsSynced: Counter
  readonly topicAclsSynced: Counter
  readonly batchBytes: CounterFamily<string>
  readonly sendFailures: Counter
  readonly commits: Counter
  readonly rebalances: Counter
  readonly lastCommitTimestamp: Gauge
}

/** Instruments of one flow, looked up by flow name once per callback. */
class FlowInstruments {
  readonly labels: FlowLabelValues
  /** When this flow was first seen (ms since epoch): the commit age counts from here before the first commit. */
  readonly sinceMs: number
  /** The last successful commit (ms since epoch). */
  lastCommitMs: number | undefined
  /** The first acknowledgement after the last successful commit (ms since epoch). */
  uncommittedSinceMs: number | undefined
  /** `offsetCommitIntervalMs` of the configured flow, when known. */
  commitIntervalMs: number | undefined
  /** `throughputLimitBytes` of the configured flow, when it has a limit. */
  throughputLimitBytes: number | undefined
  readonly topics = new Map<string, TopicInstruments>()
  /** `kafka_mirror_batches_total` and `_batch_bytes_total` children by path and reason: counted for every source batch. */
  readonly routed = new Map<string, { readonly batches: CounterChild, readonly bytes: CounterChild }>()
  readonly replicationLatency: HistogramChild
  readonly recordAgeAtPoll: HistogramChild
  readonly produceOk: HistogramChild
  readonly produceError: HistogramChild
  readonly fetchRequests: CounterChild
  /** Exactly-once flows only: made at the first commit, so other flows export no empty histogram. */
  transactionCommit: HistogramChild | undefined

  constructor (flow: FlowLabels, readonly metrics: Instruments, nowMs: number) {
    this.labels = { [L.FLOW]: flow.flow, [L.SOURCE]: flow.source, [L.TARGET]: flow.target }
    this.sinceMs = nowMs
    this.replicationLatency = metrics.replicationLatency.child(this.labels)
    this.recordAgeAtPoll = metrics.recordAgeAtPoll.child(this.labels)
    this.produceOk = metrics.produceRequestDuration.child({ ...this.labels, [L.RESULT]: Results.OK })
    this.produceError = metrics.produceRequestDuration.child({ ...this.labels, [L.RESULT]: Results.ERROR })
    this.fetchRequests = metrics.fetchRequests.child(this.labels)
    metrics.commits.inc({ ...this.labels, [L.RESULT]: Results.OK }, 0)
    metrics.commits.inc({ ...this.labels, [L.RESULT]: Results.ERROR }, 0)
    metrics.rebalances.inc(this.labels, 0)
  }

  topic (topic: string): TopicInstruments {
    let instruments = this.topics.get(topic)
    if (instruments === undefined) {
      instruments = new TopicInstruments({ ...this.labels, [L.TOPIC]: topic }, this.metrics)
      this.topics.set(topic, instruments)
    }
    return instruments
  }
}

class TopicInstruments {
  readonly consumedRecords: CounterChild
  readonly consumedBytes: CounterChild
  readonly producedRecords: CounterChild
  readonly producedBytes: CounterChild

  constructor (labels: FlowLabelValues & Record<typeof L.TOPIC, string>, metrics: Instruments) {
    this.consumedRecords = metrics.consumedRecords.child(labels)
    this.consumedBytes = metrics.consumedBytes.child(labels)
    this.producedRecords = metrics.producedRecords.child(labels)
    this.producedBytes = metrics.producedBytes.child(labels)
    metrics.sendFailures.inc(labels, 0)
  }
}

/** The key of one partition of one flow in maps and sets. */
function flowPartitionKey (flow: string, topic: string, partition: number): string {
  return `${flow}\u0000${partitionKey(topic, partition)}`
}

/** The status label of each partition status series, as the last label (`GaugeSample.extra`). */
const STATUS_LABELS = PartitionStatuses.map(value => ({ name: L.STATUS, value }))

function stripTotal (name: string): string {
  return name.endsWith('_total') ? name.slice(0, -'_total'.length) : name
}

/**
 * The sidecar's Prometheus metrics, in a registry of its own (never prom-client's global one).
 * As a `PipelineObserver` it counts on the hot path without allocating per record; point-in-time
 * gauges (queue, lag, status, assignment) are computed at scrape time from `snapshots()`, which is
 * read once per scrape. Lag in records and seconds comes from the snapshot only: no admin requests
 * at scrape time. Callbacks never throw.
 */
/**
 * Observes `(referenceMs - t) / 1000` in `histogram` for each timestamp `t >= 0` of `timestampsMs`
 * (negative: no timestamp), once per run of equal timestamps with the run's length as its count: a
 * forwarded batch gives every record its header's largest timestamp, so its records cost one
 * observation, not one each.
 */
function observeAges (histogram: HistogramChild, referenceMs: number, timestampsMs: readonly number[]): void {
  const n = timestampsMs.length
  let i = 0
  while (i < n) {
    const timestampMs = timestampsMs[i] as number
    let end = i + 1
    while (end < n && timestampsMs[end] === timestampMs) end++
    if (timestampMs >= 0) histogram.observe((referenceMs - timestampMs) / 1000, end - i)
    i = end
  }
}

export class MirrorMetrics implements PipelineObserver {
  /** Registry holding every metric of this instance, prom-client defaults included. */
  readonly registry = new Registry()
  readonly instruments: Instruments
  readonly #snapshots: () => readonly FlowSnapshot[]
  readonly #nowMs: () => number
  readonly #flows = new Map<string, FlowInstruments>()
  readonly #commitWindows = new Map<string, CommitWindow>()
  readonly #lastLagSeconds = new Map<string, number>()
  readonly #statusWindowCommits: number
  readonly #partitionLabels: boolean
  #scrapeSnapshots: readonly FlowSnapshot[] | undefined
  #scrapesRunning = 0
  /** The labels of each partition of a flow snapshot, by index (`#eachPartition`); gone with the snapshot. */
  readonly #partitionLabelsOf = new WeakMap<FlowSnapshot, Array<Record<string, string>>>()

  constructor (snapshots: () => readonly FlowSnapshot[], options: MirrorMetricsOptions = {}) {
    this.#snapshots = snapshots
    this.#nowMs = options.nowMs ?? Date.now
    this.#statusWindowCommits = options.statusWindowCommits ?? 10
    this.#partitionLabels = options.partitionLabels ?? true
    const registers = [this.registry]
    const snapshotGauge = (
      definition: (typeof Metrics)[keyof typeof Metrics],
      fill: (into: GaugeSample[], flows: readonly FlowSnapshot[]) => void
    ): ComputedGauge =>
      this.#register(
        new ComputedGauge(definition.name, definition.help, definition.labelNames, into => {
          fill(into, this.#flowsForScrape())
        })
      )
    const counter = (definition: (typeof Metrics)[keyof typeof Metrics]): Counter =>
      new Counter({ name: definition.name, help: definition.help, labelNames: definition.labelNames, registers })
    const family = (definition: (typeof Metrics)[keyof typeof Metrics]): CounterFamily<string> =>
      this.#register(new CounterFamily(definition.name, definition.help, definition.labelNames))
    const histogram = (definition: (typeof Metrics)[keyof typeof Metrics], bounds: readonly number[]): BatchHistogram<string> =>
      this.#register(new BatchHistogram(definition.name, definition.help, definition.labelNames, bounds))

    this.instruments = {
      consumedRecords: family(Metrics.consumedRecords),
      consumedBytes: family(Metrics.consumedBytes),
      producedRecords: family(Metrics.producedRecords),
      producedBytes: family(Metrics.producedBytes),
      replicationLatency: histogram(Metrics.replicationLatency, LATENCY_BUCKETS_SECONDS),
      recordAgeAtPoll: histogram(Metrics.recordAgeAtPoll, LATENCY_BUCKETS_SECONDS),
      produceRequestDuration: histogram(Metrics.produceRequestDuration, REQUEST_BUCKETS_SECONDS),
      transactionCommitDuration: histogram(Metrics.transactionCommitDuration, REQUEST_BUCKETS_SECONDS),
      transactions: counter(Metrics.transactions),
      retries: counter(Metrics.retries),
      batches: family(Metrics.batches),
      fetchRequests: family(Metrics.fetchRequests),
      corruptBatches: counter(Metrics.corruptBatches),
      throttled: counter(Metrics.throttled),
      topicConfigsSynced: counter(Metrics.topicConfigsSynced),
      topicAclsSynced: counter(Metrics.topicAclsSynced),
      batchBytes: family(Metrics.batchBytes),
      sendFailures: counter(Metrics.sendFailures),
      commits: counter(Metrics.commits),
      rebalances: counter(Metrics.rebalances),
      lastCommitTimestamp: new Gauge({
        name: Metrics.lastCommitTimestamp.name,
        help: Metrics.lastCommitTimestamp.help,
        labelNames: Metrics.lastCommitTimestamp.labelNames,
        registers,
      }),
    }

    /** One sample per flow; a flow whose `value` is undefined (a part it does not have) exports none. */
    const flowGauge = (definition: (typeof Metrics)[keyof typeof Metrics], value: (flow: FlowSnapshot) => number | undefined): ComputedGauge =>
      snapshotGauge(definition, (into, flows) => {
        for (const flow of flows) {
          const sample = value(flow)
          if (sample !== undefined) into.push({ labels: this.#flow(flow.labels).labels, value: sample })
        }
      })
    flowGauge(Metrics.queueRecords, flow => flow.queueRecords)
    flowGauge(Metrics.queueBytes, flow => flow.queueBytes)
    flowGauge(Metrics.queueCapacityRecords, flow => flow.queueCapacityRecords)
    flowGauge(Metrics.queueCapacityBytes, flow => flow.queueCapacityBytes)
    flowGauge(Metrics.assignedPartitions, flow => flow.assignedPartitions)
    flowGauge(Metrics.coordinator, flow => (flow.coordinator === true ? 1 : 0))
    flowGauge(Metrics.mirroredTopics, flow => flow.topicsMirrored)
    flowGauge(Metrics.flowRunning, flow => (flow.state === 'running' && flow.sourceConnected && flow.targetConnected ? 1 : 0))
    flowGauge(Metrics.commitAge, flow => this.#commitAgeSeconds(flow))
    // Only flows that transcode have a transcoder, only flows that run lanes report them.
    flowGauge(Metrics.transcoderBusySlots, flow => flow.transcoder?.busySlots)
    flowGauge(Metrics.transcoderWaitingBatches, flow => flow.transcoder?.waitingBatches)
    flowGauge(Metrics.producerLanes, flow => flow.producerLanes?.total)
    flowGauge(Metrics.producerLanesWriting, flow => flow.producerLanes?.writing)
    snapshotGauge(Metrics.commitInterval, into => {
      for (const instruments of this.#flows.values()) {
        if (instruments.commitIntervalMs !== undefined) into.push({ labels: instruments.labels, value: instruments.commitIntervalMs / 1000 })
      }
    })
    snapshotGauge(Metrics.throughputLimit, into => {
      for (const instruments of this.#flows.values()) {
        if (instruments.throughputLimitBytes !== undefined) into.push({ labels: instruments.labels, value: instruments.throughputLimitBytes })
      }
    })
    snapshotGauge(Metrics.lagRecords, (into, flows) => this.#fillPerPartition(into, flows, 'sum', partition => Number(lagRecords(partition))))
    snapshotGauge(Metrics.lagSeconds, (into, flows) => this.#fillLagSeconds(into, flows))
    snapshotGauge(Metrics.committedOffset, (into, flows) => {
      // A sum or maximum of offsets means nothing: per topic there is no committed offset.
      if (!this.#partitionLabels) return
      this.#eachPartition(flows, (labels, partition) => {
        if (partition.committedOffset >= 0n) into.push({ labels, value: Number(partition.committedOffset) })
      })
    })
    snapshotGauge(Metrics.partitionStatus, (into, flows) => this.#fillPartitionStatus(into, flows))
    new Gauge({ name: Metrics.buildInfo.name, help: Metrics.buildInfo.help, labelNames: Metrics.buildInfo.labelNames, registers }).set(
      { [L.VERSION]: options.version ?? packageVersion(), [L.NODE_VERSION]: process.version },
      1
    )
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry })
    for (const flow of options.flows ?? []) {
      const instruments = this.#flow(flowLabels(flow))
      instruments.commitIntervalMs = flow.offsetCommitIntervalMs
      if (flow.throughputLimitBytes !== undefined) {
        instruments.throughputLimitBytes = flow.throughputLimitBytes
        this.instruments.throttled.inc(instruments.labels, 0)
      }
    }
  }

  fetched (flow: FlowLabels): void {
    this.#flow(flow).fetchRequests.inc()
  }

  consumed (flow: FlowLabels, batch: ConsumedBatch): void {
    const instruments = this.#flow(flow)
    const topic = instruments.topic(batch.topic)
    topic.consumedRecords.inc(batch.records)
    topic.consumedBytes.inc(batch.bytes)
    observeAges(instruments.recordAgeAtPoll, batch.pollTimeMs, batch.timestampsMs)
  }

  produced (flow: FlowLabels, batch: ProducedBatch): void {
    const instruments = this.#flow(flow)
    instruments.uncommittedSinceMs ??= batch.ackTimeMs
    const topic = instruments.topic(batch.sourceTopic)
    topic.producedRecords.inc(batch.records)
    topic.producedBytes.inc(batch.bytes)
    observeAges(instruments.replicationLatency, batch.ackTimeMs, batch.timestampsMs)
  }

  produceRequest (flow: FlowLabels, durationSeconds: number, ok: boolean): void {
    const instruments = this.#flow(flow)
    ;(ok ? instruments.produceOk : instruments.produceError).observe(durationSeconds)
  }

  retry (flow: FlowLabels, operation: string, errorCode: string): void {
    this.instruments.retries.inc({ ...this.#flow(flow).labels, [L.OPERATION]: operation, [L.ERROR_CODE]: errorCode })
  }

  topicConfigsSynced (flow: FlowLabels, changed: number): void {
    this.instruments.topicConfigsSynced.inc(this.#flow(flow).labels, changed)
  }

  topicAclsSynced (flow: FlowLabels, created: number): void {
    this.instruments.topicAclsSynced.inc(this.#flow(flow).labels, created)
  }

  batchRouted (flow: FlowLabels, path: BatchPath, reason: DeepPathReason | undefined, bytes: number): void {
    const instruments = this.#flow(flow)
    const key = reason === undefined ? path : `${path}\u0000${reason}`
    let routed = instruments.routed.get(key)
    if (routed === undefined) {
      const labels = instruments.labels
      routed = {
        batches: this.instruments.batches.child({ ...labels, [L.PATH]: path, [L.REASON]: reason ?? '' }),
        bytes: this.instruments.batchBytes.child({ ...labels, [L.PATH]: path }),
      }
      instruments.routed.set(key, routed)
    }
    routed.batches.inc()
    routed.bytes.inc(bytes)
  }

  throttled (flow: FlowLabels, seconds: number): void {
    this.instruments.throttled.inc(this.#flow(flow).labels, seconds)
  }

  corruptBatch (flow: FlowLabels, topic: string, partition: number): void {
    this.instruments.corruptBatches.inc({ ...this.#flow(flow).labels, [L.TOPIC]: topic, [L.PARTITION]: String(partition) })
  }

  sendFailed (flow: FlowLabels, topic: string, _partition: number, _reason: string): void {
    this.#flow(flow).topic(topic)
    this.instruments.sendFailures.inc({ ...this.#flow(flow).labels, [L.TOPIC]: topic })
  }

  committed (flow: FlowLabels, offsets: readonly CommittedOffset[], atMs: number): void {
    const instruments = this.#flow(flow)
    const labels = instruments.labels
    instruments.lastCommitMs = atMs
    instruments.uncommittedSinceMs = undefined
    this.instruments.commits.inc({ ...labels, [L.RESULT]: Results.OK })
    this.instruments.lastCommitTimestamp.set(labels, atMs / 1000)
    for (const offset of offsets) {
      const key = flowPartitionKey(flow.flow, offset.topic, offset.partition)
      let window = this.#commitWindows.get(key)
      if (window === undefined) {
        window = new CommitWindow(this.#statusWindowCommits)
        this.#commitWindows.set(key, window)
      }
      window.add({ offset: offset.offset, lagRecords: offset.lagRecords, atMs })
    }
  }

  commitFailed (flow: FlowLabels, _reason: string): void {
    this.instruments.commits.inc({ ...this.#flow(flow).labels, [L.RESULT]: Results.ERROR })
  }

  rebalanced (flow: FlowLabels): void {
    this.instruments.rebalances.inc(this.#flow(flow).labels)
  }

  transactionEnded (flow: FlowLabels, result: 'committed' | 'aborted', durationSeconds: number): void {
    const instruments = this.#flow(flow)
    this.instruments.transactions.inc({ ...instruments.labels, [L.RESULT]: result })
    if (result === 'committed') {
      ;(instruments.transactionCommit ??= this.instruments.transactionCommitDuration.child(instruments.labels)).observe(durationSeconds)
    }
  }

  /**
   * The registry's content in Prometheus text format 0.0.4, or OpenMetrics 1.0 when asked; serve
   * this rather than `registry.metrics()`. The metrics of this project's own classes (the
   * per-partition and per-topic ones: all but some hundred series) are formatted by `metricText`,
   * byte for byte as prom-client would and in the registry's order; prom-client's own metrics by
   * prom-client. OpenMetrics goes through a throwaway registry of views because prom-client's own
   * OpenMetrics path renames counters in place (drops `_total`), which would corrupt later
   * text-format scrapes of the same registry.
   */
  async exposition (openMetrics = false, output?: ExpositionOutput): Promise<Exposition> {
    // Read the snapshots before any metric is collected, so series first seen in them (zeroed
    // counters of a new topic) are in this scrape, not only the next; they hold until the scrape ends.
    if (this.#scrapesRunning === 0) this.#scrapeSnapshots = undefined
    this.#scrapesRunning++
    try {
      this.#flowsForScrape()
      const metrics = this.registry.getMetricsAsArray() as unknown as Array<{ name: string, help: string, type: string, get: () => Promise<TextMetric> }>
      const view = openMetrics ? new (Registry as unknown as new (contentType: string) => Registry)(Registry.OPENMETRICS_CONTENT_TYPE) : undefined
      const labelTexts: LabelTexts = new WeakMap()
      // Every get() starts in this same turn, as in prom-client's `metrics()`; the computed gauges
      // (all the per-partition series) are formatted afterwards, each written out in pieces as it is.
      const ready = await Promise.all(
        metrics.map(async metric => {
          if (metric instanceof ComputedGauge) return undefined
          if (metric instanceof CounterFamily || metric instanceof BatchHistogram) return metricText(await metric.get(), openMetrics, labelTexts)
          if (view === undefined) return await this.registry.getSingleMetricAsString(metric.name)
          const name = metric.type === 'counter' ? stripTotal(metric.name) : metric.name
          const get = async (): Promise<object> => ({ ...(await metric.get()), name })
          view.registerMetric({ name, help: metric.help, type: metric.type, get } as unknown as Metric)
          return await view.getSingleMetricAsString(name)
        })
      )
      const contentType = openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE
      const chunks: string[] = []
      const write =
        output === undefined
          ? (chunk: string) => {
              chunks.push(chunk)
            }
          : output.write
      output?.start(contentType)
      metrics.forEach((metric, i) => {
        if (i > 0) write(openMetrics ? '\n' : '\n\n')
        const text = ready[i]
        if (text !== undefined) write(text)
        else if (metric instanceof ComputedGauge) metric.chunks(openMetrics, labelTexts, write)
      })
      write(openMetrics ? '\n# EOF\n' : '\n')
      return { contentType, body: chunks.join('') }
    } finally {
      if (--this.#scrapesRunning === 0) this.#scrapeSnapshots = undefined
    }
  }

  #register<M extends { name: string }>(metric: M): M {
    this.registry.registerMetric(metric as unknown as Metric)
    return metric
  }

  #flow (flow: FlowLabels): FlowInstruments {
    let instruments = this.#flows.get(flow.flow)
    if (instruments === undefined) {
      instruments = new FlowInstruments(flow, this.instruments, this.#nowMs())
      this.#flows.set(flow.flow, instruments)
    }
    return instruments
  }

  /** Snapshots for the scrape in progress: read once, shared by every gauge's `collect()`. */
  #flowsForScrape (): readonly FlowSnapshot[] {
    if (this.#scrapeSnapshots === undefined) {
      const flows = this.#snapshots()
      this.#scrapeSnapshots = flows
      // Outside `exposition` (prom-client's own `metrics()`): shared by the gauges of this turn.
      if (this.#scrapesRunning === 0) {
        setImmediate(() => {
          if (this.#scrapesRunning === 0) this.#scrapeSnapshots = undefined
        })
      }
      for (const flow of flows) {
        const instruments = this.#flow(flow.labels)
        for (const partition of flow.partitions) instruments.topic(partition.topic)
      }
      this.#forgetUnassigned(flows)
    }
    return this.#scrapeSnapshots
  }

  /**
   * Visits every partition of `flows` with its labels. The labels objects of a flow snapshot are
   * made once and shared by every per-partition gauge of the scrape (so the exposition formats
   * them once per partition, not once per series); nobody changes them.
   */
  #eachPartition (flows: readonly FlowSnapshot[], visit: (labels: Record<string, string>, partition: PartitionSnapshot, flow: FlowSnapshot) => void): void {
    for (const flow of flows) {
      let labelsOf = this.#partitionLabelsOf.get(flow)
      if (labelsOf === undefined) {
        const flowLabels = this.#flow(flow.labels).labels
        labelsOf = flow.partitions.map(partition => ({ ...flowLabels, [L.TOPIC]: partition.topic, [L.PARTITION]: String(partition.partition) }))
        this.#partitionLabelsOf.set(flow, labelsOf)
      }
      flow.partitions.forEach((partition, i) => {
        visit(labelsOf[i] as Record<string, string>, partition, flow)
      })
    }
  }

  /**
   * One sample per partition, or with `partitionLabels` false one per topic: the sum or the
   * largest of its partitions' values.
   */
  #fillPerPartition (
    into: GaugeSample[],
    flows: readonly FlowSnapshot[],
    combine: 'sum' | 'max',
    value: (partition: PartitionSnapshot, flow: FlowSnapshot, labels: Record<string, string>) => number
  ): void {
    if (this.#partitionLabels) {
      this.#eachPartition(flows, (labels, partition, flow) => into.push({ labels, value: value(partition, flow, labels) }))
      return
    }
    for (const flow of flows) {
      const flowLabels = this.#flow(flow.labels).labels
      const byTopic = new Map<string, { labels: Record<string, string>, value: number }>()
      for (const partition of flow.partitions) {
        const labels = { ...flowLabels, [L.TOPIC]: partition.topic }
        const v = value(partition, flow, labels)
        const sample = byTopic.get(partition.topic)
        if (sample === undefined) byTopic.set(partition.topic, { labels, value: v })
        else sample.value = combine === 'sum' ? sample.value + v : Math.max(sample.value, v)
      }
      for (const sample of byTopic.values()) into.push(sample)
    }
  }

  /** Seconds acknowledged records have waited for a commit; 0 when nothing acknowledged awaits one. */
  #commitAgeSeconds (flow: FlowSnapshot): number {
    const instruments = this.#flow(flow.labels)
    if (!flow.partitions.some(partition => partition.nextOffsetToMirror > partition.committedOffset)) return 0
    const sinceMs = Math.max(instruments.lastCommitMs ?? instruments.sinceMs, instruments.uncommittedSinceMs ?? 0)
    return Math.max(0, this.#nowMs() - sinceMs) / 1000
  }

  #fillLagSeconds (into: GaugeSample[], flows: readonly FlowSnapshot[]): void {
    const nowMs = this.#nowMs()
    this.#fillPerPartition(into, flows, 'max', (partition, flow) => {
      const key = flowPartitionKey(flow.labels.flow, partition.topic, partition.partition)
      let seconds: number
      if (lagRecords(partition) <= 0n) {
        seconds = 0
      } else if (partition.oldestUnackedTimestampMs !== undefined) {
        seconds = Math.max(0, nowMs - partition.oldestUnackedTimestampMs) / 1000
      } else {
        // Lagging, but nothing fetched and unacknowledged yet: the record's timestamp is unknown until fetched.
        seconds = this.#lastLagSeconds.get(key) ?? 0
      }
      this.#lastLagSeconds.set(key, seconds)
      return seconds
    })
  }

  #fillPartitionStatus (into: GaugeSample[], flows: readonly FlowSnapshot[]): void {
    const nowMs = this.#nowMs()
    if (this.#partitionLabels) {
      this.#eachPartition(flows, (labels, partition, flow) => {
        const status = this.#statusOf(partition, flow, nowMs)
        for (const candidate of STATUS_LABELS) into.push({ labels, extra: candidate, value: candidate.value === status ? 1 : 0 })
      })
      return
    }
    // Per topic: how many of its partitions are in each status (sum by (status) counts partitions either way).
    for (const flow of flows) {
      const flowLabels = this.#flow(flow.labels).labels
      const byTopic = new Map<string, Map<string, number>>()
      for (const partition of flow.partitions) {
        let counts = byTopic.get(partition.topic)
        if (counts === undefined) {
          counts = new Map(PartitionStatuses.map(status => [status, 0]))
          byTopic.set(partition.topic, counts)
        }
        const status = this.#statusOf(partition, flow, nowMs)
        counts.set(status, (counts.get(status) ?? 0) + 1)
      }
      for (const [topic, counts] of byTopic) {
        for (const [status, count] of counts) into.push({ labels: { ...flowLabels, [L.TOPIC]: topic, [L.STATUS]: status }, value: count })
      }
    }
  }

  #statusOf (partition: PartitionSnapshot, flow: FlowSnapshot, nowMs: number): string {
    const window = this.#commitWindows.get(flowPartitionKey(flow.labels.flow, partition.topic, partition.partition))
    return evaluatePartitionStatus(window?.points ?? [], lagRecords(partition), nowMs)
  }

  /** Drops per-partition state of partitions no snapshot mentions any more (revoked in a rebalance). */
  #forgetUnassigned (flows: readonly FlowSnapshot[]): void {
    const assigned = new Set<string>()
    for (const flow of flows) for (const partition of flow.partitions) assigned.add(flowPartitionKey(flow.labels.flow, partition.topic, partition.partition))
    for (const key of this.#commitWindows.keys()) if (!assigned.has(key)) this.#commitWindows.delete(key)
    for (const key of this.#lastLagSeconds.keys()) if (!assigned.has(key)) this.#lastLagSeconds.delete(key)
  }
}

/** High watermark minus the next offset to mirror; 0 before the first fetch or when caught up. */
function lagRecords (partition: PartitionSnapshot): bigint {
  if (partition.highWatermark < 0n) return 0n
  const lag = partition.highWatermark - partition.nextOffsetToMirror
  return lag > 0n ? lag : 0n
}
