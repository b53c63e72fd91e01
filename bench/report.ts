import { execFileSync, spawnSync } from 'node:child_process'
import { cpus, loadavg, totalmem } from 'node:os'
import type { BenchOptions } from './bench-options.js'
import { CEILING_PRODUCER_PROPS, type CeilingFigures } from './ceiling-run.js'
import type { LatencyFigures } from './latency-run.js'
import { p99Ratio } from './latency-windows.js'
import type { ContenderFailure, ThroughputFigures } from './throughput-run.js'
import { median } from './median.js'
import { replicationMedians, type ReplicationCeilingFigures } from './replication-ceiling.js'
import type { SettingsCheck } from './settings-check.js'

/** Machine and software the figures were taken on. */
export interface Environment {
  readonly date: string
  readonly cpuModel: string
  readonly cores: number
  readonly memoryGiB: number
  readonly node: string
  readonly java: string
  readonly kafkaClusters: string
  readonly kafkaMirrorMaker1: string
  readonly kafkaMirrorMaker2: string
  readonly gitCommit: string
  /** 1-minute load average when the benchmark started and when it finished (other work on the machine skews figures). */
  readonly loadAverageAtStart: number
  loadAverageAtEnd?: number
}

export function describeEnvironment (kafkaClusters: string, kafkaMirrorMaker1: string, kafkaMirrorMaker2: string): Environment {
  const javaVersion = spawnSync('java', ['-version'], { encoding: 'utf8' })
  const javaLines = `${javaVersion.stderr ?? ''}${javaVersion.stdout ?? ''}`.split('\n')
  const java = (javaLines.find(line => line.includes('Runtime Environment')) ?? javaLines[0] ?? 'unknown').trim()
  let gitCommit = 'unknown'
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch { gitCommit = 'unknown (not a git checkout)' }
  return {
    date: new Date().toISOString(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30 * 10) / 10,
    node: process.version,
    java,
    kafkaClusters,
    kafkaMirrorMaker1,
    kafkaMirrorMaker2,
    gitCommit,
    loadAverageAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  }
}

export { median } from './median.js'

type Key<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T]

function medianOf<T> (rows: readonly T[], key: Key<T>): number {
  return median(rows.map(row => row[key] as number))
}

/** Medians of one contender over its runs. */
export type ThroughputMedians = Omit<ThroughputFigures, 'run' | 'contender'> & {
  contender: string
  label: string
  heap: string
  runs: number
  /** Worst run, not median: one lossy run matters. */
  maxDuplicates: number
  maxMissing: number
}

export interface CeilingMedians {
  readonly recordsPerSecond: number
  readonly mbPerSecond: number
  /** records / recordsPerSecond: the copy time no mirror can beat. */
  readonly copySeconds: number
  /** Producer + consumer tool CPU, and peak RSS of both tools added. */
  readonly cpuSeconds: number
  readonly peakRssBytes: number
  readonly limitedBy: 'producer' | 'consumer'
  readonly producer: { recordsPerSecond: number, mbPerSecond: number, cpuSeconds: number, peakRssBytes: number }
  readonly consumer: { recordsPerSecond: number, mbPerSecond: number, cpuSeconds: number, peakRssBytes: number }
}

const throughputKeys = [
  'records',
  'startupSeconds',
  'copySeconds',
  'totalSeconds',
  'recordsPerSecond',
  'steadyRecordsPerSecond',
  'mbPerSecond',
  'cpuSeconds',
  'copyCpuSeconds',
  'peakRssBytes',
  'brokerCpuSeconds',
  'cpuSecondsPerGb',
  'brokerCpuSecondsPerGb',
  'duplicates',
  'missing',
] as const

export function throughputMedians (rows: readonly ThroughputFigures[], contender: { name: string, label: string, heap: string }): ThroughputMedians {
  const mine = rows.filter(row => row.contender === contender.name)
  const medians = Object.fromEntries(throughputKeys.map(key => [key, medianOf(mine, key)])) as Record<typeof throughputKeys[number], number>
  const worst = (key: 'duplicates' | 'missing'): number =>
    mine.reduce((max, row) => (Number.isNaN(row[key]) || Number.isNaN(max) ? Number.NaN : Math.max(max, row[key])), 0)
  return {
    contender: contender.name,
    label: contender.label,
    heap: contender.heap,
    runs: mine.length,
    ...medians,
    maxDuplicates: worst('duplicates'),
    maxMissing: worst('missing'),
  }
}

