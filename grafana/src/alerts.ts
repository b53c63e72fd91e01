import { Metrics } from '../../src/sidecar/metrics/metric-names.js'

/**
 * Prometheus alert rules for the sidecar, and the `promtool test rules` cases that show each one
 * firing and staying quiet. Expressions take metric names from `src/sidecar/metrics/metric-names.ts` only.
 * Annotation templates may use `{{ $labels.<name> }}` and `{{ if $labels.<name> }}...{{ end }}`
 * and nothing else, so the expected annotations of the test cases can be rendered here. Every rule
 * works with per-partition and per-topic metrics (`metrics.partition.labels` false): expressions
 * aggregate by topic or keep `partition` only where it exists.
 */

/** The scrape job the rules expect for `up` and `absent()`; change it here if yours differs. */
export const MIRROR_JOB = 'kafka-mirror'

/**
 * Where `docs/runbook.md` is read: each rule's `runbook_url` is this plus `#` and the alert name in
 * lower case (the page's heading anchor). As shipped, the page's path in the repository and the npm
 * package; `mirror-sidecar alerts --runbook-url-base <address>` prints the rules with the address
 * where the docs are published instead (`src/bin/monitoring-files.ts`).
 */
export const RUNBOOK_URL = 'docs/runbook.md'

export interface AlertRule {
  readonly alert: string
  readonly expr: string
  readonly for?: string
  readonly labels: { readonly severity: 'warning' | 'critical' }
  /** `runbook`: the numbered steps; `runbook_url`: the alert's section of docs/runbook.md, which holds the same steps. */
  readonly annotations: { readonly summary: string, readonly description: string, readonly runbook: string, readonly runbook_url?: string }
}

/** The alert's section of docs/runbook.md. */
export function runbookUrl (alert: string): string {
  return `${RUNBOOK_URL}#${alert.toLowerCase()}`
}

const M = Metrics
const LAG_SECONDS_THRESHOLD = 300
const LAG_RECORDS_GROWING_MIN = 1000
const QUEUE_SATURATION_RATIO = 0.9
/**
 * A commit is late after this many commit intervals: the first missed one can be a slow flush, the
 * second a retry; three in a row is a commit that keeps failing.
 */
const COMMIT_AGE_INTERVALS = 3
/** ...but never below this many seconds, so sub-second intervals (tests, demos) do not page. */
const COMMIT_AGE_MIN_SECONDS = 30
/** Lag in seconds above this share of the source topic's retention.ms: records are about to be deleted before they are copied. */
const RETENTION_LAG_RATIO = 0.8
/** How long a loss keeps the alert firing: losses are rare and permanent, so long enough to be seen. */
const LOSS_WINDOW = '15m'
const where = '{{ $labels.instance }} flow {{ $labels.flow }}'

/** The effective RPO objective: the age of the oldest source record not yet on the target at most this many seconds... */
const RPO_OBJECTIVE_SECONDS = 60
/** ...this share of the time (error budget 1 %). */
const RPO_OBJECTIVE_RATIO = 0.99
/** The fast-burn threshold: 14.4 times the budget (2 % of a 30-day budget in one hour). */
const RPO_FAST_BURN = Number((14.4 * (1 - RPO_OBJECTIVE_RATIO)).toFixed(3))
/** Effective RPO per flow: the largest age of its partitions (or topics). */
const EFFECTIVE_RPO = `max by (job, instance, flow) (${M.lagSeconds.name})`
/** `orders-3` per partition, `orders` when the metrics are per topic (`metrics.partition.labels` false). */
const partitionAt = '{{ $labels.topic }}{{ if $labels.partition }}-{{ $labels.partition }}{{ end }}'

function steps (...lines: string[]): string {
  return lines.map((line, i) => `${i + 1}. ${line}`).join('\n')
}

