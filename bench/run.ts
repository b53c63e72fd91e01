#!/usr/bin/env node
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import {
  clustersDown, clustersUp, defaultClusters, ensureKafkaDistribution, MIRROR_MAKER_1_VERSION, mirrorMaker2VersionFromEnv,
} from '../scripts/local-kafka/clusters.js'
import type { KafkaDistribution } from '../scripts/local-kafka/kafka-distribution.js'
import { kafkaVersionFromEnv } from '../scripts/local-kafka/kafka-distribution.js'
import { projectRoot } from '../scripts/local-kafka/paths.js'
import { parseBenchArgs, UsageError, USAGE, type BenchOptions, type ContenderName } from './bench-options.js'
import { CEILING_PRODUCER_PROPS } from './ceiling-run.js'
import { stopAllChildren } from './child-registry.js'
import { warmUpClusters } from './cluster-warm-up.js'
import { bareForwarderContender, mirrorMaker1Contender, mirrorMaker2Contender, sidecarContender, type Contender, type MirrorJob } from './contenders.js'
import { instancesRestartMarkdown } from './instances-restart-report.js'
import { runInstancesRestart, type InstancesRestartFigures, type InstancesRestartSettings } from './instances-restart-run.js'
import { runLatency, type LatencyFigures } from './latency-run.js'
import { renderHeapProfileSummary, renderProfileSummary } from './profile-summary.js'
import { describeEnvironment, describeP99AgainstFloor, latencyMarkdown, latencyMedians, throughputMarkdown } from './report.js'
import { ROLLING_RESTART_NODES } from './rolling-restart.js'
import { replicationMedians } from './replication-ceiling.js'
import { runScenario, type ScenarioContext, type ScenarioResult } from './scenario-run.js'
import { scenarioSummaryMarkdown } from './scenario-report.js'
import { preloadScale, runScale, scaleMarkdown, scaleTopics, type ScaleFigures } from './scale-run.js'
import { rotatedOrder } from './run-order.js'
import { thawAll } from './target-outage.js'
import { deleteOwnTopics } from './throughput-run.js'
import { TopicAdmin } from './topic-admin.js'
import { startWideAreaTarget } from './wide-area-target.js'

const log = (line: string): void => { process.stderr.write(line + '\n') }

/** Instances mode: how often both clusters' end offsets are polled, and how long a partition's copy may wait before it counts as stalled. */
const INSTANCES_POLL_INTERVAL_MS = 200
const INSTANCES_STALL_THRESHOLD_SECONDS = 1.5

/** Set when a contender run did not complete: the benchmark still reports the rest, then exits 1. */
let contenderFailed = false

/** Everything a run must undo, in reverse order, on success, failure or Ctrl-C. */
const cleanups: Array<() => Promise<void>> = []

async function cleanUp (): Promise<void> {
  await thawAll()
  await stopAllChildren()
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop()!
    try {
      await cleanup()
    } catch (error) {
      log(`cleanup: ${(error as Error).message}`)
    }
  }
}

function contendersFor (
  options: BenchOptions,
  versions: { mm1?: KafkaDistribution, mm2?: KafkaDistribution }
): Contender[] {
  const make = (name: ContenderName): Contender => {
    switch (name) {
      case 'sidecar':
        return sidecarContender({
          entry: options.sidecarEntry,
          args: options.sidecarArgs,
          ...(options.profile ? { profileDir: 'bench/profiles' } : {}),
          ...(options.sidecarMaxOldSpaceMib === undefined ? {} : { maxOldSpaceMib: options.sidecarMaxOldSpaceMib }),
        })
      case 'baseline':
        return sidecarContender({ entry: options.baselineEntry ?? '', args: options.sidecarArgs }, 'baseline')
      case 'mm2':
        return mirrorMaker2Contender(versions.mm2!, options.javaHeap)
      case 'mm1':
        return mirrorMaker1Contender(versions.mm1!, options.javaHeap)
      case 'sidecar-eos':
        return sidecarContender({ entry: options.sidecarEntry, args: options.sidecarArgs }, 'sidecar-eos')
      case 'mm2-eos':
        return mirrorMaker2Contender(versions.mm2!, options.javaHeap, true)
      case 'bare':
        return bareForwarderContender(options.partitions)
      case 'bare-kafkajs':
        return bareForwarderContender(options.partitions, 'kafkajs')
    }
  }
  return options.contenders.map(make)
}

