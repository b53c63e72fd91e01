import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { NodeCluster } from '../scripts/local-kafka/clusters.js'
import type { KafkaDistribution } from '../scripts/local-kafka/kafka-distribution.js'
import type { BenchOptions } from './bench-options.js'
import { runCeiling, type CeilingFigures } from './ceiling-run.js'
import { COMPACTED_TOPIC_CONFIGS, waitForCompaction } from './compacted-source.js'
import type { Contender, MirrorJob } from './contenders.js'
import { preload, type RecordShape } from './kcat-producer.js'
import { ceilingMedians, throughputMedians, type CeilingMedians, type ThroughputMedians } from './report.js'
import { runOrder } from './run-order.js'
import { COMPACTED_KEY_REPEATS, type Scenario } from './scenarios.js'
import { benchNodeClusters, nodeClusterPorts, ROLLING_RESTART_NODES, rollingRestartNote } from './rolling-restart.js'
import { POLL_INTERVAL_MS, runThroughput, type BenchCluster, type ContenderFailure, type ThroughputFigures } from './throughput-run.js'
import { outageNote } from './target-outage.js'
import { TopicAdmin, type AdminCluster } from './topic-admin.js'
import { startWideAreaTarget } from './wide-area-target.js'
import { sidecarThroughputLimit } from './throughput-limit.js'
import { REPLICATION_POLL_INTERVAL_MS, runReplicationCeiling, type ReplicationCeilingFigures, type ReplicationCeilingJob } from './replication-ceiling.js'
import type { BenchRun } from './bench-run.js'

/** Contenders that are builds of the sidecar, which take `--sidecar-arg`s. */
const SIDECAR_CONTENDERS: ReadonlySet<string> = new Set(['sidecar', 'baseline', 'sidecar-eos'])

/** The `handler` scenario's identity message handler, compiled next to this file. */
const IDENTITY_HANDLER = fileURLToPath(new URL('./identity-handler.js', import.meta.url))

/** Everything one throughput configuration measured in one invocation. */
export interface ScenarioResult {
  /** Undefined for a run configured by flags alone (no `--scenario`). */
  readonly scenario: Scenario | undefined
  /** The options as this scenario ran them (its compression, producer settings and value size). */
  readonly options: BenchOptions
  readonly preloadedRecords: number
  /** Records (and distinct keys) a complete copy has: the preload, or what compaction left of it. */
  readonly sourceRecords: number
  readonly sourceDistinctKeys: number
  readonly notes: readonly string[]
  readonly medians: readonly ThroughputMedians[]
  readonly ceiling: CeilingMedians | undefined
  readonly figures: readonly ThroughputFigures[]
  readonly ceilings: readonly CeilingFigures[]
  readonly failures: readonly ContenderFailure[]
  /** `--replication-ceiling`: a new follower replica copying the same records, per run. */
  readonly replication: readonly ReplicationCeilingFigures[]
}

export interface ScenarioContext extends BenchRun {
  readonly contenders: readonly Contender[]
  /** Kafka's tools for the ceiling. */
  readonly distribution: KafkaDistribution
  /** Registers an undo step that also runs on Ctrl-C (idempotent steps: they may run twice). */
  readonly defer: (cleanup: () => Promise<void>) => void
  readonly log: (line: string) => void
}

/** The one line a failure shows in the tables: the cause the mirror's log names, else the error's first line. */
export function failureReason (message: string): string {
  if (/heap out of memory|OutOfMemoryError/i.test(message)) return /OutOfMemoryError/.test(message) ? 'Java OutOfMemoryError' : 'JavaScript heap out of memory'
  const first = message.split('\n')[0] ?? message
  return first.length > 160 ? first.slice(0, 157) + '...' : first
}

/** The options of `scenario`: its compression, producer settings and value size over the flags'. */
export function scenarioOptions (options: BenchOptions, scenario: Scenario | undefined): BenchOptions {
  if (scenario === undefined) return options
  return Object.freeze({ ...options, compression: scenario.compression, producerProps: scenario.producerProps, valueBytes: scenario.valueBytes })
}

