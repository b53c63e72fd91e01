import {
  BigValueColorMode,
  BigValueGraphMode,
  LegendDisplayMode,
  LegendPlacement,
  ReduceDataOptionsBuilder,
  StackingConfigBuilder,
  StackingMode,
  VizLegendOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common'
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard'
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus'
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat'
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries'
import { Metrics } from '../../src/sidecar/metrics/metric-names.js'

/**
 * The sidecar's Grafana dashboard, built with the Grafana Foundation SDK from the metric names in
 * `src/sidecar/metrics/metric-names.ts`. The output is classic dashboard JSON that works both for UI import
 * and for file provisioning: every query uses the `${datasource}` template variable (type
 * prometheus) instead of an `__inputs` placeholder, which file provisioning does not substitute.
 */

export const DASHBOARD_UID = 'kafka-mirror-sidecar'

const M = Metrics
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' }
const INSTANCE = 'job=~"$job", instance=~"$instance"'
const FLOW = `${INSTANCE}, flow=~"$flow"`
const TOPIC = `${FLOW}, topic=~"$topic"`
const RATE = '[$__rate_interval]'

function query (expr: string, legend: string): DataqueryBuilder {
  return new DataqueryBuilder().expr(expr).legendFormat(legend).range().datasource(DATASOURCE)
}

function legend (): VizLegendOptionsBuilder {
  return new VizLegendOptionsBuilder().showLegend(true).displayMode(LegendDisplayMode.Table).placement(LegendPlacement.Bottom).calcs(['lastNotNull', 'max'])
}

function timeseries (title: string, description: string, unit: string, queries: DataqueryBuilder[], width = 12): TimeseriesPanelBuilder {
  const panel = new TimeseriesPanelBuilder()
    .title(title).description(description).datasource(DATASOURCE).unit(unit).min(0)
    .legend(legend()).fillOpacity(10).lineWidth(1).height(8).span(width)
  queries.forEach((target, i) => panel.withTarget(target.refId(String.fromCharCode(65 + i))))
  return panel
}

function stat (
  title: string,
  description: string,
  unit: string,
  queries: DataqueryBuilder[],
  steps: Array<{ value: number | null, color: string }>,
  width = 6
): StatPanelBuilder {
  const panel = new StatPanelBuilder()
    .title(title)
    .description(description)
    .datasource(DATASOURCE)
    .unit(unit)
    .colorMode(BigValueColorMode.Background)
    .graphMode(BigValueGraphMode.Area)
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .thresholds(new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps))
    .height(5)
    .span(width)
  queries.forEach((target, i) => panel.withTarget(target.refId(String.fromCharCode(65 + i))))
  return panel
}

function variable (name: string, label: string, expression: string): QueryVariableBuilder {
  return new QueryVariableBuilder(name).label(label).datasource(DATASOURCE)
    .query({ query: expression, refId: `${name}-variable`, qryType: 1 }).definition(expression)
    .refresh(VariableRefresh.OnTimeRangeChanged).sort(VariableSort.AlphabeticalAsc)
    .multi(true).includeAll(true).allValue('.*')
}

const quantile = (q: number, metric: string, by = 'le'): string =>
  `histogram_quantile(${q}, sum by (${by}) (rate(${metric}_bucket{${FLOW}}${RATE})))`

/**
 * How much a counter grew over the dashboard's time range, 0 when it has no series. A series that
 * appeared within the range (these counters are absent until their first event) counts with its
 * whole value, which `increase` alone would miss.
 */
const grewOverRange = (metric: string, selector: string): string =>
  `round(sum((${metric}{${selector}} unless ${metric}{${selector}} offset $__range) or increase(${metric}{${selector}}[$__range]))) or vector(0)`

/**
 * Rows a person sees first. On any running sidecar with group offset sync and digests on, every
 * query of these rows returns a series (the audit counters read 0 until their first event); an
 * integration test runs them against a real Prometheus.
 */
export const MAIN_VIEW_ROWS = ['Overview', 'Audit', 'Throughput', 'Lag'] as const

const NONE_IS_GOOD = [{ value: null, color: 'green' }, { value: 1, color: 'red' }]