function requireKcat (): void {
  const probe = spawnSync('kcat', ['-V'], { encoding: 'utf8' })
  if (probe.error !== undefined || probe.status !== 0) {
    throw new UsageError('kcat not found: the benchmark produces and measures with kcat; install it (Debian: apt-get install kcat)')
  }
}

async function newProfiles (dir: string, sinceMs: number): Promise<string[]> {
  try {
    const files = (await readdir(dir)).filter(file => file.endsWith('.cpuprofile') || file.endsWith('.heapprofile')).map(file => join(dir, file))
    const recent: string[] = []
    for (const file of files) if ((await stat(file)).mtimeMs >= sinceMs) recent.push(file)
    return recent.sort()
  } catch {
    return []
  }
}

async function main (options: BenchOptions): Promise<void> {
  process.chdir(projectRoot())
  const benchStartedMs = Date.now()
  const id = randomBytes(3).toString('hex')
  const workDir = resolve('bench', 'work', `${new Date().toISOString().replace(/[:.]/g, '-')}-${id}`)
  await mkdir(workDir, { recursive: true })
  log(`bench ${options.mode}: work folder ${workDir}`)

  requireKcat()
  const clusterVersion = kafkaVersionFromEnv()
  const clustersDistribution = await ensureKafkaDistribution(clusterVersion)
  // MirrorMaker 1 runs from the last release that ships it, MirrorMaker 2 from the newest release whose jars Maven Central serves.
  const mm1 = options.contenders.includes('mm1') ? await ensureKafkaDistribution(MIRROR_MAKER_1_VERSION) : undefined
  const mm2 = options.contenders.some(name => name === 'mm2' || name === 'mm2-eos') ? await ensureKafkaDistribution(mirrorMaker2VersionFromEnv()) : undefined
  const contenders = contendersFor(options, { ...(mm1 === undefined ? {} : { mm1 }), ...(mm2 === undefined ? {} : { mm2 }) })

  const { source: sourceProbe, target: targetProbe } = defaultClusters()
  const wereRunning = (await sourceProbe.status()).running && (await targetProbe.status()).running
  const { source, target } = await clustersUp()
  if (!wereRunning) cleanups.push(async () => { log('stopping the clusters this run started'); await clustersDown() })
  log(`clusters: source ${source.bootstrap}, target ${target.bootstrap} (Kafka ${clusterVersion})`)
  const sourceAdmin = new TopicAdmin(source)
  const targetAdmin = new TopicAdmin(target)
  await sourceAdmin.start()
  cleanups.push(async () => await sourceAdmin.stop())
  await targetAdmin.start()
  cleanups.push(async () => await targetAdmin.stop())
  // Every topic this benchmark creates, and every MM2 internal topic (its cluster aliases), holds `id`.
  cleanups.push(async () => {
    for (const admin of [sourceAdmin, targetAdmin]) {
      await admin.deleteTopics((await admin.listTopics()).filter(topic => topic.includes(id) || topic === 'heartbeats'))
    }
  })

  const shape = { keyBytes: options.keyBytes, valueBytes: options.valueBytes }
  const env = describeEnvironment(clusterVersion, mm1?.version ?? MIRROR_MAKER_1_VERSION, mm2?.version ?? mirrorMaker2VersionFromEnv())
  const job = (topic: string, tag: string, contender: string): MirrorJob => ({
    sourceBootstrap: source.bootstrap,
    targetBootstrap: target.bootstrap,
    topic,
    streams: options.streams,
    compression: options.compression,
    producerProps: options.producerProps,
    consumerProps: options.consumerProps,
    tag,
    workDir: join(workDir, tag + '-' + contender),
    ...(options.commitIntervalMs === undefined ? {} : { commitIntervalMs: options.commitIntervalMs }),
  })
  const resultsDir = options.resultsDir ?? workDir
  await mkdir(resultsDir, { recursive: true })

  if (options.mode === 'scale') {
    // Topic names without dots: MM2's topic list escapes dots, so the pattern stays a pattern.
    const shape = {
      prefix: `bench-scale-${id}`,
      topics: options.topics,
      partitions: options.partitions,
      recordsPerPartition: options.recordsPerPartition,
      valueBytes: options.valueBytes,
    }
    // Registered first: a preload that fails half-way must not leave 10,000 partitions behind (the next run's would exceed the broker's open files).
    cleanups.push(async () => {
      for (const admin of [sourceAdmin, targetAdmin]) for (let i = 0; i < shape.topics; i += 25) await admin.deleteTopics(scaleTopics(shape).slice(i, i + 25))
    })
    const sourceEnds = await preloadScale(source, sourceAdmin, shape, log)
    const figures: ScaleFigures[] = []
    for (let run = 1; run <= options.runs; run++) {
      for (const contender of contenders) {
        const result = await runScale(contender, job(`${shape.prefix}-[0-9]+`, `${id}r${run}${contender.name}`, contender.name), run, {
          source,
          target,
          sourceAdmin,
          targetAdmin,
          shape,
          sourceEnds,
          commitIntervalMs: options.commitIntervalMs ?? 5_000,
          idleSeconds: options.idleSeconds,
          precreateTarget: options.precreateTarget,
          timeoutMs: options.timeoutSeconds * 1000,
          log,
        })
        figures.push(result)
        log(`run ${run} ${contender.name}: ${result.totalSeconds.toFixed(1)} s, peak RSS ${(result.peakRssBytes / 2 ** 20).toFixed(0)} MiB, caught up ${result.idleCpuPercent.toFixed(1)} % CPU (last half ${result.idleTailCpuPercent.toFixed(1)} %), duplicates ${result.duplicates}, missing ${result.missing}`)
        await deleteOwnTopics(contender, job(`${shape.prefix}-[0-9]+`, `${id}r${run}${contender.name}`, contender.name), { sourceAdmin, targetAdmin })
      }
    }
    env.loadAverageAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100
    const header =
      `# Scale: ${shape.topics} topics x ${shape.partitions} partitions, ${shape.recordsPerPartition} records of ${options.keyBytes}+${shape.valueBytes} bytes per partition\n\n` +
      `Machine: ${JSON.stringify(env)}; commit interval ${options.commitIntervalMs ?? 5_000} ms; ${options.idleSeconds} s measured once caught up; ${options.precreateTarget ? 'the benchmark created the target topics' : 'the mirror creates the target topics'}.`
    const markdown = scaleMarkdown(header, figures, options.commitIntervalMs ?? 5_000)
    await writeFile(join(resultsDir, 'latest-scale.md'), markdown)
    await writeFile(join(resultsDir, 'latest-scale.json'), JSON.stringify({ kind: 'scale', environment: env, options, runs: figures }, null, 2) + '\n')
    process.stdout.write(markdown)
    log(`wrote ${join(resultsDir, 'latest-scale.md')} and latest-scale.json`)
  } else if (options.mode === 'instances') {
    const settings: InstancesRestartSettings = {
      instances: options.instances,
      partitions: options.partitions,
      ratePerSecond: options.rateRecordsPerSecond,
      restartIntervalMs: options.restartIntervalSeconds * 1000,
      restartsPerPhase: options.restartsPerPhase,
      phases: options.restartPhases,
      pollIntervalMs: INSTANCES_POLL_INTERVAL_MS,
      stallThresholdSeconds: INSTANCES_STALL_THRESHOLD_SECONDS,
      timeoutMs: options.timeoutSeconds * 1000,
      shape,
      staticMembership: options.staticMembership,
    }
    const mirror = {
      streams: options.streams,
      compression: options.compression,
      producerProps: options.producerProps,
      consumerProps: options.consumerProps,
      commitIntervalMs: options.commitIntervalMs,
    }
    const runs: InstancesRestartFigures[] = []
    const failures: Array<{ contender: string, reason: string }> = []
    for (const contender of contenders) {
      try {
        const figures = await runInstancesRestart(contender, { id, workDir, source, target, sourceAdmin, targetAdmin, settings, mirror, log })
        runs.push(figures)
        log(`${contender.name}: ${figures.written} written, ${figures.missing} missing, ${figures.duplicates} duplicates`)
      } catch (error) {
        // Reported under "Runs that did not complete"; the next delivery mode still runs.
        contenderFailed = true
        failures.push({ contender: contender.name, reason: (error as Error).message })
        log(`${contender.name}: did not complete: ${(error as Error).message}`)
      }
    }
    env.loadAverageAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100
    const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`
    const markdown = instancesRestartMarkdown(env, settings, command, runs, failures)
    await writeFile(join(resultsDir, 'latest-instances.md'), markdown)
    const json = { kind: 'instances-rolling-restart', environment: env, options, settings, runs, failures }
    await writeFile(join(resultsDir, 'latest-instances.json'), JSON.stringify(json, null, 2) + '\n')
    process.stdout.write(markdown)
    log(`wrote ${join(resultsDir, 'latest-instances.md')} and latest-instances.json`)
  } else if (options.mode === 'throughput') {
    const scenarioContext: ScenarioContext = {
      id,
      workDir,
      source,
      target,
      sourceAdmin,
      targetAdmin,
      contenders,
      distribution: clustersDistribution,
      log,
      defer: cleanup => { cleanups.push(cleanup) },
    }
    const files = (result: ScenarioResult): string => result.scenario === undefined ? 'latest' : `scenario-${result.scenario.name}`
    const write = async (result: ScenarioResult): Promise<void> => {
      env.loadAverageAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100
      const extras = {
        ...(result.scenario === undefined ? {} : { title: result.scenario.title }),
        ...(result.scenario?.rollingRestart === true
          ? { clusters: `two ${ROLLING_RESTART_NODES}-node KRaft clusters, -Xmx${process.env.KAFKA_NODE_HEAP ?? '384m'} per node` }
          : {}),
        notes: result.notes,
        failures: result.failures,
        runs: result.figures,
        replication: result.replication,
      }
      const markdown = throughputMarkdown(env, result.options, result.medians, result.ceiling, extras)
      const json = {
        kind: 'throughput',
        ...(result.scenario === undefined ? {} : { scenario: result.scenario }),
        environment: env,
        options: result.options,
        ceilingProducerProps: CEILING_PRODUCER_PROPS,
        preloadedRecords: result.preloadedRecords,
        sourceRecords: result.sourceRecords,
        sourceDistinctKeys: result.sourceDistinctKeys,
        medians: result.medians,
        ceiling: result.ceiling,
        failures: result.failures,
        runs: { contenders: result.figures, ceiling: result.ceilings, replication: result.replication },
      }
      await writeFile(join(resultsDir, `${files(result)}.md`), markdown)
      await writeFile(join(resultsDir, `${files(result)}.json`), JSON.stringify(json, null, 2) + '\n')
      process.stdout.write(markdown)
      log(`wrote ${join(resultsDir, `${files(result)}.md`)} and ${files(result)}.json`)
    }
    const results: ScenarioResult[] = []
    for (const scenario of options.scenarios.length === 0 ? [undefined] : options.scenarios) {
      const result = await runScenario(scenario, options, scenarioContext)
      results.push(result)
      if (result.failures.length > 0) contenderFailed = true
      await write(result)
    }
    if (options.scenarios.length > 0) {
      const summary = scenarioSummaryMarkdown(env, results, result => `[${files(result)}.md](${files(result)}.md)`)
      await writeFile(join(resultsDir, 'scenarios.md'), summary)
      await writeFile(
        join(resultsDir, 'scenarios.json'),
        JSON.stringify(
          {
            kind: 'scenarios',
            environment: env,
            scenarios: results.map(r => ({
              scenario: r.scenario,
              sourceRecords: r.sourceRecords,
              medians: r.medians,
              ceiling: r.ceiling,
              replication: replicationMedians(r.replication),
              failures: r.failures.map(f => ({ contender: f.contender, run: f.run, reason: f.reason })),
            })),
          },
          null,
          2
        ) + '\n'
      )
      process.stdout.write('\n' + summary)
      log(`wrote ${join(resultsDir, 'scenarios.md')} and scenarios.json`)
    }
  } else {
    const figures: LatencyFigures[] = []
    const everyone: Array<Contender | undefined> = [undefined, ...contenders]
    // Across the wide-area proxy: the mirrors and the no-mirror producer write through it, the measuring consumer reads the broker directly.
    let latencyTargetAdmin = targetAdmin
    let latencyTargetBootstrap = target.bootstrap
    let readBootstrap: string | undefined
    if (options.wideAreaDelayMs > 0) {
      const wideArea = await startWideAreaTarget(options.wideAreaDelayMs, join(workDir, 'wide-area-proxy'), log)
      cleanups.push(wideArea.stop)
      const admin = new TopicAdmin(wideArea.cluster)
      await admin.start()
      cleanups.push(async () => await admin.stop())
      latencyTargetAdmin = admin
      latencyTargetBootstrap = wideArea.mirrorBootstrap
      readBootstrap = wideArea.cluster.bootstrap
    }
    const producer = { compression: options.compression }
    if (options.latencyWarmUpSeconds > 0) {
      await warmUpClusters({
        clusters: [
          { name: 'source', admin: sourceAdmin, bootstrap: source.bootstrap },
          { name: 'target', admin: latencyTargetAdmin, bootstrap: readBootstrap ?? target.bootstrap },
        ],
        topic: `bench-lat-warm-up-${id}`,
        partitions: options.partitions,
        shape,
        ratePerSecond: options.rateRecordsPerSecond,
        durationMs: options.latencyWarmUpSeconds * 1000,
        producer,
        log,
      })
    }
    for (let run = 1; run <= options.runs; run++) {
      const order = rotatedOrder(everyone, run)
      for (const [index, contender] of order.entries()) {
        const name = contender?.name ?? 'direct'
        const tag = `${id}r${run}${name}`
        const topic = `bench-lat-${tag}`
        log(`run ${run} ${name}: latency (place ${index + 1} of ${order.length})`)
        const result = await runLatency(contender, { ...job(topic, tag, name), targetBootstrap: latencyTargetBootstrap }, { run, place: index + 1 }, {
          sourceAdmin,
          targetAdmin: latencyTargetAdmin,
          partitions: options.partitions,
          shape,
          ratePerSecond: options.rateRecordsPerSecond,
          durationMs: options.durationSeconds * 1000,
          warmUpMs: options.latencyTopicWarmUpSeconds * 1000,
          producer: { bootstrap: '', ...producer },
          log,
          ...(readBootstrap === undefined ? {} : { readBootstrap }),
        })
        figures.push(result)
        log(`run ${run} ${name}: ${result.received}/${result.produced} received, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms`)
      }
      log(`run ${run}: ${describeP99AgainstFloor(figures.filter(f => f.run === run))}`)
    }
    const medians = everyone.map(contender => latencyMedians(figures, contender ?? { name: 'direct', label: 'no mirror (producer → target)', heap: 'n/a' }))
    env.loadAverageAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100
    const markdown = latencyMarkdown(env, options, medians, figures)
    const json = { kind: 'latency', environment: env, options, medians, runs: figures }
    await writeFile(join(resultsDir, 'latest-latency.md'), markdown)
    await writeFile(join(resultsDir, 'latest-latency.json'), JSON.stringify(json, null, 2) + '\n')
    process.stdout.write(markdown)
    log(`wrote ${join(resultsDir, 'latest-latency.md')} and latest-latency.json`)
  }

  if (options.profile) {
    for (const file of await newProfiles('bench/profiles', benchStartedMs)) {
      process.stdout.write('\n' + (file.endsWith('.heapprofile') ? await renderHeapProfileSummary(file) : await renderProfileSummary(file)) + '\n')
    }
  }
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(USAGE)
  process.exit(0)
}

let options: BenchOptions
try {
  options = parseBenchArgs(process.argv.slice(2))
} catch (error) {
  console.error(error instanceof UsageError ? error.message : String(error))
  process.exit(2)
}

let signalled = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (signalled) {
      log('second signal: exiting without cleanup')
      process.exit(130)
    }
    signalled = true
    log(`${signal}: stopping mirrors and tools, deleting benchmark topics (again to force exit)`)
    void cleanUp().finally(() => process.exit(130))
  })
}

main(options).then(async () => {
  await cleanUp()
  if (contenderFailed) {
    log('some contender runs did not complete (see "Runs that did not complete" in the results)')
    process.exitCode = 1
  }
}, async (error: unknown) => {
  if (signalled) return
  log(`bench failed: ${(error as Error).message ?? String(error)}`)
  await cleanUp()
  process.exitCode = 2
})