export function ceilingMedians (rows: readonly CeilingFigures[]): CeilingMedians | undefined {
  if (rows.length === 0) return undefined
  const producer = {
    recordsPerSecond: medianOf(rows, 'producerRecordsPerSecond'),
    mbPerSecond: medianOf(rows, 'producerMbPerSecond'),
    cpuSeconds: medianOf(rows, 'producerCpuSeconds'),
    peakRssBytes: medianOf(rows, 'producerPeakRssBytes'),
  }
  const consumer = {
    recordsPerSecond: medianOf(rows, 'consumerRecordsPerSecond'),
    mbPerSecond: medianOf(rows, 'consumerMbPerSecond'),
    cpuSeconds: medianOf(rows, 'consumerCpuSeconds'),
    peakRssBytes: medianOf(rows, 'consumerPeakRssBytes'),
  }
  const slower = producer.recordsPerSecond <= consumer.recordsPerSecond ? producer : consumer
  return {
    recordsPerSecond: slower.recordsPerSecond,
    mbPerSecond: slower.mbPerSecond,
    copySeconds: rows[0]!.records / slower.recordsPerSecond,
    cpuSeconds: producer.cpuSeconds + consumer.cpuSeconds,
    peakRssBytes: producer.peakRssBytes + consumer.peakRssBytes,
    limitedBy: slower === producer ? 'producer' : 'consumer',
    producer,
    consumer,
  }
}

/** Medians over the runs of one contender: the per-run figures without the run number, plus its label and heap. */
export interface LatencyMedians extends Omit<LatencyFigures, 'run' | 'place' | 'worstWindows'> {
  readonly label: string
  readonly heap: string
  readonly runs: number
}

const latencyKeys = [
  'produced',
  'received',
  'duplicates',
  'p50Ms',
  'p99Ms',
  'maxMs',
  'cpuSeconds',
  'cpuSystemSeconds',
  'peakRssBytes',
  'fetchesPerSecond',
  'producesPerSecond',
  'batchesPerSecond',
] as const

export function latencyMedians (rows: readonly LatencyFigures[], contender: { name: string, label: string, heap: string }): LatencyMedians {
  const mine = rows.filter(row => row.contender === contender.name)
  const medians = Object.fromEntries(latencyKeys.map(key => [key, medianOf(mine, key)])) as Record<typeof latencyKeys[number], number>
  return { contender: contender.name, label: contender.label, heap: contender.heap, runs: mine.length, ...medians }
}

/** A mirror's p99 against the no-mirror producer's p99 of the same run (`p99Ratio`). */
export interface P99AgainstFloor {
  readonly contender: string
  readonly run: number
  readonly place: number
  readonly p99Ms: number
  readonly floorP99Ms: number
  /** `p99Ms / floorP99Ms`; NaN when the run has no floor. */
  readonly ratio: number
}

/** Every mirror run of `runs` against the `direct` run with the same run number. */
export function p99AgainstFloor (runs: readonly LatencyFigures[]): P99AgainstFloor[] {
  return runs
    .filter(row => row.contender !== 'direct')
    .map(row => {
      const floor = runs.find(other => other.contender === 'direct' && other.run === row.run)
      return {
        contender: row.contender,
        run: row.run,
        place: row.place,
        p99Ms: row.p99Ms,
        floorP99Ms: floor?.p99Ms ?? Number.NaN,
        ratio: p99Ratio(row.p99Ms, floor?.p99Ms),
      }
    })
}

/** One log line for the runs of one run number: `p99 against the floor (42 ms): sidecar 45 ms 1.07×, ...`. */
export function describeP99AgainstFloor (runFigures: readonly LatencyFigures[]): string {
  const rows = p99AgainstFloor(runFigures)
  const floor = runFigures.find(row => row.contender === 'direct')
  if (floor === undefined) return 'p99 against the floor: the no-mirror floor was not measured'
  return `p99 against the floor (${floor.p99Ms} ms): ${rows.map(r => `${r.contender} ${r.p99Ms} ms ${ratio(r.p99Ms, r.floorP99Ms)}`).join(', ')}`
}

const fixed = (value: number, digits: number): string => Number.isFinite(value) ? value.toFixed(digits) : 'n/a'
const mib = (bytes: number): string => Number.isFinite(bytes) ? (bytes / 2 ** 20).toFixed(0) : 'n/a'
const ratio = (value: number, base: number | undefined): string =>
  base !== undefined && Number.isFinite(value) && Number.isFinite(base) && base !== 0 ? `${(value / base).toFixed(2)}×` : 'n/a'
const thousands = (value: number): string => Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a'

