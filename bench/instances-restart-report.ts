import type { InstancesRestartFigures, InstancesRestartSettings } from './instances-restart-run.js'
import type { Environment } from './report.js'

const seconds = (value: number | undefined): string => value === undefined ? 'n/a' : `${value.toFixed(1)} s`
const count = (value: number): string => value.toLocaleString('en-US')
/** Partitions per instance, `n/a` for an instance whose /metrics did not answer. */
const split = (counts: readonly number[]): string => counts.map(n => Number.isNaN(n) ? 'n/a' : String(n)).join('/')

/** The result file of the instances-rolling-restart scenario: setup, one totals row per delivery mode, one row per window. */
export function instancesRestartMarkdown (
  env: Environment,
  settings: InstancesRestartSettings,
  command: string,
  runs: readonly InstancesRestartFigures[],
  failures: ReadonlyArray<{ contender: string, reason: string }>
): string {
  const threshold = settings.stallThresholdSeconds
  const lines = [
    '# Scenario instances-rolling-restart: what scale-out costs the consumer-group protocol',
    '',
    `Command: \`${command}\``,
    '',
    `Machine: ${JSON.stringify(env)}.`,
    '',
    `${settings.instances} sidecar instances (\`node dist/src/bin/mirror-sidecar.js\`, the MirrorMaker 1 command line of the benchmark) in one consumer group copy one source topic of ${settings.partitions} partitions, ` +
      `written throughout by \`kcat -P\` at ${count(settings.ratePerSecond)} keyed records/s (${settings.shape.keyBytes}-byte keys, each record its own, ${settings.shape.valueBytes}-byte values), into the same-named target topic (created by the benchmark, ${settings.partitions} partitions). ` +
      `Once the instances own every partition and no partition's copy has waited ${threshold} s, one interval of ${settings.restartIntervalMs / 1000} s is watched without a restart (*steady*). ` +
      (settings.staticMembership
        ? 'Each instance of the sidecar contender is a static member (KIP-345): instance N has its own `group.instance.id`, the same at each restart. '
        : '') +
      `Then, in this run, ${settings.phases.map(phase => `phase ${phase}`).join(', then ')} (phase SIGTERM: instance 0, 1, 2, ... in turn (${settings.restartsPerPhase} restarts) gets SIGTERM, the benchmark waits until it has exited and starts it again; phase SIGKILL: the same with kill -9 and an immediate start). One restart every ${settings.restartIntervalMs / 1000} s, counted from the signal. ` +
      "Then the writer stops, the benchmark waits until every partition's target end reaches its source end, stops the instances with SIGTERM, and reads both topics back with kcat (read_committed) to compare them key by key per partition.",
    '',
    `Stalls: both clusters' end offsets of every partition are polled every ${settings.pollIntervalMs} ms (the target's with read_committed: for exactly-once, what a read_committed reader can see). ` +
      'A partition stalls from the last poll that saw its target end grow (or reach its source end) to the next poll that saw it grow. ' +
      `A stall is charged to the window in which it starts; each restart's window opens ${(settings.pollIntervalMs * 2) / 1000} s before its signal and ends where the next one opens (the last when the target caught up after the writer stopped); a stall longer than the interval runs on into the next window but stays charged to the one it started in. ` +
      `*partitions stalled > ${threshold} s*: partitions with a stall longer than ${threshold} s starting in the window; *longest stall*: the longest stall of any partition starting there; *already stalled when the window opened*: partitions whose stall longer than ${threshold} s began in an earlier window and still ran (counted there, not here); *poll gap*: the longest time between two polls in it, the resolution of both. ` +
      '*duplicates written*: extra copies on the target (a key beyond its count on the source, in the same partition) whose offset the target end passed in that window: what the group copied again, charged to when it was written, which can be the next window when the copy was stalled past the interval. ' +
      '*all partitions owned again*: from the signal until the running instances\' `kafka_mirror_assigned_partitions` add up to all partitions, with each instance\'s count (instance 0/1/2); ' +
      'with exactly-once the group hands out `--num.producers` (default 4) buckets among the members (each instance\'s `--num.streams` consumers), so an instance may own none.',
    '',
    '## Totals',
    '',
    '| delivery | partitions per instance before the first restart | records written | on source | on target (read_committed) | missing | duplicates | partitions out of order | ' +
      'target caught up after the writer stopped | exits at the end |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ]
  for (const run of runs) {
    lines.push(
      `| ${run.label} | ${split(run.startSplit)} | ${count(run.written)} | ${count(run.sourceRecords)} | ${count(run.targetRecords)} | ${count(run.missing)} | ${count(run.duplicates)} | ${run.outOfOrderPartitions} | ${seconds(run.caughtUpSeconds)} | ${run.finalExits.join(', ')} |`
    )
  }
  lines.push(
    '',
    '## Per restart',
    '',
    `| delivery | window | instance | signal to exit | all partitions owned again | already stalled when the window opened | partitions stalled > ${threshold} s (of ${settings.partitions}) | longest stall | poll gap | duplicates written |`,
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'
  )
  for (const run of runs) {
    for (const window of run.windows) {
      const restart = run.restarts.find(r => r.label === window.label)
      const exit = restart === undefined ? '' : `${seconds(restart.exitSeconds)} (${restart.exit})`
      const shared = restart === undefined
        ? ''
        : restart.rebalancedSeconds === undefined ? 'not within the interval' : `${seconds(restart.rebalancedSeconds)} (${split(restart.split ?? [])})`
      const open = window.openStalls > 0 ? ` (${window.openStalls} not ended)` : ''
      lines.push(
        `| ${run.contender} | ${window.label} | ${restart?.instance ?? ''} | ${exit} | ${shared} | ${window.partitionsStalledBefore} | ${window.partitionsStalled}${open} | ${seconds(window.longestStallSeconds)} | ${seconds(window.longestPollGapSeconds)} | ${count(window.duplicates)} |`
      )
    }
    if (run.duplicatesOutsideWindows > 0) {
      lines.push(`| ${run.contender} | outside the windows | | | | | | | | ${count(run.duplicatesOutsideWindows)} |`)
    }
  }
  if (failures.length > 0) {
    lines.push('', '## Runs that did not complete', '')
    for (const failure of failures) lines.push(`- ${failure.contender}: ${failure.reason}`)
  }
  return lines.join('\n') + '\n'
}
