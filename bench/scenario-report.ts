import type { Environment, ThroughputMedians } from './report.js'
import type { ScenarioResult } from './scenario-run.js'
import { replicationMedians } from './replication-ceiling.js'

const SHORT_NAMES: Readonly<Record<string, string>> = { sidecar: 'sidecar', baseline: 'baseline', mm2: 'MM2', mm1: 'MM1' }

const thousands = (value: number): string => Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a'
const ratio = (value: number | undefined, base: number | undefined): string =>
  value !== undefined && base !== undefined && Number.isFinite(value) && Number.isFinite(base) && base !== 0 ? `${(value / base).toFixed(2)}x` : 'n/a'
const mib = (bytes: number | undefined): string => bytes !== undefined && Number.isFinite(bytes) ? (bytes / 2 ** 20).toFixed(0) : 'n/a'

function completed (result: ScenarioResult, name: string): ThroughputMedians | undefined {
  return result.medians.find(m => m.contender === name && m.runs > 0)
}

function rate (result: ScenarioResult, name: string): string {
  const medians = completed(result, name)
  if (medians !== undefined) return thousands(medians.recordsPerSecond)
  const failure = result.failures.find(f => f.contender === name)
  return failure === undefined ? 'not run' : `failed: ${failure.reason}`
}

/** The sidecar's outages of a scenario, one per run: `52%, 20.0 s; 1.3 s`. */
function outageCell (result: ScenarioResult): string {
  const runs = result.figures.filter(run => run.contender === 'sidecar' && run.outage !== undefined)
  if (runs.length === 0) return 'n/a'
  return runs
    .map(
      run =>
        `${((run.outage!.atRecords / run.records) * 100).toFixed(0)}%, ${run.outage!.seconds.toFixed(1)} s; ${run.outage!.resumedToDoneSeconds.toFixed(1)} s`
    )
    .join(' / ')
}

/** The sidecar's rolling restarts of a scenario, one per run: `window 41.2 s; stall 3.75 s`. */
function restartCell (result: ScenarioResult): string {
  const runs = result.figures.filter(run => run.contender === 'sidecar' && run.rollingRestart !== undefined)
  if (runs.length === 0) return 'n/a'
  return runs.map(run => `window ${run.rollingRestart!.windowSeconds.toFixed(1)} s; stall ${run.rollingRestart!.restartStallSeconds.toFixed(2)} s`).join(' / ')
}

function replicationRate (result: ScenarioResult): string {
  const medians = replicationMedians(result.replication)
  return medians === undefined ? 'not run' : thousands(medians.recordsPerSecond)
}

/** CPU seconds per GB copied of the sidecar, MirrorMaker 2 and 1, and what the brokers spent during the sidecar's copy. */
export function cpuPerGbCell (sidecar: ThroughputMedians | undefined, mm2: ThroughputMedians | undefined, mm1: ThroughputMedians | undefined): string {
  const figure = (medians: ThroughputMedians | undefined): string =>
    medians === undefined || !Number.isFinite(medians.cpuSecondsPerGb) ? 'n/a' : medians.cpuSecondsPerGb.toFixed(1)
  const brokers = sidecar === undefined || !Number.isFinite(sidecar.brokerCpuSecondsPerGb) ? 'n/a' : sidecar.brokerCpuSecondsPerGb.toFixed(1)
  return `${figure(sidecar)}, ${figure(mm2)}, ${figure(mm1)} (${brokers})`
}

/**
 * One row per scenario, every figure from the same invocation: records/s of each contender and the
 * ceiling, the sidecar's ratios against each of them, and its CPU and peak RSS against MirrorMaker 2's.
 */
export function scenarioSummaryMarkdown (env: Environment, results: readonly ScenarioResult[], files: (result: ScenarioResult) => string): string {
  const contenders = [...new Set(results.flatMap(result => result.medians.map(m => m.contender)))]
  const others = contenders.filter(name => name !== 'sidecar')
  const withOutage = results.some(result => result.figures.some(run => run.outage !== undefined))
  const withRestart = results.some(result => result.figures.some(run => run.rollingRestart !== undefined))
  const withReplication = results.some(result => result.replication.length > 0)
  const header = [
    'scenario',
    ...contenders.map(name => `${SHORT_NAMES[name] ?? name} records/s`),
    'ceiling records/s',
    ...(withReplication ? ['replication records/s'] : []),
    ...others.map(name => `sidecar / ${SHORT_NAMES[name] ?? name}`),
    'sidecar / ceiling',
    ...(withReplication ? ['sidecar / replication'] : []),
    'sidecar CPU s / MM2',
    'CPU s / GB: sidecar, MM2, MM1 (brokers with the sidecar)',
    'sidecar peak RSS MiB (/ MM2)',
    'sidecar heap',
    'dup. / missing (sidecar)',
    ...(withOutage ? ['target outage (sidecar): frozen at, for; all on target after the thaw'] : []),
    ...(withRestart ? ['rolling restart (sidecar): restart window; longest stall from the first stop on'] : []),
    'details',
  ]
  const rows = results.map(result => {
    const sidecar = completed(result, 'sidecar')
    const mm2 = completed(result, 'mm2')
    return [
      result.scenario?.title ?? 'flags',
      ...contenders.map(name => rate(result, name)),
      result.ceiling === undefined ? 'not run' : thousands(result.ceiling.recordsPerSecond),
      ...(withReplication ? [replicationRate(result)] : []),
      ...others.map(name => ratio(sidecar?.recordsPerSecond, completed(result, name)?.recordsPerSecond)),
      ratio(sidecar?.recordsPerSecond, result.ceiling?.recordsPerSecond),
      ...(withReplication ? [ratio(sidecar?.recordsPerSecond, replicationMedians(result.replication)?.recordsPerSecond)] : []),
      ratio(sidecar?.cpuSeconds, mm2?.cpuSeconds),
      cpuPerGbCell(sidecar, mm2, completed(result, 'mm1')),
      `${mib(sidecar?.peakRssBytes)} (${ratio(sidecar?.peakRssBytes, mm2?.peakRssBytes)})`,
      result.medians.find(m => m.contender === 'sidecar')?.heap ?? 'n/a',
      sidecar === undefined ? 'n/a' : `${thousands(sidecar.maxDuplicates)} / ${thousands(sidecar.maxMissing)}`,
      ...(withOutage ? [outageCell(result)] : []),
      ...(withRestart ? [restartCell(result)] : []),
      files(result),
    ]
  })
  const runs = [...new Set(results.map(result => result.options.runs))].join(', ')
  const records = [...new Set(results.map(result => result.preloadedRecords))].map(n => n.toLocaleString('en-US')).join(', ')
  return [
    '# Mirror benchmark: scenarios',
    '',
    `Taken ${env.date} at commit ${env.gitCommit} on ${env.cores} cores (${env.cpuModel}); 1-minute load average ${env.loadAverageAtStart} at the start, ${env.loadAverageAtEnd ?? 'n/a'} at the end. ${records} records preloaded per scenario, ${runs} run(s), medians; every figure of a row is from this invocation (the same brokers, the same source topic). Ratios: above 1x the sidecar is faster (records/s) or uses more (CPU, RSS).`,
    '',
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => i === 0 ? ' --- ' : ' ---: ').join('|')}|`,
    ...rows.map(row => `| ${row.join(' | ')} |`),
    '',
    'Each scenario\'s file has the full tables (startup, copy time, CPU, RSS, broker CPU, ratios against MirrorMaker 2 and the ceiling), its setup, and the JSON beside it every run.',
  ].join('\n') + '\n'
}