function table (header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => i === 0 ? ' --- ' : ' ---: ').join('|')}|`,
    ...rows.map(row => `| ${row.join(' | ')} |`),
  ].join('\n')
}

/** The clusters of every mode but the rolling-restart scenario. */
const SINGLE_NODE_CLUSTERS = `two single-node KRaft clusters, -Xmx${process.env.KAFKA_HEAP ?? '512m'} each`

function environmentSection (env: Environment, options: BenchOptions, clusters = SINGLE_NODE_CLUSTERS): string {
  return [
    `Taken ${env.date} at commit ${env.gitCommit}.`,
    '',
    `- Machine: ${env.cores} cores (${env.cpuModel}), ${env.memoryGiB} GiB memory; brokers, mirrors and the load generator share it. 1-minute load average ${env.loadAverageAtStart} at the start, ${env.loadAverageAtEnd ?? 'n/a'} at the end (above ${env.cores} means other work competed for the cores).`,
    `- Versions: Node ${env.node}; ${env.java}; Kafka brokers ${env.kafkaClusters} (${clusters}); MirrorMaker 2 ${env.kafkaMirrorMaker2}; MirrorMaker 1 ${env.kafkaMirrorMaker1}.`,
    `- Parameters: ${options.mode === 'throughput' ? `${options.records.toLocaleString('en-US')} records preloaded` : `${options.rateRecordsPerSecond.toLocaleString('en-US')} records/s for ${options.durationSeconds} s`}, ${options.keyBytes}-byte keys, ${options.valueBytes}-byte values, ${options.partitions} partitions, compression ${options.compression}, ${options.streams} streams (MM1 --num.streams, MM2 tasks.max, sidecar --num.streams), ${options.runs} run(s), medians reported.`,
    `- Every mirror: consumer auto.offset.reset=earliest${Object.entries(options.consumerProps).map(([k, v]) => `, ${k}=${v}`).join('')} from a fresh group; producer acks=all, compression.type=${options.compression}${Object.entries(options.producerProps).map(([k, v]) => `, ${k}=${v}`).join('')}, other settings at each tool's defaults. JVM heaps: -Xmx${options.javaHeap} for each mirror and tool JVM.`,
    ...(options.profile ? ['- The sidecar ran under `node --cpu-prof` (--profile): its figures include the profiler\'s overhead.'] : []),
  ].join('\n')
}

/** What a scenario adds to the throughput results: its title, notes on its setup, and contender runs that failed. */
export interface ThroughputExtras {
  readonly title?: string
  readonly notes?: readonly string[]
  readonly failures?: readonly ContenderFailure[]
  /** Every contender run; its target outage, if any, is tabled. */
  readonly runs?: readonly ThroughputFigures[]
  /** The clusters, when not the two single-node ones, e.g. `two 3-node KRaft clusters, -Xmx384m per node`. */
  readonly clusters?: string
  /** `--replication-ceiling`: a new follower replica copying the same records, per run. */
  readonly replication?: readonly ReplicationCeilingFigures[]
}