/** The dashboard as the SDK builds it (classic JSON model). */
export function buildDashboard (): object {
  const green = 'green'
  const red = 'red'
  const builder = new DashboardBuilder('Kafka mirror sidecar')
    .uid(DASHBOARD_UID)
    .description(
      'Throughput, lag, audit signals (lost records, digest mismatches, offset-sync failures, corrupt source batches, checkpoint age), queue, latency, errors and health of kafka-mirror-sidecar instances.'
    )
    .tags(['kafka', 'mirror', 'kafka-mirror-sidecar'])
    .editable()
    .refresh('30s')
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(variable('job', 'Job', `label_values(${M.buildInfo.name}, job)`))
    .withVariable(variable('instance', 'Instance', `label_values(${M.buildInfo.name}{job=~"$job"}, instance)`))
    .withVariable(variable('flow', 'Flow', `label_values(${M.flowRunning.name}{${INSTANCE}}, flow)`))
    .withVariable(variable('topic', 'Topic', `label_values(${M.lagRecords.name}{${FLOW}}, topic)`))

    .withRow(new RowBuilder('Overview'))
    .withPanel(
      stat(
        'Instances up',
        'Scrape targets of the selected job and instances that answer (`up`).',
        'none',
        [query(`sum(up{${INSTANCE}})`, 'up')],
        [
          { value: null, color: red },
          { value: 1, color: green },
        ]
      )
    )
    .withPanel(
      stat(
        'Flows running',
        `Flows running with both clusters connected (${M.flowRunning.name}).`,
        'none',
        [query(`sum(${M.flowRunning.name}{${FLOW}})`, 'running')],
        [
          { value: null, color: red },
          { value: 1, color: green },
        ]
      )
    )
    .withPanel(
      stat(
        'Assigned partitions',
        'Source partitions assigned, and topics mirrored, over the selected instances.',
        'none',
        [query(`sum(${M.assignedPartitions.name}{${FLOW}})`, 'partitions'), query(`sum(${M.mirroredTopics.name}{${FLOW}})`, 'topics')],
        [{ value: null, color: 'blue' }]
      )
    )
    .withPanel(
      stat(
        'Partition status',
        'Partitions per Burrow status over recent commits: ok, warn (lag not decreasing), stall (offset not moving while lagging), stop (no commits), rewind (offset went back).',
        'none',
        [query(`sum by (status) (${M.partitionStatus.name}{${TOPIC}})`, '{{status}}')],
        [{ value: null, color: green }]
      )
    )

    .withRow(new RowBuilder('Audit'))
    .withPanel(
      stat(
        'Records lost',
        `Source offsets the mirror will never copy (retention passed them, topic recreated) and target records it wrote that are gone, over the time range (${M.lostRecords.name}). Anything above 0 is data loss: see the KafkaMirrorRecordsLost runbook.`,
        'none',
        [query(grewOverRange(M.lostRecords.name, TOPIC), 'lost')],
        NONE_IS_GOOD,
        5
      )
    )
    .withPanel(
      stat(
        'Digest mismatches',
        `Digested ranges whose target records no longer match their digest when the continuous audit re-read them, over the time range (${M.digestMismatches.name}): the copy changed behind the mirror's back.`,
        'none',
        [query(grewOverRange(M.digestMismatches.name, TOPIC), 'mismatches')],
        NONE_IS_GOOD,
        5
      )
    )
    .withPanel(
      stat(
        'Offset-sync failures',
        `Offset-sync writes that failed over the time range (${M.offsetSyncFailures.name}); the source commit waiting for each was skipped, so lag grows until one succeeds.`,
        'none',
        [query(grewOverRange(M.offsetSyncFailures.name, FLOW), 'failures')],
        NONE_IS_GOOD,
        5
      )
    )
    .withPanel(
      stat(
        'Corrupt source batches',
        `Source record batches whose CRC-32C did not match, over the time range (${M.corruptBatches.name}); never copied. The source cluster holds corrupt data.`,
        'none',
        [query(grewOverRange(M.corruptBatches.name, TOPIC), 'corrupt')],
        NONE_IS_GOOD,
        5
      )
    )
    .withPanel(
      stat(
        'Checkpoint age',
        `Seconds since the oldest consumer group's last checkpoint was written (${M.checkpointAge.name}); no data when group offset sync is off. Yellow past 3 minutes, red past 10.`,
        's',
        [query(`max(${M.checkpointAge.name}{${FLOW}})`, 'age')],
        [
          { value: null, color: 'green' },
          { value: 180, color: 'yellow' },
          { value: 600, color: 'red' },
        ],
        4
      )
    )

    .withRow(new RowBuilder('Throughput'))
    .withPanel(
      timeseries('Records per second by topic', 'Records fetched from the source and acknowledged by the target.', 'rps', [
        query(`sum by (topic) (rate(${M.consumedRecords.name}{${TOPIC}}${RATE}))`, 'consumed {{topic}}'),
        query(`sum by (topic) (rate(${M.producedRecords.name}{${TOPIC}}${RATE}))`, 'produced {{topic}}'),
      ])
    )
    .withPanel(
      timeseries('Bytes per second by topic', 'Bytes (keys, values, headers) fetched from the source and acknowledged by the target.', 'Bps', [
        query(`sum by (topic) (rate(${M.consumedBytes.name}{${TOPIC}}${RATE}))`, 'consumed {{topic}}'),
        query(`sum by (topic) (rate(${M.producedBytes.name}{${TOPIC}}${RATE}))`, 'produced {{topic}}'),
      ])
    )

    .withRow(new RowBuilder('Lag'))
    .withPanel(
      timeseries(
        'Lag in records',
        'Source high watermark minus the next offset not yet acknowledged by the target, summed per topic (the same with metrics.partition.labels true or false).',
        'short',
        [query(`sum by (topic) (${M.lagRecords.name}{${TOPIC}})`, '{{topic}}')]
      )
    )
    .withPanel(
      timeseries(
        'Lag in seconds',
        'Age of the oldest record not yet acknowledged by the target (exact: the record timestamp, not an estimate), the largest per topic; 0 when caught up.',
        's',
        [query(`max by (topic) (${M.lagSeconds.name}{${TOPIC}})`, '{{topic}}')]
      )
    )

    .withRow(new RowBuilder('Audit detail'))
    .withPanel(
      timeseries(
        'Records lost since start',
        `Lost records counted since each instance started, by topic and reason (${M.lostRecords.name}): a step marks a loss.`,
        'short',
        [query(`sum by (topic, reason) (${M.lostRecords.name}{${TOPIC}})`, '{{topic}} {{reason}}')],
        8
      )
    )
    .withPanel(
      timeseries(
        'Digest mismatches and corrupt batches since start',
        `Mismatched digest ranges by topic (${M.digestMismatches.name}) and corrupt source batches by partition (${M.corruptBatches.name}), counted since each instance started.`,
        'short',
        [
          query(`sum by (topic) (${M.digestMismatches.name}{${TOPIC}})`, 'mismatched ranges {{topic}}'),
          query(`sum by (topic, partition) (${M.corruptBatches.name}{${TOPIC}})`, 'corrupt batches {{topic}} p{{partition}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Digest audit',
        'Target records the continuous audit re-read per second, by topic, and digests written per second: the audit at work.',
        'ops',
        [
          query(`sum by (topic) (rate(${M.digestAuditRecords.name}{${TOPIC}}${RATE}))`, 're-read {{topic}}'),
          query(`sum (rate(${M.digestsWritten.name}{${FLOW}}${RATE}))`, 'digests written'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Offset syncs',
        'Offset-sync records written, ranges pruned and writes failed per second.',
        'ops',
        [
          query(`sum (rate(${M.offsetSyncsWritten.name}{${FLOW}}${RATE}))`, 'written'),
          query(`sum (rate(${M.offsetSyncsPruned.name}{${FLOW}}${RATE}))`, 'pruned'),
          query(`sum (rate(${M.offsetSyncFailures.name}{${FLOW}}${RATE}))`, 'failed'),
        ],
        12
      )
    )
    .withPanel(
      timeseries(
        'Checkpoint age by group',
        'Seconds since the last checkpoint of each consumer group was written.',
        's',
        [query(`max by (group) (${M.checkpointAge.name}{${FLOW}})`, '{{group}}')],
        12
      )
    )

    .withRow(new RowBuilder('Pipeline'))
    .withPanel(
      timeseries(
        'Queue depth vs capacity (records)',
        'Records waiting between consumer and producers; intake blocks at capacity (backpressure).',
        'short',
        [
          query(`sum by (instance, flow) (${M.queueRecords.name}{${FLOW}})`, 'queued {{instance}} {{flow}}'),
          query(`sum by (instance, flow) (${M.queueCapacityRecords.name}{${FLOW}})`, 'capacity {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Queue depth vs capacity (bytes)',
        'Bytes waiting between consumer and producers, against the byte capacity.',
        'bytes',
        [
          query(`sum by (instance, flow) (${M.queueBytes.name}{${FLOW}})`, 'queued {{instance}} {{flow}}'),
          query(`sum by (instance, flow) (${M.queueCapacityBytes.name}{${FLOW}})`, 'capacity {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Replication latency',
        'Target acknowledgement time minus source record timestamp, percentiles; record age when polled for comparison.',
        's',
        [
          query(quantile(0.5, M.replicationLatency.name), 'p50'),
          query(quantile(0.95, M.replicationLatency.name), 'p95'),
          query(quantile(0.99, M.replicationLatency.name), 'p99'),
          query(quantile(0.95, M.recordAgeAtPoll.name), 'p95 age at poll'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Produce request duration',
        'Duration of produce requests to the target by result, percentiles.',
        's',
        [
          query(quantile(0.5, M.produceRequestDuration.name, 'le, result'), 'p50 {{result}}'),
          query(quantile(0.99, M.produceRequestDuration.name, 'le, result'), 'p99 {{result}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Requests per second',
        'Fetch requests the source answered and produce requests to the target, per second, beside the source batches they carry: fetches near the batch rate mean each fetch returns as soon as any record is there (fetch.min.bytes=1); fetch.min.bytes and fetch.max.wait.ms trade fewer fetches for latency.',
        'reqps',
        [
          query(`sum by (instance, flow) (rate(${M.fetchRequests.name}{${FLOW}}${RATE}))`, 'fetches {{instance}} {{flow}}'),
          query(`sum by (instance, flow) (rate(${M.produceRequestDuration.name}_count{${FLOW}}${RATE}))`, 'produce requests {{instance}} {{flow}}'),
          query(`sum by (instance, flow) (rate(${M.batches.name}{${FLOW}}${RATE}))`, 'source batches {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Producer lanes',
        "Producer lanes per flow (one produce request in flight each) and those taking batches now: at least once, the lanes past num.producers write only while the target's round trip is long (a target in another region).",
        'short',
        [
          query(`sum by (instance, flow) (${M.producerLanes.name}{${FLOW}})`, 'lanes {{instance}} {{flow}}'),
          query(`sum by (instance, flow) (${M.producerLanesWriting.name}{${FLOW}})`, 'writing {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Retries and send failures',
        'Retried operations per second by operation and error code; batches the target did not accept after retries.',
        'ops',
        [
          query(`sum by (operation, error_code) (rate(${M.retries.name}{${FLOW}}${RATE}))`, 'retry {{operation}} {{error_code}}'),
          query(`sum by (topic) (rate(${M.sendFailures.name}{${TOPIC}}${RATE}))`, 'send failure {{topic}}'),
        ],
        8
      ).stacking(new StackingConfigBuilder().mode(StackingMode.None))
    )
    .withPanel(
      timeseries(
        'Batches by path',
        "Source record batches per second forwarded undecoded (pass_through), recompressed into the target's codec without decoding (transcoded) or decoded (deep, by the reason they could not be forwarded); records skipped as the opposite mirror's (active-active).",
        'ops',
        [
          query(`sum by (path, reason) (rate(${M.batches.name}{${FLOW}}${RATE}))`, '{{path}} {{reason}}'),
          query(`sum (rate(${M.oppositeMirrorSkipped.name}{${FLOW}}${RATE}))`, 'skipped records (opposite mirror)'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Transcoder',
        "Flows that recompress batches into the target's codec (path transcoded): batches being recompressed now (busy slots of libuv's thread pool, at most UV_THREADPOOL_SIZE) and batches waiting for a slot; waiting above 0 for long means the codecs are the bottleneck.",
        'short',
        [
          query(`sum by (instance, flow) (${M.transcoderBusySlots.name}{${FLOW}})`, 'busy slots {{instance}} {{flow}}'),
          query(`sum by (instance, flow) (${M.transcoderWaitingBatches.name}{${FLOW}})`, 'waiting batches {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Commits and rebalances',
        'Offset commits on the source per second by result, and consumer group rebalances.',
        'ops',
        [
          query(`sum by (result) (rate(${M.commits.name}{${FLOW}}${RATE}))`, 'commit {{result}}'),
          query(`sum (rate(${M.rebalances.name}{${FLOW}}${RATE}))`, 'rebalances'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Exactly-once transactions',
        'Producer-lane transactions on the target per second by result (exactly-once flows only; aborted: fenced by another instance, timed out, or given up in a rebalance), and the p99 time a commit takes (positions write and EndTxn).',
        'ops',
        [
          query(`sum by (result) (rate(${M.transactions.name}{${FLOW}}${RATE}))`, 'transactions {{result}}'),
          query(quantile(0.99, M.transactionCommitDuration.name), 'p99 commit seconds'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Commit age',
        'Seconds acknowledged records have waited for a source offset commit (0 when all are committed), against the commit interval: far above it, commits are failing.',
        's',
        [
          query(`max by (instance, flow) (${M.commitAge.name}{${FLOW}})`, 'age {{instance}} {{flow}}'),
          query(`max by (instance, flow) (${M.commitInterval.name}{${FLOW}})`, 'interval {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Throughput limit',
        `Bytes of source data fetched per second by each flow, against its throughput limit (${M.throughputLimit.name}, throughput.limit.bytes; no line without a limit).`,
        'Bps',
        [
          query(`sum by (instance, flow) (rate(${M.consumedBytes.name}{${TOPIC}}${RATE}))`, 'fetched {{instance}} {{flow}}'),
          query(`max by (instance, flow) (${M.throughputLimit.name}{${FLOW}})`, 'limit {{instance}} {{flow}}'),
        ],
        8
      )
    )
    .withPanel(
      timeseries(
        'Time held back by the limit',
        `Share of the time fetching waited for the flow's throughput limit (rate of ${M.throttled.name}): near 100 %, the flow copies at its limit and lag grows if the source is written faster.`,
        'percentunit',
        [query(`max by (instance, flow) (rate(${M.throttled.name}{${FLOW}}${RATE}))`, '{{instance}} {{flow}}')],
        8
      )
    )
    .withPanel(
      timeseries(
        'Partitions not ok',
        'Partitions whose status is not ok, per topic and status.',
        'short',
        [query(`sum by (topic, status) (${M.partitionStatus.name}{${TOPIC}, status!="ok"}) > 0`, '{{topic}} {{status}}')],
        8
      )
    )

    .withRow(new RowBuilder('Process'))
    .withPanel(
      timeseries(
        'Event loop lag',
        'Node.js event loop delay (prom-client default metrics).',
        's',
        [query(`max by (instance) (nodejs_eventloop_lag_p99_seconds{${INSTANCE}})`, 'p99 {{instance}}')],
        8
      )
    )
    .withPanel(
      timeseries(
        'CPU',
        'Process CPU seconds per second.',
        'percentunit',
        [query(`sum by (instance) (rate(process_cpu_seconds_total{${INSTANCE}}${RATE}))`, '{{instance}}')],
        8
      )
    )
    .withPanel(
      timeseries(
        'Memory',
        'Resident memory and V8 heap used.',
        'bytes',
        [
          query(`sum by (instance) (process_resident_memory_bytes{${INSTANCE}})`, 'rss {{instance}}'),
          query(`sum by (instance) (nodejs_heap_size_used_bytes{${INSTANCE}})`, 'heap used {{instance}}'),
        ],
        8
      )
    )

    .withRow(new RowBuilder('Recovery point'))
    .withPanel(
      timeseries(
        'Effective RPO',
        'Per flow, the age of the oldest source record not yet on the target (the largest kafka_mirror_lag_seconds of its partitions): what a failover now would lose, in time. KafkaMirrorRpoBudgetBurn fires when it stays above 60 s too long.',
        's',
        [query(`max by (flow) (${M.lagSeconds.name}{${FLOW}})`, '{{flow}}')]
      )
    )
  return builder.build()
}

/** The committed file's content: stable, pretty-printed JSON with a trailing newline. */
export function dashboardJson (): string {
  return JSON.stringify(buildDashboard(), null, 2) + '\n'
}