export const alertRules: readonly AlertRule[] = [
  {
    alert: 'KafkaMirrorLagHigh',
    expr: `max by (job, instance, flow, topic, partition) (${M.lagSeconds.name}) > ${LAG_SECONDS_THRESHOLD}`,
    for: '10m',
    labels: { severity: 'warning' },
    annotations: {
      summary: `Mirror lag above ${LAG_SECONDS_THRESHOLD / 60} minutes on ${partitionAt}`,
      description: `The oldest record of ${partitionAt} not yet acknowledged by the target is more than ${LAG_SECONDS_THRESHOLD} s old on ${where}, for 10 minutes.`,
      runbook: steps(
        `Dashboard "Kafka mirror sidecar": is ${M.producedRecords.name} still rising for the topic? If not, see KafkaMirrorStalled.`,
        `Compare consumed and produced rates: consumed far above produced means the target is slow (${M.produceRequestDuration.name}, ${M.retries.name}).`,
        `Queue at capacity (${M.queueRecords.name} vs ${M.queueCapacityRecords.name}) means the producers are the bottleneck: raise producers or target throughput.`,
        'A burst on the source drains by itself when produced rate exceeds the source write rate; check the trend before acting.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorLagGrowing',
    expr: `(deriv(${M.lagRecords.name}[15m]) > 0) and (${M.lagRecords.name} > ${LAG_RECORDS_GROWING_MIN})`,
    for: '30m',
    labels: { severity: 'warning' },
    annotations: {
      summary: `Mirror lag keeps growing on ${partitionAt}`,
      description: `Lag in records of ${partitionAt} on ${where} has grown for 30 minutes and is above ${LAG_RECORDS_GROWING_MIN} records: the mirror is slower than the source.`,
      runbook: steps(
        'Check the source write rate against the produced rate on the dashboard (Throughput).',
        `Look for retries (${M.retries.name}) and slow produce requests (${M.produceRequestDuration.name}) to the target.`,
        'Scale out: more instances in the same group (up to the partition count) or more producers per instance.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorStalled',
    expr: `(sum by (job, instance, flow, topic) (${M.lagRecords.name}) > 0) and (sum by (job, instance, flow, topic) (rate(${M.producedRecords.name}[5m])) == 0)`,
    for: '5m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirror stalled on topic {{ $labels.topic }}',
      description: `Topic {{ $labels.topic }} lags on ${where} but nothing was produced to the target for 5 minutes.`,
      runbook: steps(
        'GET /readyz on the instance: the JSON reasons name the flow, the cluster or the partition that blocks.',
        'Check target cluster availability and the sidecar logs (JSON on stderr) for send errors and retries.',
        `Check ${M.partitionStatus.name} for stall/stop and ${M.rebalances.name} for a rebalance loop.`,
        'If the target is healthy and the sidecar is stuck, restart it: offsets are committed only after the target acknowledged, so nothing is lost.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorCommitsFailing',
    expr: `${M.commitAge.name} > clamp_min(${COMMIT_AGE_INTERVALS} * ${M.commitInterval.name}, ${COMMIT_AGE_MIN_SECONDS})`,
    for: '2m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'No source offset commit on {{ $labels.instance }} flow {{ $labels.flow }}',
      description: `Acknowledged records on ${where} have waited for a source offset commit for more than ${COMMIT_AGE_INTERVALS} commit intervals (at least ${COMMIT_AGE_MIN_SECONDS} s), for 2 minutes: commits keep failing. Nothing is lost, but a restart copies everything since the last commit again and mirror-check --group shows it as lag.`,
      runbook: steps(
        'Find the commit error in the sidecar logs (JSON on stderr): the Kafka error code names the cause.',
        `${M.offsetSyncFailures.name} rising: the offset-sync write before each commit fails (authorization on the offset-syncs topic, target unreachable); the commit waits for it.`,
        `${M.commits.name}{result="error"} rising without sync failures: the source group coordinator refuses the commit (rebalance loop: ${M.rebalances.name}; authorization on the group).`,
        'Fix the cause; the next commit covers everything acknowledged since the last one.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorDown',
    expr: `up{job="${MIRROR_JOB}"} == 0`,
    for: '2m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirror instance {{ $labels.instance }} is down',
      description: 'Prometheus cannot scrape {{ $labels.instance }} (job {{ $labels.job }}) for 2 minutes.',
      runbook: steps(
        'Check the process or pod: running, restarting, out of memory?',
        'GET /healthz on the instance: 500 means a fatal error; the reason is in the response and the logs.',
        'Check that the metrics port (default 9464) is reachable from Prometheus.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorAbsent',
    expr: `absent(${M.buildInfo.name}{job="${MIRROR_JOB}"})`,
    for: '5m',
    labels: { severity: 'critical' },
    annotations: {
      summary: `No mirror instance reports metrics under job ${MIRROR_JOB}`,
      description: `${M.buildInfo.name} is absent for job {{ $labels.job }} for 5 minutes: no instance is scraped, or the target is not the sidecar.`,
      runbook: steps(
        'Check that the sidecar is deployed and running.',
        `Check the Prometheus scrape configuration: job name "${MIRROR_JOB}" and the sidecar's metrics port.`,
        'Check Prometheus Status > Targets for scrape errors.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorSendFailures',
    expr: `sum by (job, instance, flow, topic) (increase(${M.sendFailures.name}[5m])) > 0`,
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirror failed to send to the target for topic {{ $labels.topic }}',
      description: `The target did not accept batches of topic {{ $labels.topic }} from ${where} after retries in the last 5 minutes.`,
      runbook: steps(
        'Find the error in the sidecar logs (JSON on stderr): the Kafka error code names the cause.',
        'MESSAGE_TOO_LARGE: raise max.message.bytes on the target topic (or message.max.bytes on the broker) to the source value.',
        'Authorization errors: grant the mirror WRITE on the target topic.',
        'The sidecar does not commit past a failed batch: after fixing, restart it and it resumes from the last commit.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorRecordsLost',
    // A counter series appears with its first loss (already above 0), where increase() sees no rise: the `unless offset` side catches it.
    expr: `sum by (job, instance, flow, topic, reason) (increase(${M.lostRecords.name}[${LOSS_WINDOW}]) > 0 or (${M.lostRecords.name} > 0 unless ${M.lostRecords.name} offset ${LOSS_WINDOW}))`,
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirror lost records of topic {{ $labels.topic }} ({{ $labels.reason }})',
      description: `${where} found records of {{ $labels.topic }} that will never reach the target in the last ${LOSS_WINDOW} (reason {{ $labels.reason }}): source_retention = deleted on the source before they were copied; source_topic_recreated / target_topic_recreated = a topic was deleted or recreated under the mirror, which then stops. The sidecar's error log line \`lost records: ...\` names the partition and offsets.`,
      runbook: steps(
        'Find the `lost records` error lines in the sidecar logs: topic, partition and offset range.',
        'source_retention: the mirror lagged behind source retention (or someone ran deleteRecords). Those records are gone from the source; recover them from elsewhere if needed. Raise source retention.ms/retention.bytes or fix the lag (KafkaMirrorLagHigh) so it does not happen again.',
        'source_topic_recreated: the sidecar stopped without committing; restarting it copies the new topic from its start (the target still holds the old topic\'s copies before them).',
        'target_topic_recreated: the sidecar stopped without committing; re-copy from the source (kafka-consumer-groups --reset-offsets --to-earliest on the mirror group) before restarting, then run mirror-check verify.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorCorruptSourceBatch',
    // As for losses: the counter series appears with the first corrupt batch, where increase() sees no rise.
    expr: `sum by (job, instance, flow, topic, partition) (increase(${M.corruptBatches.name}[${LOSS_WINDOW}]) > 0 or (${M.corruptBatches.name} > 0 unless ${M.corruptBatches.name} offset ${LOSS_WINDOW}))`,
    labels: { severity: 'critical' },
    annotations: {
      summary: 'A record batch of topic {{ $labels.topic }} partition {{ $labels.partition }} is corrupt on the source cluster',
      description: `${where} fetched a record batch of {{ $labels.topic }} partition {{ $labels.partition }} whose CRC-32C does not match its bytes in the last ${LOSS_WINDOW}; it was not copied. With corrupt.batches=fail (the default) the flow stopped there; with skip its records were left out and committed past. The sidecar's log line \`... is corrupt on the source cluster\` names the offsets and both CRCs.`,
      runbook: steps(
        'Find the `is corrupt on the source cluster` line in the sidecar logs: topic, partition, offset range, CRCs.',
        'Check the partition on the source brokers (kafka-dump-log --deep-iteration on the leader\'s segment): a disk or filesystem fault there. Another replica may hold an intact copy: move leadership to it, or reassign the partition away from the broker.',
        'corrupt.batches=fail: once the source is repaired restart the sidecar; it resumes at the batch. To go on without the batch, restart it with --corrupt.batches skip (those records are then missing on the target).',
        'corrupt.batches=skip: the records of the batch are not on the target; recover them from another copy if needed.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorDigestMismatch',
    // As for losses: the counter series appears with the first mismatch, where increase() sees no rise.
    expr: `sum by (job, instance, flow, topic) (increase(${M.digestMismatches.name}[${LOSS_WINDOW}]) > 0 or (${M.digestMismatches.name} > 0 unless ${M.digestMismatches.name} offset ${LOSS_WINDOW}))`,
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirrored records of topic {{ $labels.topic }} changed on the target',
      description: `The continuous audit of ${where} re-read copied records of {{ $labels.topic }} on the target in the last ${LOSS_WINDOW} and they no longer hash to the digest the mirror recorded when it wrote them: a record was changed, removed or added behind the mirror's back (topic rewritten or restored, log truncated by an unclean leader election, another writer). The sidecar's error log line \`digest mismatch: ...\` names the partition and offsets.`,
      runbook: steps(
        'Find the `digest mismatch` error lines in the sidecar logs: target topic, partition, target and source offsets.',
        'Run `mirror-check verify --digests --target <target> --topic <topic> --partition <p>`: it says which digests differ and whether records are changed, missing or added (it needs no source).',
        'If the source still holds those records, `mirror-check verify` (with the source) names each changed record.',
        'Consumers of the target may have read wrong data: re-copy the range from the source (or restore the target topic) and find who wrote to it (target ACLs: only the mirror should have WRITE).'
      ),
    },
  },
  {
    alert: 'KafkaMirrorQueueSaturated',
    expr: `max by (job, instance, flow) (${M.queueRecords.name} / ${M.queueCapacityRecords.name} > ${QUEUE_SATURATION_RATIO} or ${M.queueBytes.name} / ${M.queueCapacityBytes.name} > ${QUEUE_SATURATION_RATIO})`,
    for: '10m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'Mirror queue nearly full on {{ $labels.instance }} flow {{ $labels.flow }}',
      description: `The queue between consumer and producers on ${where} is above ${QUEUE_SATURATION_RATIO * 100}% of its capacity for 10 minutes: the target side is the bottleneck and the consumer is throttled.`,
      runbook: steps(
        `Check produce latency (${M.produceRequestDuration.name}) and retries (${M.retries.name}) to the target.`,
        'Raise the number of producers or the target throughput; a larger queue only buys time.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorPartitionNotOk',
    expr: `${M.partitionStatus.name}{status=~"stall|stop|rewind"} > 0`,
    for: '5m',
    labels: { severity: 'warning' },
    annotations: {
      summary: `Mirror partition ${partitionAt} is {{ $labels.status }}`,
      description: `Over its recent commits, ${partitionAt} on ${where} is {{ $labels.status }} (Burrow's terms: stall = offset not moving while lagging, stop = no commits, rewind = offset went back; with per-topic metrics, at least one partition of the topic).`,
      runbook: steps(
        'stall or stop: see KafkaMirrorStalled; check /readyz and the logs for this partition.',
        'rewind: someone reset the group offsets or the source topic was recreated; check the audit trail before assuming data loss.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorFlowNotRunning',
    expr: `${M.flowRunning.name} == 0`,
    for: '5m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'Mirror flow {{ $labels.flow }} not running on {{ $labels.instance }}',
      description: 'Flow {{ $labels.flow }} ({{ $labels.source }} -> {{ $labels.target }}) is not running with both clusters connected for 5 minutes.',
      runbook: steps(
        'GET /readyz on the instance for the reason.',
        'Check connectivity and credentials for the source and target clusters.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorNoCoordinator',
    expr: `max by (flow, source, target) (${M.coordinator.name}) == 0 and on (flow, source, target) max by (flow, source, target) (${M.flowRunning.name}) == 1`,
    for: '5m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'Mirror flow {{ $labels.flow }} has no coordinator',
      description: 'No instance of flow {{ $labels.flow }} ({{ $labels.source }} -> {{ $labels.target }}) has coordinated it for 5 minutes: group offset sync, checkpoints, offset-sync pruning and topic config sync are not running.',
      runbook: steps(
        'The coordinator is the owner of partition 0 of the first mirrored topic (by name); check that every instance mirrors the same topics (same --whitelist / topics) and that the source group is stable.',
        'kafka_mirror_assigned_partitions per instance shows who owns partitions; a rebalance in progress resolves itself within session.timeout.ms.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorLagNearRetention',
    expr: `max by (job, instance, flow, topic) (${M.lagSeconds.name}) > ${RETENTION_LAG_RATIO} * max by (job, instance, flow, topic) (${M.sourceRetention.name})`,
    for: '5m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirror lag near the source retention on {{ $labels.topic }}',
      description: `The oldest record of {{ $labels.topic }} not yet acknowledged by the target is older than ${RETENTION_LAG_RATIO * 100} % of the source topic's retention.ms on ${where}, for 5 minutes: the source deletes records before they are copied.`,
      runbook: steps(
        `Records older than the source topic's retention.ms (${M.sourceRetention.name}) are deleted on the source; once the lag (${M.lagSeconds.name}) passes it they are lost, and KafkaMirrorRecordsLost fires with reason source_retention.`,
        'Buy time: raise retention.ms of the source topic while the mirror catches up (kafka-configs --bootstrap-server <source> --alter --entity-type topics --entity-name <topic> --add-config retention.ms=<longer>).',
        'Find why the mirror is slow: the steps of KafkaMirrorLagHigh (produced rate, queue at capacity, target produce duration and retries).',
        `${M.sourceRetention.name} is read at start and on every topic refresh; it is absent when the mirror may not read the topic's config (DescribeConfigs on the source topic: mirror-sidecar preflight names it).`
      ),
    },
  },
  {
    alert: 'KafkaMirrorForeignWrites',
    // As for losses: the counter series appears with the first foreign record, where increase() sees no rise.
    expr: `sum by (job, instance, flow, topic) (increase(${M.foreignRecords.name}[${LOSS_WINDOW}]) > 0 or (${M.foreignRecords.name} > 0 unless ${M.foreignRecords.name} offset ${LOSS_WINDOW}))`,
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Records the mirror did not write appeared on the target copy of {{ $labels.topic }}',
      description: `${where} found records on the target copy of {{ $labels.topic }} in the last ${LOSS_WINDOW} that it did not write: another producer writes to a mirrored target topic, so the target is no longer a copy of the source. The sidecar's warning log line \`foreign records on the target: ...\` names the partition and offsets.`,
      runbook: steps(
        'Find the `foreign records on the target` warning lines in the sidecar logs: target topic, partition and offset range.',
        'Read those records (kcat -C -t TOPIC -p PARTITION -o FROM -c COUNT) and find their producer: mirror-check verify reports them as EXTRA with their offsets; before cutover no application should write to the target.',
        'Stop that producer (deny it WRITE on the target topic). The foreign records stay on the target: consumers that move there read them too; delete or reconcile them before the cutover.'
      ),
    },
  },
  {
    alert: 'KafkaMirrorRpoBudgetBurn',
    // Multiwindow burn rate (Google SRE workbook): 14.4 times the budget over 1 h and over 5 min, so it fires fast and stops soon after recovery.
    expr: `avg_over_time((${EFFECTIVE_RPO} > bool ${RPO_OBJECTIVE_SECONDS})[1h:1m]) > ${RPO_FAST_BURN} and avg_over_time((${EFFECTIVE_RPO} > bool ${RPO_OBJECTIVE_SECONDS})[5m:1m]) > ${RPO_FAST_BURN}`,
    labels: { severity: 'critical' },
    annotations: {
      summary: 'Mirror flow {{ $labels.flow }} burns its RPO budget fast',
      description: `The effective RPO of ${where} (the age of the oldest source record not yet on the target) was above ${RPO_OBJECTIVE_SECONDS} s for more than ${RPO_FAST_BURN * 100} % of the last hour and of the last 5 minutes: at this rate the objective (at most ${RPO_OBJECTIVE_SECONDS} s, ${RPO_OBJECTIVE_RATIO * 100} % of the time) is spent within about two days. A failover now would lose the records of that long.`,
      runbook: steps(
        'The dashboard\'s Effective RPO panel shows the flow\'s age over time; kafka_mirror_lag_seconds shows the topics and partitions behind.',
        'Follow KafkaMirrorLagHigh / KafkaMirrorStalled for the cause (throughput, target errors, a stuck partition).',
        'Before a failover, mirror-check rpo lists exactly which records are not on the target yet.'
      ),
    },
  },
]

/** The rule file Prometheus loads. */
export function alertRuleFile (): { groups: Array<{ name: string, rules: AlertRule[] }> } {
  return {
    groups: [
      { name: 'kafka-mirror-sidecar', rules: alertRules.map(rule => ({ ...rule, annotations: { ...rule.annotations, runbook_url: runbookUrl(rule.alert) } })) },
    ],
  }
}

/** `docs/runbook.md`: one section per alert (its anchor is `runbook_url`'s), with what it means and the steps. */
export function runbookPage (): string {
  const placeholders = (template: string): Record<string, string> =>
    Object.fromEntries([...template.matchAll(/\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)/g)].map(([, name = '']) => [name, name.toUpperCase()]))
  const sections = alertRules.map(rule => [
    `## ${rule.alert}`,
    '',
    `Severity ${rule.labels.severity}. ${renderAnnotation(rule.annotations.summary, placeholders(rule.annotations.summary))}.`,
    '',
    renderAnnotation(rule.annotations.description, placeholders(rule.annotations.description)),
    '',
    `Fires when this holds${rule.for === undefined ? '' : ` for ${rule.for}`}:`,
    '',
    '```promql',
    rule.expr,
    '```',
    '',
    rule.annotations.runbook,
    '',
  ].join('\n'))
  return [
    '# Runbook: the alerts of kafka-mirror-sidecar',
    '',
    'One section per alert of `grafana/alerts.yml` (and of the PrometheusRule in',
    '`deploy/kubernetes/monitoring/`); each alert\'s `runbook_url` annotation points to its section,',
    'and its `runbook` annotation carries the same steps. Metrics are described in',
    '[metrics-and-alerts.md](metrics-and-alerts.md).',
    '',
    ...alertRules.map(rule => `- [${rule.alert}](#${rule.alert.toLowerCase()})`),
    '',
    ...sections,
  ].join('\n')
}

interface InputSeries { readonly series: string, readonly values: string }
interface AlertCheck { readonly at: string, readonly alert: string, readonly firing: ReadonlyArray<Record<string, string>> }
/** One `promtool test rules` case: input series (expanding notation, 1m steps) and what must be firing when. */
interface AlertCase { readonly name: string, readonly input: readonly InputSeries[], readonly checks: readonly AlertCheck[] }

const mirror = `job="${MIRROR_JOB}",instance="mirror-0:9464"`
const flow = `${mirror},flow="eu->us",source="eu",target="us"`
const orders0 = `${flow},topic="orders",partition="0"`
const base = { job: MIRROR_JOB, instance: 'mirror-0:9464' }
const flowLabels = { ...base, flow: 'eu->us' }
const ordersLabels = { ...flowLabels, topic: 'orders' }
const orders0Labels = { ...ordersLabels, partition: '0' }

export const alertCases: readonly AlertCase[] = [
  {
    name: 'lag in seconds above the threshold for 10 minutes fires; a short spike does not',
    input: [
      { series: `${M.lagSeconds.name}{${orders0}}`, values: '0+60x30' },
      { series: `${M.lagSeconds.name}{${flow},topic="orders",partition="1"}`, values: '0x5 400x5 0x20' },
    ],
    checks: [
      { at: '10m', alert: 'KafkaMirrorLagHigh', firing: [] },
      { at: '20m', alert: 'KafkaMirrorLagHigh', firing: [orders0Labels] },
    ],
  },
  {
    name: 'lag in records growing for 30 minutes fires; growth that turns around does not',
    input: [
      { series: `${M.lagRecords.name}{${orders0}}`, values: '0+100x60' },
      { series: `${M.lagRecords.name}{${flow},topic="orders",partition="1"}`, values: '0+200x20 4000-200x20 0x20' },
    ],
    checks: [
      { at: '30m', alert: 'KafkaMirrorLagGrowing', firing: [] },
      { at: '55m', alert: 'KafkaMirrorLagGrowing', firing: [{ ...orders0Labels, source: 'eu', target: 'us' }] },
    ],
  },
  {
    name: 'lag with nothing produced fires; lag with progress and no lag without progress do not',
    input: [
      { series: `${M.lagRecords.name}{${orders0}}`, values: '500x30' },
      { series: `${M.producedRecords.name}{${flow},topic="orders"}`, values: '100x30' },
      { series: `${M.lagRecords.name}{${flow},topic="payments",partition="0"}`, values: '500x30' },
      { series: `${M.producedRecords.name}{${flow},topic="payments"}`, values: '100+50x30' },
      { series: `${M.lagRecords.name}{${flow},topic="idle",partition="0"}`, values: '0x30' },
      { series: `${M.producedRecords.name}{${flow},topic="idle"}`, values: '7x30' },
    ],
    checks: [{ at: '15m', alert: 'KafkaMirrorStalled', firing: [ordersLabels] }],
  },
  {
    name: 'a target down for 2 minutes fires; a target up does not',
    input: [
      { series: `up{${mirror}}`, values: '1x5 0x10' },
      { series: `up{job="${MIRROR_JOB}",instance="mirror-1:9464"}`, values: '1x15' },
    ],
    checks: [
      { at: '6m', alert: 'KafkaMirrorDown', firing: [] },
      { at: '10m', alert: 'KafkaMirrorDown', firing: [base] },
    ],
  },
  {
    name: 'no build info under the mirror job fires after 5 minutes',
    input: [{ series: 'up{job="something-else",instance="x:9100"}', values: '1x15' }],
    checks: [
      { at: '3m', alert: 'KafkaMirrorAbsent', firing: [] },
      { at: '10m', alert: 'KafkaMirrorAbsent', firing: [{ job: MIRROR_JOB }] },
    ],
  },
  {
    name: 'build info present keeps the absence alert quiet',
    input: [{ series: `${M.buildInfo.name}{${mirror},version="0.1.0",node_version="v20.20.2"}`, values: '1x15' }],
    checks: [{ at: '10m', alert: 'KafkaMirrorAbsent', firing: [] }],
  },
  {
    name: 'a send failure fires at once; a topic without failures does not',
    input: [
      { series: `${M.sendFailures.name}{${flow},topic="orders"}`, values: '0x5 1x10' },
      { series: `${M.sendFailures.name}{${flow},topic="payments"}`, values: '0x15' },
    ],
    checks: [
      { at: '4m', alert: 'KafkaMirrorSendFailures', firing: [] },
      { at: '7m', alert: 'KafkaMirrorSendFailures', firing: [ordersLabels] },
      { at: '15m', alert: 'KafkaMirrorSendFailures', firing: [] },
    ],
  },
  {
    name: 'a corrupt source batch fires at once when its counter appears, per partition; 15 minutes later it is quiet again',
    input: [{ series: `${M.corruptBatches.name}{${flow},topic="orders",partition="3"}`, values: '_x5 1x25' }],
    checks: [
      { at: '4m', alert: 'KafkaMirrorCorruptSourceBatch', firing: [] },
      { at: '7m', alert: 'KafkaMirrorCorruptSourceBatch', firing: [{ ...ordersLabels, partition: '3' }] },
      { at: '28m', alert: 'KafkaMirrorCorruptSourceBatch', firing: [] },
    ],
  },
  {
    name: 'a loss fires at once, both when the counter appears with it and when it rises; 15 minutes later it is quiet again',
    input: [
      { series: `${M.lostRecords.name}{${flow},topic="orders",reason="source_retention"}`, values: '_x5 50x25' },
      { series: `${M.lostRecords.name}{${flow},topic="payments",reason="target_topic_recreated"}`, values: '0x10 100x20' },
    ],
    checks: [
      { at: '4m', alert: 'KafkaMirrorRecordsLost', firing: [] },
      { at: '7m', alert: 'KafkaMirrorRecordsLost', firing: [{ ...ordersLabels, reason: 'source_retention' }] },
      {
        at: '12m',
        alert: 'KafkaMirrorRecordsLost',
        firing: [
          { ...ordersLabels, reason: 'source_retention' },
          { ...flowLabels, topic: 'payments', reason: 'target_topic_recreated' },
        ],
      },
      { at: '28m', alert: 'KafkaMirrorRecordsLost', firing: [] },
    ],
  },
  {
    name: 'a digest mismatch fires at once, when the counter appears with it and when it rises; an audited topic without one stays quiet',
    input: [
      { series: `${M.digestMismatches.name}{${flow},topic="orders"}`, values: '_x5 1x25' },
      { series: `${M.digestMismatches.name}{${flow},topic="payments"}`, values: '0x10 2x20' },
      { series: `${M.digestAuditRecords.name}{${flow},topic="refunds"}`, values: '0+1000x30' },
    ],
    checks: [
      { at: '4m', alert: 'KafkaMirrorDigestMismatch', firing: [] },
      { at: '7m', alert: 'KafkaMirrorDigestMismatch', firing: [ordersLabels] },
      { at: '12m', alert: 'KafkaMirrorDigestMismatch', firing: [ordersLabels, { ...flowLabels, topic: 'payments' }] },
      { at: '28m', alert: 'KafkaMirrorDigestMismatch', firing: [] },
    ],
  },
  {
    name: 'a queue above 90% of its capacity (records or bytes) for 10 minutes fires; a half-full one does not',
    input: [
      { series: `${M.queueRecords.name}{${flow}}`, values: '950x20' },
      { series: `${M.queueCapacityRecords.name}{${flow}}`, values: '1000x20' },
      { series: `${M.queueBytes.name}{${flow}}`, values: '100x20' },
      { series: `${M.queueCapacityBytes.name}{${flow}}`, values: '1000x20' },
      { series: `${M.queueRecords.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '10x20' },
      { series: `${M.queueCapacityRecords.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '1000x20' },
      { series: `${M.queueBytes.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '500x20' },
      { series: `${M.queueCapacityBytes.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '1000x20' },
    ],
    checks: [
      { at: '5m', alert: 'KafkaMirrorQueueSaturated', firing: [] },
      { at: '15m', alert: 'KafkaMirrorQueueSaturated', firing: [flowLabels] },
    ],
  },
  {
    name: 'a partition in stall for 5 minutes fires; ok partitions do not',
    input: [
      { series: `${M.partitionStatus.name}{${orders0},status="stall"}`, values: '0x2 1x10' },
      { series: `${M.partitionStatus.name}{${orders0},status="ok"}`, values: '1x2 0x10' },
      { series: `${M.partitionStatus.name}{${flow},topic="orders",partition="1",status="ok"}`, values: '1x12' },
      { series: `${M.partitionStatus.name}{${flow},topic="orders",partition="1",status="stall"}`, values: '0x12' },
    ],
    checks: [
      { at: '4m', alert: 'KafkaMirrorPartitionNotOk', firing: [] },
      { at: '10m', alert: 'KafkaMirrorPartitionNotOk', firing: [{ ...orders0Labels, source: 'eu', target: 'us', status: 'stall' }] },
    ],
  },
  {
    name: 'a commit age above 3 commit intervals for 2 minutes fires; a sawtooth below it and a short interval under the 30 s floor do not',
    input: [
      { series: `${M.commitAge.name}{${flow}}`, values: '0+60x20' },
      { series: `${M.commitInterval.name}{${flow}}`, values: '5x20' },
      {
        series: `${M.commitAge.name}{${mirror},flow="us->eu",source="us",target="eu"}`,
        values: '0 50 100 170 0 50 100 170 0 50 100 170 0 50 100 170 0 50 100 170 0',
      },
      { series: `${M.commitInterval.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '60x20' },
      { series: `${M.commitAge.name}{${mirror},flow="ap->eu",source="ap",target="eu"}`, values: '0 20 0 25 0 20 0 25 0 20 0 25 0 20 0 25 0 20 0 25 0' },
      { series: `${M.commitInterval.name}{${mirror},flow="ap->eu",source="ap",target="eu"}`, values: '0.5x20' },
    ],
    checks: [
      { at: '2m', alert: 'KafkaMirrorCommitsFailing', firing: [] },
      { at: '10m', alert: 'KafkaMirrorCommitsFailing', firing: [{ ...flowLabels, source: 'eu', target: 'us' }] },
    ],
  },
  {
    name: 'per-topic metrics (metrics.partition.labels false): lag, stall and status alerts fire per topic',
    input: [
      { series: `${M.lagSeconds.name}{${flow},topic="orders"}`, values: '0+60x30' },
      { series: `${M.lagSeconds.name}{${flow},topic="payments"}`, values: '0x30' },
      { series: `${M.lagRecords.name}{${flow},topic="orders"}`, values: '500x30' },
      { series: `${M.producedRecords.name}{${flow},topic="orders"}`, values: '100x30' },
      { series: `${M.partitionStatus.name}{${flow},topic="orders",status="stall"}`, values: '0x2 3x20' },
      { series: `${M.partitionStatus.name}{${flow},topic="orders",status="ok"}`, values: '8x2 5x20' },
      { series: `${M.partitionStatus.name}{${flow},topic="payments",status="stall"}`, values: '0x22' },
    ],
    checks: [
      { at: '20m', alert: 'KafkaMirrorLagHigh', firing: [ordersLabels] },
      { at: '15m', alert: 'KafkaMirrorStalled', firing: [ordersLabels] },
      { at: '10m', alert: 'KafkaMirrorPartitionNotOk', firing: [{ ...ordersLabels, source: 'eu', target: 'us', status: 'stall' }] },
    ],
  },
  {
    name: 'a flow not running for 5 minutes fires',
    input: [
      { series: `${M.flowRunning.name}{${flow}}`, values: '1x3 0x10' },
      { series: `${M.flowRunning.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '1x13' },
    ],
    checks: [
      { at: '6m', alert: 'KafkaMirrorFlowNotRunning', firing: [] },
      { at: '10m', alert: 'KafkaMirrorFlowNotRunning', firing: [{ ...flowLabels, source: 'eu', target: 'us' }] },
    ],
  },
  {
    name: 'a running flow whose instances all stopped coordinating fires after 5 minutes; one coordinator among several is fine',
    input: [
      { series: `${M.coordinator.name}{${flow}}`, values: '1x3 0x10' },
      { series: `${M.coordinator.name}{job="${MIRROR_JOB}",instance="mirror-1:9464",flow="eu->us",source="eu",target="us"}`, values: '0x13' },
      { series: `${M.flowRunning.name}{${flow}}`, values: '1x13' },
      { series: `${M.coordinator.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '1x13' },
      { series: `${M.flowRunning.name}{${mirror},flow="us->eu",source="us",target="eu"}`, values: '1x13' },
    ],
    checks: [
      { at: '6m', alert: 'KafkaMirrorNoCoordinator', firing: [] },
      { at: '10m', alert: 'KafkaMirrorNoCoordinator', firing: [{ flow: 'eu->us', source: 'eu', target: 'us' }] },
    ],
  },
  {
    name: 'lag past 80 % of the source topic\'s retention for 5 minutes fires; lag far below it, or a topic kept forever (no retention series), does not',
    input: [
      { series: `${M.lagSeconds.name}{${orders0}}`, values: '0+60x40' },
      { series: `${M.sourceRetention.name}{${flow},topic="orders"}`, values: '1800x40' },
      { series: `${M.lagSeconds.name}{${flow},topic="payments",partition="0"}`, values: '0+60x40' },
      { series: `${M.sourceRetention.name}{${flow},topic="payments"}`, values: '604800x40' },
      { series: `${M.lagSeconds.name}{${flow},topic="forever",partition="0"}`, values: '0+60x40' },
    ],
    checks: [
      { at: '26m', alert: 'KafkaMirrorLagNearRetention', firing: [] },
      { at: '32m', alert: 'KafkaMirrorLagNearRetention', firing: [ordersLabels] },
    ],
  },
  {
    name: 'foreign records on the target fire at once when their counter appears and when it rises; 15 minutes later it is quiet again',
    input: [
      { series: `${M.foreignRecords.name}{${flow},topic="orders"}`, values: '_x5 3x25' },
      { series: `${M.foreignRecords.name}{${flow},topic="payments"}`, values: '0x10 2x20' },
    ],
    checks: [
      { at: '4m', alert: 'KafkaMirrorForeignWrites', firing: [] },
      { at: '7m', alert: 'KafkaMirrorForeignWrites', firing: [ordersLabels] },
      { at: '12m', alert: 'KafkaMirrorForeignWrites', firing: [ordersLabels, { ...flowLabels, topic: 'payments' }] },
      { at: '28m', alert: 'KafkaMirrorForeignWrites', firing: [] },
    ],
  },
  {
    name: 'an effective RPO above the objective for long enough burns the budget fast and fires; a 3-minute spike does not',
    input: [
      { series: `${M.lagSeconds.name}{${flow},topic="orders"}`, values: '0x70 120x20' },
      { series: `${M.lagSeconds.name}{${mirror},flow="us->eu",source="us",target="eu",topic="orders"}`, values: '0x70 120x3 0x17' },
    ],
    checks: [
      { at: '72m', alert: 'KafkaMirrorRpoBudgetBurn', firing: [] },
      { at: '85m', alert: 'KafkaMirrorRpoBudgetBurn', firing: [flowLabels] },
    ],
  },
]

/** Renders `{{ $labels.name }}` placeholders and `{{ if $labels.name }}...{{ end }}` (not nested) the way Prometheus does for these annotations. */
export function renderAnnotation (template: string, labels: Readonly<Record<string, string>>): string {
  const rendered = template
    .replace(/\{\{ if \$labels\.([a-zA-Z_][a-zA-Z0-9_]*) \}\}(.*?)\{\{ end \}\}/g, (_match, name: string, body: string) =>
      (labels[name] ?? '') === '' ? '' : body
    )
    .replace(/\{\{ \$labels\.([a-zA-Z_][a-zA-Z0-9_]*) \}\}/g, (_match, name: string) => labels[name] ?? '')
  if (rendered.includes('{{')) throw new Error(`annotation uses a template the generator cannot render: ${template}`)
  return rendered
}

/** The `promtool test rules` file for `alerts.yml` (next to it). */
export function alertTestFile (): object {
  const byName = new Map(alertRules.map(rule => [rule.alert, rule]))
  return {
    rule_files: ['alerts.yml'],
    evaluation_interval: '1m',
    tests: alertCases.map(testCase => ({
      name: testCase.name,
      interval: '1m',
      input_series: testCase.input.map(series => ({ series: series.series, values: series.values })),
      alert_rule_test: testCase.checks.map(check => {
        const rule = byName.get(check.alert)
        if (rule === undefined) throw new Error(`no alert rule ${check.alert}`)
        return {
          eval_time: check.at,
          alertname: check.alert,
          exp_alerts: check.firing.map(labels => {
            const all = { ...labels, severity: rule.labels.severity }
            return {
              exp_labels: all,
              exp_annotations: {
                summary: renderAnnotation(rule.annotations.summary, all),
                description: renderAnnotation(rule.annotations.description, all),
                runbook: renderAnnotation(rule.annotations.runbook, all),
                runbook_url: runbookUrl(rule.alert),
              },
            }
          }),
        }
      }),
    })),
  }
}