export function throughputMarkdown (
  env: Environment,
  options: BenchOptions,
  contenders: readonly ThroughputMedians[],
  ceiling: CeilingMedians | undefined,
  extras: ThroughputExtras = {}
): string {
  const mm2 = contenders.find(c => c.contender === 'mm2' && c.runs > 0)
  const failures = extras.failures ?? []
  const valueRows = contenders.map(c =>
    c.runs === 0
      ? [c.label, c.heap, ...Array<string>(13).fill('failed')]
      : [
          c.label,
          c.heap,
          fixed(c.totalSeconds, 1),
          fixed(c.startupSeconds, 1),
          fixed(c.copySeconds, 1),
          thousands(c.recordsPerSecond),
          thousands(c.steadyRecordsPerSecond),
          fixed(c.mbPerSecond, 1),
          fixed(c.cpuSeconds, 1),
          fixed(c.copyCpuSeconds, 1),
          mib(c.peakRssBytes),
          fixed(c.brokerCpuSeconds, 1),
          fixed(c.cpuSecondsPerGb, 1),
          fixed(c.brokerCpuSecondsPerGb, 1),
          `${thousands(c.maxDuplicates)} / ${thousands(c.maxMissing)}`,
        ]
  )
  if (ceiling !== undefined) {
    valueRows.push([
      'ceiling (slower of the two tools)',
      `-Xmx${options.javaHeap}`,
      'n/a',
      'n/a',
      fixed(ceiling.copySeconds, 1),
      thousands(ceiling.recordsPerSecond),
      'n/a',
      fixed(ceiling.mbPerSecond, 1),
      fixed(ceiling.cpuSeconds, 1),
      'n/a',
      mib(ceiling.peakRssBytes),
      'n/a',
      'n/a',
      'n/a',
      'n/a',
    ])
  }
  const ratioRows = (
    base: { copySeconds: number, recordsPerSecond: number, mbPerSecond: number, cpuSeconds: number, copyCpuSeconds?: number, peakRssBytes: number } | undefined
  ): string[][] =>
    contenders.map(c => [
      c.label,
      ratio(c.copySeconds, base?.copySeconds),
      ratio(c.recordsPerSecond, base?.recordsPerSecond),
      ratio(c.mbPerSecond, base?.mbPerSecond),
      ratio(c.cpuSeconds, base?.cpuSeconds),
      ratio(c.copyCpuSeconds, base?.copyCpuSeconds),
      ratio(c.peakRssBytes, base?.peakRssBytes),
    ])
  const ratioHeader = ['contender', 'copy time', 'records/s', 'MB/s', 'CPU s', 'CPU s (copy phase)', 'peak RSS']
  const sections = [
    extras.title === undefined ? '# Mirror benchmark: throughput' : `# Mirror benchmark: throughput, ${extras.title}`,
    '',
    environmentSection(env, options, extras.clusters),
    ...(extras.notes ?? []).map(note => `- ${note}`),
    '',
    '## Medians',
    '',
    table(
      [
        'contender',
        'heap',
        'start → all on target (s)',
        'startup (s)',
        'copy (s)',
        'records/s',
        'records/s 10–90%',
        'MB/s',
        'CPU s (mirror)',
        'CPU s (copy phase)',
        'peak RSS (MiB)',
        'CPU s (brokers)',
        'CPU s / GB (mirror)',
        'CPU s / GB (brokers)',
        'duplicates / missing (worst run)',
      ],
      valueRows
    ),
    '',
    '## Ratio against MirrorMaker 2',
    '',
    mm2 === undefined ? 'MirrorMaker 2 was not run.' : table(ratioHeader, ratioRows(mm2)),
    '',
    '## Ratio against the ceiling',
    '',
    ceiling === undefined ? 'The ceiling was not measured (--no-ceiling).' : table(ratioHeader, ratioRows(ceiling)),
    ...exactlyOnceSection(contenders, ratioHeader),
  ]
  const outages = (extras.runs ?? []).filter(run => run.outage !== undefined)
  if (outages.length > 0) {
    const label = (name: string): string => contenders.find(c => c.contender === name)?.label ?? name
    sections.push(
      '',
      '## Target outage',
      '',
      table(
        [
          'contender',
          'run',
          'target frozen at (records on it)',
          'frozen (s)',
          'frozen after start (s)',
          'all on target after the thaw (s)',
          'start → all on target (s)',
          'peak RSS (MiB)',
          'duplicates / missing',
        ],
        outages.map(run => {
          const o = run.outage!
          return [
            label(run.contender),
            String(run.run),
            `${thousands(o.atRecords)} (${((o.atRecords / run.records) * 100).toFixed(0)}%)`,
            fixed(o.seconds, 1),
            fixed(o.frozenAtSeconds, 1),
            fixed(o.resumedToDoneSeconds, 1),
            fixed(run.totalSeconds, 1),
            mib(run.peakRssBytes),
            `${thousands(run.duplicates)} / ${thousands(run.missing)}`,
          ]
        })
      ),
      '',
      'Every run listed here completed: every record on the target after the outage. A run that did not is under *Runs that did not complete*.'
    )
  }
  sections.push(...rollingRestartSection(extras.runs ?? [], name => contenders.find(c => c.contender === name)?.label ?? name))
  sections.push(...replicationCeilingSection(extras.replication ?? [], contenders))
  sections.push(...throughputLimitSection(extras.runs ?? [], name => contenders.find(c => c.contender === name)?.label ?? name))
  sections.push(...settingsSection(extras.runs ?? [], name => contenders.find(c => c.contender === name)?.label ?? name))
  if (failures.length > 0) {
    sections.push(
      '',
      '## Runs that did not complete',
      '',
      table(
        ['contender', 'run', 'reason'],
        failures.map(f => [f.contender, String(f.run), f.reason])
      ),
      '',
      "Medians above are over the runs that completed; the whole error with the mirror's log tail is in the JSON file."
    )
  }
  if (ceiling !== undefined) {
    const producerSettings = Object.entries({ ...CEILING_PRODUCER_PROPS, 'compression.type': options.compression, ...options.producerProps })
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')
    sections.push(
      '',
      `Ceiling: ConsumerPerformance on the source ${thousands(ceiling.consumer.recordsPerSecond)} records/s (${fixed(ceiling.consumer.mbPerSecond, 1)} MB/s, ${fixed(ceiling.consumer.cpuSeconds, 1)} CPU s, ${mib(ceiling.consumer.peakRssBytes)} MiB); ProducerPerformance (${producerSettings}) into the target ${thousands(ceiling.producer.recordsPerSecond)} records/s (${fixed(ceiling.producer.mbPerSecond, 1)} MB/s, ${fixed(ceiling.producer.cpuSeconds, 1)} CPU s, ${mib(ceiling.producer.peakRssBytes)} MiB): limited by the ${ceiling.limitedBy}. Its CPU and RSS are the two tools added.`
    )
  }
  sections.push('', READING_THROUGHPUT)
  return sections.join('\n') + '\n'
}