/**
 * Starts the rolling-restart scenario's two 3-node clusters (stopped, data removed, by `stop()`,
 * also on Ctrl-C) with an admin on each creating topics of replication factor 3.
 */
async function startNodeClusters (
  context: ScenarioContext
): Promise<{
  source: NodeCluster
  target: NodeCluster
  sourceAdmin: TopicAdmin<NodeCluster>
  targetAdmin: TopicAdmin<NodeCluster>
  stop: () => Promise<void>
}> {
  const clusters = benchNodeClusters()
  const sourceAdmin = new TopicAdmin(clusters.source, ROLLING_RESTART_NODES)
  const targetAdmin = new TopicAdmin(clusters.target, ROLLING_RESTART_NODES)
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await sourceAdmin.stop()
    await targetAdmin.stop()
    await clusters.source.stop()
    await clusters.target.stop()
    context.log(`stopped the ${ROLLING_RESTART_NODES}-node clusters ${clusters.source.options.name} and ${clusters.target.options.name}`)
  }
  context.defer(stop)
  context.log(
    `starting ${ROLLING_RESTART_NODES}-node clusters ${clusters.source.options.name} (${clusters.source.bootstrap}) and ${clusters.target.options.name} (${clusters.target.bootstrap})`
  )
  await clusters.source.start()
  await clusters.target.start()
  await sourceAdmin.start()
  await targetAdmin.start()
  return { source: clusters.source, target: clusters.target, sourceAdmin, targetAdmin, stop }
}

/**
 * Preloads this configuration's source topic (compacted and cleaned first, for that scenario),
 * starts the wide-area target and proxy (for that scenario), then per run measures the ceiling and
 * every contender, and removes its topics (and the wide-area cluster) again.
 */