/**
 * Per contender, the settings the bench passed that its printout showed in effect, and those it
 * does not print (unchecked, with why). From each contender's first run that has a check; a
 * setting that did not take effect failed its run (under *Runs that did not complete*).
 */
export function settingsSection (
  runs: ReadonlyArray<{ readonly contender: string, readonly settings?: SettingsCheck }>,
  label: (contender: string) => string
): string[] {
  const firsts = [...new Map(runs.filter(run => run.settings !== undefined).reverse().map(run => [run.contender, run.settings!])).entries()].reverse()
  if (firsts.length === 0) return []
  const rows = firsts.map(([contender, check]) => {
    const checked = check.outcomes.filter(o => o.status === 'ok').map(o => `${o.key}=${o.passed}`)
    const unchecked = check.outcomes.filter(o => o.status === 'unchecked').map(o => `${o.key}=${o.passed} (${o.resolved})`)
    return [label(contender), String(checked.length), checked.join(', ') || 'none', unchecked.join('; ') || 'none']
  })
  return [
    '',
    '## Settings checked',
    '',
    table(['contender', 'checked', 'passed and shown in effect', 'unchecked (not printed by the tool)'], rows),
    '',
    "After every contender run the benchmark compares each setting it passed with the value the contender printed as resolved: the config blocks of MirrorMaker 1's and 2's logs (`ProducerConfig`, `ConsumerConfig`, `DistributedConfig`, `MirrorSourceConfig`, ... `values:`), the sidecar's `--print-config` with the same arguments. A setting that did not take effect fails the run with one line naming contender, key, passed and resolved value.",
  ]
}

/** The runs with a rolling restart of the target: when, how long, the longest stall and the catch-up. */
export function rollingRestartSection (runs: readonly ThroughputFigures[], label: (contender: string) => string): string[] {
  const restarted = runs.filter(run => run.rollingRestart !== undefined)
  if (restarted.length === 0) return []
  return [
    '',
    '## Rolling restart of the target',
    '',
    table(
      [
        'contender',
        'run',
        'first stop at (records on target)',
        'restart window (s)',
        'longest stall from the first stop on (s)',
        'longest stall of the copy (s)',
        'it began after the first stop (s)',
        'longest poll gap (s)',
        'all on target after the last node was back (s)',
        'records/s',
        'duplicates / missing',
      ],
      restarted.map(run => {
        const r = run.rollingRestart!
        return [
          label(run.contender),
          String(run.run),
          `${thousands(r.atRecords)} (${((r.atRecords / run.records) * 100).toFixed(0)}%)`,
          fixed(r.windowSeconds, 1),
          fixed(r.restartStallSeconds, 2),
          fixed(r.longestStallSeconds, 2),
          fixed(r.longestStallFromRestartSeconds, 1),
          fixed(r.longestPollGapSeconds, 2),
          r.lastBackToDoneSeconds < 0 ? `done ${fixed(-r.lastBackToDoneSeconds, 1)} s before` : fixed(r.lastBackToDoneSeconds, 1),
          thousands(run.recordsPerSecond),
          `${thousands(run.duplicates)} / ${thousands(run.missing)}`,
        ]
      })
    ),
    '',
    "*Restart window*: from the SIGTERM to the first node until the last node was back with every replica of the cluster in sync. *Longest stall*: the longest time between two polls of the target's end offsets that saw the count grow, from the poll that started the restart on, and over the whole copy phase (with when it began: negative, before the first stop); each is accurate to the *longest poll gap* of the run (a stall of S seconds lasted between S minus that gap and S). Every run listed here completed; one that did not is under *Runs that did not complete*.",
  ]
}

/** `--replication-ceiling`: each run's replica copy, and every contender's median records/s as a ratio of the median replica's. */
export function replicationCeilingSection (runs: readonly ReplicationCeilingFigures[], contenders: readonly ThroughputMedians[]): string[] {
  const medians = replicationMedians(runs)
  if (medians === undefined) return []
  return [
    '',
    '## Replication ceiling',
    '',
    table(
      ['run', 'records', 'new replica in sync after (s)', 'records/s', 'MB/s', 'CPU s / GB (leader + new follower)', 'longest poll gap (s)'],
      runs.map(run => [
        String(run.run),
        thousands(run.records),
        fixed(run.seconds, 2),
        thousands(run.recordsPerSecond),
        fixed(run.mbPerSecond, 1),
        fixed(run.brokerCpuSecondsPerGb, 1),
        fixed(run.longestPollGapSeconds, 2),
      ])
    ),
    '',
    table(
      ['contender', 'records/s', 'MB/s', 'records/s / replication', 'MB/s / replication'],
      contenders
        .filter(c => c.runs > 0)
        .map(c => [
          c.label,
          thousands(c.recordsPerSecond),
          fixed(c.mbPerSecond, 1),
          ratio(c.recordsPerSecond, medians.recordsPerSecond),
          ratio(c.mbPerSecond, medians.mbPerSecond),
        ])
    ),
    '',
    `Median of ${medians.runs} run(s): ${thousands(medians.recordsPerSecond)} records/s, ${fixed(medians.mbPerSecond, 1)} MB/s. A ratio of 1× copies as fast as the broker's own follower fetching from its leader.`,
  ]
}

/** The runs with `--throughput.limit.bytes`: the limit, the fetched rate it held, and how long fetching waited. */
export function throughputLimitSection (runs: readonly ThroughputFigures[], label: (contender: string) => string): string[] {
  const limited = runs.filter(run => run.throughputLimit !== undefined)
  if (limited.length === 0) return []
  return [
    '',
    '## Throughput limit',
    '',
    table(
      ['contender', 'run', 'limit (bytes/s)', 'fetched bytes/s, 10–90%', 'fetched / limit', 'throttled (s)', 'copy (s)', 'records/s'],
      limited.map(run => {
        const l = run.throughputLimit!
        return [
          label(run.contender),
          String(run.run),
          thousands(l.limitBytesPerSecond),
          thousands(l.fetchedBytesPerSecond),
          ratio(l.fetchedBytesPerSecond, l.limitBytesPerSecond),
          fixed(l.throttledSeconds, 1),
          fixed(run.copySeconds, 1),
          thousands(run.recordsPerSecond),
        ]
      })
    ),
    '',
    "*Fetched bytes/s*: the sidecar's `kafka_mirror_consumed_bytes_total` (what the limit counts: record batches as fetched in pass-through, keys, values and headers on the deep path) read from its /metrics at the polls that saw 10 % and 90 % of the records on the target, over the time between them; the one-second burst at the start is outside that window. *Throttled*: `kafka_mirror_throttled_seconds_total` when every record was there.",
  ]
}

/** With exactly-once contenders: ours against our at-least-once run and against MirrorMaker 2 exactly-once, same run. */
function exactlyOnceSection (contenders: readonly ThroughputMedians[], header: readonly string[]): string[] {
  const eos = contenders.find(c => c.contender === 'sidecar-eos' && c.runs > 0)
  if (eos === undefined) return []
  const row = (label: string, base: ThroughputMedians | undefined): string[] =>
    base === undefined || base.runs === 0
      ? [label, ...Array<string>(header.length - 1).fill('not run')]
      : [
          label,
          ratio(eos.copySeconds, base.copySeconds),
          ratio(eos.recordsPerSecond, base.recordsPerSecond),
          ratio(eos.mbPerSecond, base.mbPerSecond),
          ratio(eos.cpuSeconds, base.cpuSeconds),
          ratio(eos.copyCpuSeconds, base.copyCpuSeconds),
          ratio(eos.peakRssBytes, base.peakRssBytes),
        ]
  return [
    '',
    '## Exactly-once',
    '',
    'Exactly-once contenders count as done when a read_committed reader (kcat) sees every record; the time is when the target\'s stable end offsets first stood there. Duplicates / missing are read with read_committed too.',
    '',
    table(['mirror-sidecar --exactly.once true against', ...header.slice(1)], [
      row('mirror-sidecar at-least-once (the cost of exactly-once)', contenders.find(c => c.contender === 'sidecar')),
      row('MirrorMaker 2 exactly-once', contenders.find(c => c.contender === 'mm2-eos')),
    ]),
  ]
}