export async function runScenario (scenario: Scenario | undefined, baseOptions: BenchOptions, context: ScenarioContext): Promise<ScenarioResult> {
  const options = scenarioOptions(baseOptions, scenario)
  const { id, log } = context
  let source: BenchCluster = context.source
  let sourceAdmin: TopicAdmin<AdminCluster> = context.sourceAdmin
  const topic = scenario === undefined ? `bench-${id}` : `bench-${id}-${scenario.name}`
  const notes: string[] = []
  const distinctKeys = scenario?.compactedSource === true ? Math.max(1, Math.floor(options.records / COMPACTED_KEY_REPEATS)) : undefined
  const shape: RecordShape = {
    keyBytes: options.keyBytes,
    valueBytes: options.valueBytes,
    ...(distinctKeys === undefined ? {} : { distinctKeys }),
    ...(scenario?.compressibleValues === true ? { compressibleValues: true } : {}),
  }
  const recordBytes = options.keyBytes + options.valueBytes
  if (scenario !== undefined) log(`scenario ${scenario.name}: ${scenario.title}`)
  let nodes: Awaited<ReturnType<typeof startNodeClusters>> | undefined
  if (scenario?.rollingRestart === true) {
    nodes = await startNodeClusters(context)
    source = nodes.source
    sourceAdmin = nodes.sourceAdmin
    notes.push(rollingRestartNote(nodeClusterPorts(), POLL_INTERVAL_MS))
  }

  // One preloaded source topic for every contender and run; the same-named target topic is
  // deleted and recreated empty before each contender (identity naming, as on the MM1 command line).
  await sourceAdmin.recreateTopic(topic, options.partitions, scenario?.compactedSource === true ? COMPACTED_TOPIC_CONFIGS : {})
  // The 3-node clusters are removed whole when the scenario ends.
  if (nodes === undefined) context.defer(async () => await sourceAdmin.deleteTopics([topic]))
  const preloadStarted = performance.now()
  await preload({ bootstrap: source.bootstrap, topic, compression: scenario?.sourceCompression ?? options.compression, lingerMs: 50 }, shape, options.records)
  const preloaded = await sourceAdmin.endOffsetTotal(topic)
  if (preloaded !== options.records) throw new Error(`preload wrote ${preloaded} records, expected ${options.records}`)
  log(`preloaded ${preloaded} records into ${topic} in ${((performance.now() - preloadStarted) / 1000).toFixed(1)} s`)
  let sourceRecords = preloaded
  let sourceDistinctKeys = preloaded
  if (scenario?.compactedSource === true) {
    const left = await waitForCompaction(source.bootstrap, topic, sourceAdmin, Math.max(180_000, options.timeoutSeconds * 1000), log)
    sourceRecords = left.records
    sourceDistinctKeys = left.distinctKeys
    notes.push(`Source topic ${Object.entries(COMPACTED_TOPIC_CONFIGS).map(([k, v]) => `${k}=${v}`).join(', ')}; ${preloaded.toLocaleString('en-US')} records preloaded with ${distinctKeys!.toLocaleString('en-US')} keys (each written ${COMPACTED_KEY_REPEATS} times); mirrored after the log cleaner had left offset gaps in all ${left.partitions} partitions: ${left.records.toLocaleString('en-US')} records (${left.distinctKeys.toLocaleString('en-US')} distinct keys) over ${preloaded.toLocaleString('en-US')} offsets. Rates, ratios and the ceiling are over the ${left.records.toLocaleString('en-US')} records left.`)
  }

  let target: BenchCluster = nodes?.target ?? context.target
  let targetAdmin: TopicAdmin<AdminCluster> = nodes?.targetAdmin ?? context.targetAdmin
  let mirrorTargetBootstrap = target.bootstrap
  let stopWideArea: (() => Promise<void>) | undefined
  if (scenario !== undefined && scenario.wideAreaDelayMs > 0) {
    const wideArea = await startWideAreaTarget(scenario.wideAreaDelayMs, join(context.workDir, `${scenario.name}-proxy`), log)
    context.defer(wideArea.stop)
    target = wideArea.cluster
    mirrorTargetBootstrap = wideArea.mirrorBootstrap
    const admin = new TopicAdmin(target)
    await admin.start()
    targetAdmin = admin
    stopWideArea = async () => { await admin.stop(); await wideArea.stop() }
    notes.push(`Wide area: a third single-node cluster is the target; every mirror and the ceiling's ProducerPerformance reach it through one latency proxy (\`bench/latency-proxy.ts\`, a Node \`net\` process on 127.0.0.1:${mirrorTargetBootstrap.split(':')[1]}) that holds every chunk ${scenario.wideAreaDelayMs} ms in each direction (${2 * scenario.wideAreaDelayMs} ms added per round trip, bandwidth not limited); the broker's WAN listener advertises the proxy's port, so clients stay behind the proxy after metadata. The benchmark's own admin and read-back use the broker's direct listener. The ceiling's ConsumerPerformance reads the source directly, as the mirrors do.`)
  }

  if (scenario?.sourceCompression !== undefined && scenario.sourceCompression !== scenario.compression) {
    notes.push(`Codec change: the source topic is preloaded ${scenario.sourceCompression === 'none' ? 'uncompressed' : `in ${scenario.sourceCompression}`}; every mirror's producer (and the ceiling's ProducerPerformance) writes ${scenario.compression}, so every mirror decodes and re-encodes every record (the sidecar's pass-through cannot forward a batch into another codec).`)
  }
  if (scenario?.messageHandler === true) {
    notes.push('Message handler: the sidecar runs with `--message.handler` set to an identity handler (`bench/identity-handler.ts`), so every record goes through its decoding path (decode, handler, re-encode). MirrorMaker 1 runs with its default handler and MirrorMaker 2 with its source task, both of which turn every consumed record into a producer record: the same work, without a flag.')
  }
  if (options.targetOutageSeconds > 0) notes.push(outageNote(options.targetOutageSeconds))
  const replication = options.replicationCeiling
    ? await measureReplicationCeiling(context, nodes?.source, {
      topic: `${topic}-replication`,
      partitions: options.partitions,
      records: preloaded,
      shape,
      compression: scenario?.sourceCompression ?? options.compression,
      runs: options.runs,
      timeoutMs: options.timeoutSeconds * 1000,
      log,
    })
    : []
  if (replication.length > 0) notes.push(replicationCeilingNote(scenario?.compactedSource === true))
  const limitBytes = sidecarThroughputLimit(options.sidecarArgs)
  if (limitBytes !== undefined) {
    notes.push(
      `Throughput limit: the sidecar ran with --throughput.limit.bytes ${limitBytes} (bytes per second of fetched source data); MirrorMaker 2 and 1 ran without a limit. The *Throughput limit* table gives the fetched rate it held.`
    )
  }
  const figures: ThroughputFigures[] = []
  const ceilings: CeilingFigures[] = []
  const failures: ContenderFailure[] = []
  const job = (tag: string, contender: string): MirrorJob => ({
    sourceBootstrap: source.bootstrap,
    targetBootstrap: mirrorTargetBootstrap,
    topic,
    streams: options.streams,
    compression: options.compression,
    producerProps: options.producerProps,
    consumerProps: options.consumerProps,
    tag,
    workDir: join(context.workDir, tag + '-' + contender),
    ...(options.commitIntervalMs === undefined ? {} : { commitIntervalMs: options.commitIntervalMs }),
    ...(nodes === undefined ? {} : { replicationFactor: ROLLING_RESTART_NODES }),
    ...(scenario?.messageHandler === true ? { sidecarArgs: ['--message.handler', IDENTITY_HANDLER] } : {}),
  })
  try {
    for (let run = 1; run <= options.runs; run++) {
      const tag = `${id}${scenario === undefined ? '' : scenario.name.replace(/-/g, '')}r${run}`
      if (options.ceiling) {
        await targetAdmin.recreateTopic(`${topic}-ceiling`, options.partitions)
        const ceiling = await runCeiling({
          distribution: context.distribution,
          sourceBootstrap: source.bootstrap,
          targetBootstrap: mirrorTargetBootstrap,
          sourceTopic: topic,
          targetTopic: `${topic}-ceiling`,
          records: sourceRecords,
          recordBytes,
          compression: options.compression,
          producerProps: options.producerProps,
          heap: options.javaHeap,
          tag,
          workDir: join(context.workDir, `${tag}-ceiling`),
          timeoutMs: options.timeoutSeconds * 1000,
        }, run)
        await targetAdmin.deleteTopics([`${topic}-ceiling`])
        ceilings.push(ceiling)
        log(`run ${run} ceiling: consumer ${Math.round(ceiling.consumerRecordsPerSecond)} records/s, producer ${Math.round(ceiling.producerRecordsPerSecond)} records/s`)
      }
      for (const contender of runOrder(context.contenders, run)) {
        try {
          const result = await runThroughput(contender, job(`${tag}${contender.name}`, contender.name), run, {
            source,
            target,
            sourceAdmin,
            targetAdmin,
            records: sourceRecords,
            distinctKeys: sourceDistinctKeys,
            recordBytes,
            partitions: options.partitions,
            timeoutMs: options.timeoutSeconds * 1000,
            verify: options.verify,
            targetOutageSeconds: options.targetOutageSeconds,
            rollingRestart: nodes !== undefined,
            log,
            ...(limitBytes === undefined || !SIDECAR_CONTENDERS.has(contender.name) ? {} : { throughputLimitBytes: limitBytes }),
          })
          figures.push(result)
          const outage =
            result.outage === undefined
              ? ''
              : `, target frozen ${result.outage.seconds.toFixed(1)} s at ${result.outage.atRecords} records, all on the target ${result.outage.resumedToDoneSeconds.toFixed(1)} s after`
          const restart =
            result.rollingRestart === undefined
              ? ''
              : `, target nodes restarted in ${result.rollingRestart.windowSeconds.toFixed(1)} s from ${result.rollingRestart.atRecords} records, longest stall ${result.rollingRestart.restartStallSeconds.toFixed(2)} s from the first stop on (${result.rollingRestart.longestStallSeconds.toFixed(2)} s over the copy) (poll gap up to ${result.rollingRestart.longestPollGapSeconds.toFixed(2)} s), ${result.rollingRestart.lastBackToDoneSeconds < 0 ? `copy done ${(-result.rollingRestart.lastBackToDoneSeconds).toFixed(1)} s before the last node was back` : `all on the target ${result.rollingRestart.lastBackToDoneSeconds.toFixed(1)} s after the last node was back`}, duplicates ${result.duplicates}, missing ${result.missing}`
          log(`run ${run} ${contender.name}: ${result.totalSeconds.toFixed(1)} s total, copy ${result.copySeconds.toFixed(1)} s, ${Math.round(result.recordsPerSecond)} records/s, ${result.cpuSeconds.toFixed(1)} CPU s, ${(result.peakRssBytes / 2 ** 20).toFixed(0)} MiB${outage}${restart}`)
        } catch (error) {
          const message = (error as Error).message ?? String(error)
          failures.push({ contender: contender.name, run, reason: failureReason(message), message })
          log(`run ${run} ${contender.name} FAILED: ${message}`)
        }
      }
    }
  } finally {
    await targetAdmin.deleteTopics([topic])
    await sourceAdmin.deleteTopics([topic])
    await stopWideArea?.()
    await nodes?.stop()
  }
  return {
    scenario,
    options,
    preloadedRecords: preloaded,
    sourceRecords,
    sourceDistinctKeys,
    notes,
    medians: context.contenders.map(contender => throughputMedians(figures, contender)),
    ceiling: ceilingMedians(ceilings),
    figures,
    ceilings,
    failures,
    replication,
  }
}