/* eslint-disable @stylistic/max-len -- a Markdown paragraph of the report is one line of the template, as the report prints it */
const READING_THROUGHPUT = `## How to read this

- *start → all on target*: from spawning the mirror process until the target topic's end offsets add up to the preloaded count (polled every 100 ms). *startup*: spawn until the first record shows on the target (JVM or Node start, group join, first fetch). *copy*: the rest; records/s and MB/s (key + value bytes, MiB = 2^20) are over the copy phase, like the figures Kafka's tools print. *records/s 10–90%*: between the polls that saw 10% and 90% of the records on the target, the steady rate without start-up and tail effects.
- *CPU s (mirror)*: utime + stime of the mirror process (all threads) from /proc, from spawn until done; *copy phase* the part after the first record landed. *peak RSS*: VmHWM. *CPU s (brokers)*: both brokers while the contender ran. *CPU s / GB*: those CPU seconds (mirror: spawn until done; brokers: the same span) per GB copied, 10^9 bytes of keys + values (1,000,000 x (16 + 512) B is 0.528 GB). *duplicates / missing*: after the mirror stopped the target topic is read back with kcat; each preloaded record has its own key, so extra copies of a key are duplicates and absent keys are missing records (worst run shown).
- The ceiling is the slower of Kafka's ConsumerPerformance reading the source topic and ProducerPerformance writing the same number of records of the same size (key + value bytes) into an empty target topic; each figure is as the tool reports it (excluding JVM start and group join). No mirror can beat it on this machine.
- Ratios: time, CPU and RSS below 1× are better; records/s and MB/s above 1× are better.`
/* eslint-enable @stylistic/max-len */

/**
 * Per mirror and run: its p99, the floor's p99 of the same run, the ratio and its place in the
 * run's order; the last column the median ratio over the runs.
 */
function floorSection (runs: readonly LatencyFigures[], label: (contender: string) => string): string[] {
  const rows = p99AgainstFloor(runs)
  if (rows.length === 0 || rows.every(row => !Number.isFinite(row.floorP99Ms))) return []
  const runNumbers = [...new Set(runs.map(row => row.run))].sort((a, b) => a - b)
  const contenders = [...new Set(rows.map(row => row.contender))]
  return [
    '',
    '## p99 against the floor of the same run',
    '',
    table(
      ['contender', ...runNumbers.map(run => `run ${run}: p99 ms / floor ms (place)`), 'median of p99 / floor'],
      contenders.map(contender => {
        const mine = rows.filter(row => row.contender === contender)
        return [
          label(contender),
          ...runNumbers.map(run => {
            const row = mine.find(r => r.run === run)
            return row === undefined ? 'n/a' : `${fixed(row.p99Ms, 0)} / ${fixed(row.floorP99Ms, 0)} = ${ratio(row.p99Ms, row.floorP99Ms)} (${row.place})`
          }),
          Number.isFinite(median(mine.map(row => row.ratio))) ? `${median(mine.map(row => row.ratio)).toFixed(2)}×` : 'n/a',
        ]
      })
    ),
  ]
}