/**
 * The replication ceiling of one scenario, every run, on the 3-node cluster: the rolling-restart
 * scenario's source cluster when it runs, else one started for this and stopped (its data
 * removed) before the contenders run.
 */
async function measureReplicationCeiling (
  context: ScenarioContext,
  running: NodeCluster | undefined,
  job: Omit<ReplicationCeilingJob, 'cluster'>
): Promise<ReplicationCeilingFigures[]> {
  if (running !== undefined) return await runReplicationCeiling({ ...job, cluster: running })
  const cluster = benchNodeClusters().source
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await cluster.stop()
    context.log(`replication ceiling: stopped ${cluster.options.name}`)
  }
  context.defer(stop)
  context.log(`replication ceiling: starting ${cluster.options.name} (${cluster.bootstrap})`)
  await cluster.start()
  try {
    return await runReplicationCeiling({ ...job, cluster })
  } finally {
    await stop()
  }
}

/** One line for the results' setup notes. */
export function replicationCeilingNote (compacted: boolean): string {
  return `Replication ceiling: on a ${ROLLING_RESTART_NODES}-node KRaft cluster (\`scripts/local-kafka/node-cluster.ts\`, base port \`KAFKA_BENCH_NODES_SOURCE_PORT\`, broker defaults: one replica fetcher, \`replica.fetch.max.bytes\` 1 MiB, no throttle), a topic of the same partitions is preloaded with the same records (the same codec as this scenario's source) with every partition on node 0 alone; per run a partition reassignment adds a replica on node 1, which has none of the data, and the time from the request until every partition's new replica is in sync (and no reassignment is left) is the time the broker's own replication takes to copy them; the replica is taken away again before the next run. Polled every ${REPLICATION_POLL_INTERVAL_MS} ms. The contenders' rates are shown as a ratio of it.${compacted ? ' The follower copies the preload as written (no compaction on this topic), so it moves more records than a mirror of the compacted source does: compare the MB/s.' : ''}`
}