export function latencyMarkdown (env: Environment, options: BenchOptions, contenders: readonly LatencyMedians[], runs: readonly LatencyFigures[] = []): string {
  const mm2 = contenders.find(c => c.contender === 'mm2')
  const direct = contenders.find(c => c.contender === 'direct')
  const rows = contenders.map(c => [
    c.label,
    c.heap,
    thousands(c.produced),
    thousands(c.received),
    thousands(c.duplicates),
    fixed(c.p50Ms, 0),
    fixed(c.p99Ms, 0),
    fixed(c.maxMs, 0),
    Number.isFinite(c.cpuSystemSeconds) ? `${fixed(c.cpuSeconds, 1)} (${fixed(c.cpuSystemSeconds, 1)})` : fixed(c.cpuSeconds, 1),
    mib(c.peakRssBytes),
  ])
  const requestRows = contenders
    .filter(c => Number.isFinite(c.fetchesPerSecond))
    .map(c => [
      c.label,
      thousands(Math.round(c.fetchesPerSecond)),
      thousands(Math.round(c.producesPerSecond)),
      thousands(Math.round(c.batchesPerSecond)),
      fixed(c.batchesPerSecond / c.fetchesPerSecond, 2),
      fixed(c.batchesPerSecond / c.producesPerSecond, 2),
      fixed((c.cpuSeconds * 1000 * 1000) / (options.durationSeconds * (c.fetchesPerSecond + c.producesPerSecond)), 0),
    ])
  const ratioRows = (base: LatencyMedians | undefined): string[][] =>
    contenders
      .filter(c => c.contender !== 'direct')
      .map(c => [
        c.label,
        ratio(c.p50Ms, base?.p50Ms),
        ratio(c.p99Ms, base?.p99Ms),
        ratio(c.maxMs, base?.maxMs),
        ratio(c.cpuSeconds, base?.cpuSeconds),
        ratio(c.peakRssBytes, base?.peakRssBytes),
      ])
  return (
    [
      '# Mirror benchmark: end-to-end latency at a fixed rate',
      '',
      environmentSection(env, options),
      '',
      '## Medians',
      '',
      table(
        ['contender', 'heap', 'produced', 'received', 'duplicates', 'p50 (ms)', 'p99 (ms)', 'max (ms)', 'CPU s (mirror; in the kernel)', 'peak RSS (MiB)'],
        rows
      ),
      ...(requestRows.length === 0
        ? []
        : [
            '',
            '## Requests of the sidecar',
            '',
            table(
              ['contender', 'fetches/s', 'produce requests/s', 'source batches/s', 'batches per fetch', 'batches per produce request', 'CPU µs per request'],
              requestRows
            ),
          ]),
      '',
      '## Ratio against MirrorMaker 2',
      '',
      mm2 === undefined ? 'MirrorMaker 2 was not run.' : table(['contender', 'p50', 'p99', 'max', 'CPU s', 'peak RSS'], ratioRows(mm2)),
      '',
      '## Ratio against the floor (no mirror)',
      '',
      direct === undefined
        ? 'The no-mirror floor was not measured.'
        : table(
          ['contender', 'p50', 'p99', 'max', 'CPU s', 'peak RSS'],
          ratioRows(direct).map(row => [...row.slice(0, 4), 'n/a', 'n/a'])
        ),
      ...floorSection(runs, name => contenders.find(c => c.contender === name)?.label ?? name),
      ...settingsSection(runs, name => contenders.find(c => c.contender === name)?.label ?? name),
      '',
      /* eslint-disable @stylistic/max-len -- a Markdown paragraph of the report is one line of the template, as the report prints it */
      `## How to read this

- Before the first contender, ${options.latencyWarmUpSeconds} s of ${options.rateRecordsPerSecond.toLocaleString('en-US')} records/s go through the source and the target broker at once (a throwaway topic on each, produced and consumed, not measured), so the first contender meets brokers as warm as the last one does.
- A \`kcat\` producer writes ${options.rateRecordsPerSecond.toLocaleString('en-US')} keyed records/s into a fresh source topic (linger.ms=5, acks=all) after a warm-up batch has gone through the mirror: ${options.latencyTopicWarmUpSeconds} s at the rate not measured, then ${options.durationSeconds} s measured, one producer without a gap; one \`kcat\` consumer on the target topic (the same for every contender) reports each record's timestamp, and latency = time the record reached the benchmark minus the record's source CreateTime (same clock). p50/p99/max over every record of the measured phase.
- The order of the contenders (the no-mirror producer included) rotates one place per run; *p99 against the floor of the same run* gives each mirror's p99 over the no-mirror p99 of its own run, with its place in that run's order.
- *no mirror*: the producer writes straight into the target topic: the latency of producer + broker + consumer alone, the floor any mirror adds to.${
        options.wideAreaDelayMs > 0
          ? `
- Wide area: the target is a third single-node cluster behind the latency proxy (\`bench/latency-proxy.ts\`), which holds every chunk ${options.wideAreaDelayMs} ms in each direction (${2 * options.wideAreaDelayMs} ms per round trip, bandwidth not limited); every mirror and the no-mirror producer write through it, the mirrors read the source directly, and the measuring consumer reads the target broker directly. So the floor pays the delay on the producer's acks=all round trips as a mirror does on its produce requests.`
          : ''
      }
- *CPU s*: the mirror process during the measured phase (user and kernel time of all its threads; in brackets the kernel's part); *peak RSS*: VmHWM over the whole run.
- *Requests of the sidecar*: from its metrics (\`kafka_mirror_fetch_requests_total\`, \`kafka_mirror_produce_request_duration_seconds_count\`, \`kafka_mirror_batches_total\`) at the start and the end of the measured phase; *CPU µs per request*: its CPU over the measured phase divided by its fetch and produce requests.`,
      /* eslint-enable @stylistic/max-len */
    ].join('\n') + '\n'
  )
}
