import { parseArgs } from 'node:util'
import { Compressions, type Compression } from './compression.js'
import { parseScenarioList, ScenarioListError, type Scenario } from './scenarios.js'

/** How an instance is stopped in a phase of the instances mode: SIGTERM (a clean stop, then a start) or SIGKILL (kill -9 and an immediate start). */
export const RestartPhases = ['SIGTERM', 'SIGKILL'] as const
export type RestartPhase = typeof RestartPhases[number]

/** `baseline`: a second build of the sidecar (`--baseline-entry`), to compare two versions in one run. */
export const ContenderNames = ['sidecar', 'baseline', 'mm2', 'mm1', 'sidecar-eos', 'mm2-eos', 'bare', 'bare-kafkajs'] as const
export type ContenderName = typeof ContenderNames[number]

export { Compressions, type Compression } from './compression.js'

/** Everything one `npm run bench` invocation does, validated. */
export interface BenchOptions {
  readonly mode: 'throughput' | 'latency' | 'scale' | 'instances'
  /** Records preloaded into the source topic (throughput mode); default 1,000,000, 100,000 with `--quick`. */
  readonly records: number
  /** Bytes per record value; default 512. */
  readonly valueBytes: number
  /** Bytes per record key; default 16. */
  readonly keyBytes: number
  /** Source and target topic partitions; default 8. */
  readonly partitions: number
  /** Producer compression of the preload and of every mirror's producer; default none. */
  readonly compression: Compression
  /** Extra producer settings given to every contender and the ceiling producer (`--producer-prop k=v`); default none. */
  readonly producerProps: Readonly<Record<string, string>>
  /** Extra consumer settings given to every mirror's source consumer (`--consumer-prop k=v`); default none. */
  readonly consumerProps: Readonly<Record<string, string>>
  /** Consumer threads / tasks given to every contender; default 2 (this machine has 2 cores). */
  readonly streams: number
  /** Repetitions; medians are reported; default 3. */
  readonly runs: number
  /** `-Xmx` of every mirror and tool JVM; default `1g`. */
  readonly javaHeap: string
  readonly contenders: readonly ContenderName[]
  /** Also measure ProducerPerformance / ConsumerPerformance (throughput mode); default true. */
  readonly ceiling: boolean
  /** Latency mode: records per second produced into the source; default 20,000 (instances mode: 2,400). */
  readonly rateRecordsPerSecond: number
  /** Latency mode: how long the fixed-rate producer runs; default 60. */
  readonly durationSeconds: number
  /**
   * Latency mode: seconds of traffic at the rate through the source and target brokers (a
   * throwaway topic on each) before the first contender, not measured; 0 skips it; default 30.
   */
  readonly latencyWarmUpSeconds: number
  /** Latency mode: seconds at the rate on each contender's own topic, through it, before its measured phase; default 10. */
  readonly latencyTopicWarmUpSeconds: number
  /** Give up on one contender when the target has not caught up after this long; default 600. */
  readonly timeoutSeconds: number
  /** Read each target topic back after a copy to count duplicates and missing records; default true. */
  readonly verify: boolean
  /** Run the sidecar under `node --cpu-prof` and summarise the profile. */
  readonly profile: boolean
  /**
   * Where latest.md / latest.json go; default `bench/results` (with `--profile`: the run's work
   * folder, so profiled figures never replace the committed ones).
   */
  readonly resultsDir: string | undefined
  /** Node entry of the sidecar; default `dist/src/bin/mirror-sidecar.js`. */
  readonly sidecarEntry: string
  /** Node entry of another build of the sidecar, run as the `baseline` contender; none by default. */
  readonly baselineEntry: string | undefined
  /** Extra command-line arguments of the sidecar (`--sidecar-arg`, repeatable), e.g. `--metrics.partition.labels=false`; default none. */
  readonly sidecarArgs: readonly string[]
  /** Scale mode: source topics of `partitions` partitions each; default 300. */
  readonly topics: number
  /** Scale mode: records preloaded into every partition; default 50. */
  readonly recordsPerPartition: number
  /** Commit interval given to every contender (`--offset.commit.interval.ms`, `offset.flush.interval.ms`); default each tool's own, 5000 in scale mode. */
  readonly commitIntervalMs: number | undefined
  /** Scale mode: seconds measured after everything is on the target (CPU while caught up, commits); default 30. */
  readonly idleSeconds: number
  /** Scale mode: the benchmark creates the target topics before each contender starts; default false (the mirror creates them). */
  readonly precreateTarget: boolean
  /**
   * Throughput scenarios to run one after another (`--scenario`), each with its own source topic,
   * contenders and ceiling; results per scenario plus a summary. Empty (default): one throughput
   * run with the flags' compression, producer settings and record size.
   */
  readonly scenarios: readonly Scenario[]
  /** `node --max-old-space-size` of the sidecar contender only, MiB (`--memory-budget`: 128); default node's own limit. */
  readonly sidecarMaxOldSpaceMib: number | undefined
  /** Throughput mode: freeze the target broker this many seconds once half of the records are on it, in every contender run; 0 (default): no outage. */
  readonly targetOutageSeconds: number
  /**
   * Throughput mode: also time a new follower replica copying the same records on a 3-node cluster
   * (a partition reassignment), the broker's own replication as a ceiling; default false.
   */
  readonly replicationCeiling: boolean
  /** Latency mode: the target behind the delay proxy, this many ms each way (the wide-area target); 0 (default): direct. */
  readonly wideAreaDelayMs: number
  /** Instances mode (`--instances-rolling-restart`): sidecar processes in the one group; default 3. */
  readonly instances: number
  /** Instances mode: seconds from one restart's signal to the next; default 25. */
  readonly restartIntervalSeconds: number
  /** Instances mode: restarts in the SIGTERM phase and again in the SIGKILL phase; default 3. */
  readonly restartsPerPhase: number
  /** Instances mode: the phases run, in order; default SIGTERM then SIGKILL. */
  readonly restartPhases: readonly RestartPhase[]
  /** Instances mode: each instance of the sidecar contender gets its own `group.instance.id` (KIP-345); default false. */
  readonly staticMembership: boolean
}

export class UsageError extends Error {
  override readonly name = 'UsageError'
}

export const USAGE = `usage: npm run bench -- [options]
  --quick                   100,000 records (and 15 s in --latency mode) instead of the defaults
  --records N               records preloaded into the source topic (default 1000000)
  --value-bytes N           bytes per value (default 512)
  --key-bytes N             bytes per key (default 16)
  --partitions N            partitions of source and target topics (default 8)
  --compression C           none|gzip|snappy|lz4|zstd for preload and every mirror producer (default none)
  --producer-prop K=V       extra producer setting for every mirror and the ceiling producer (repeatable),
                            e.g. --producer-prop batch.size=262144 (default: each tool's own defaults)
  --consumer-prop K=V       extra source consumer setting for every mirror (repeatable), e.g.
                            --consumer-prop fetch.min.bytes=65536 (default: each tool's own defaults)
  --streams N               --num.streams / tasks.max given to every contender (default 2)
  --runs N                  repetitions, medians reported (default 3)
  --java-heap SIZE          -Xmx of each mirror / tool JVM (default 1g)
  --contenders LIST         comma list of sidecar,baseline,mm2,mm1,sidecar-eos,mm2-eos,bare,bare-kafkajs (exactly-once: ours and
                            MirrorMaker 2's; bare: a bare Node.js forwarder, latency mode only, the CPU
                            floor of a forward; bare-kafkajs: the same through kafkajs' connections);
                            default sidecar,mm2,mm1, plus baseline when --baseline-entry is given
  --no-ceiling              skip ProducerPerformance / ConsumerPerformance
  --no-verify               skip reading each target topic back (duplicates / missing not reported)
  --latency                 fixed-rate mode: end-to-end latency p50/p99/max
  --scale                   many-partition mode: --topics x --partitions, small records; time until all are on
                            the target, peak RSS, CPU while caught up, commits per interval, duplicates
  --topics N                scale mode: source topics (default 300)
  --records-per-partition N scale mode: records preloaded per partition (default 50)
  --commit-interval-ms N    commit interval of every contender (default: each tool's own; 5000 in scale mode)
  --idle-seconds N          scale mode: seconds measured once caught up (default 30)
  --precreate-target        scale mode: create the target topics before each contender (default: the mirror does)
  --rate N                  latency mode: records/s produced (default 20000)
  --duration-seconds N      latency mode: seconds of production (default 60)
  --latency-warm-up-seconds N
                            latency mode: seconds at the rate through both clusters (a throwaway topic) before
                            the first contender, not measured; 0: none (default 30)
  --latency-topic-warm-up-seconds N
                            latency mode: seconds at the rate through each contender on its own topic before
                            its measured phase, not measured; 0: none (default 10)
  --timeout-seconds N       give up on a contender after this long (default 600)
  --profile                 run the sidecar under node --cpu-prof (bench/profiles) and print top functions
  --results-dir DIR         where latest.md and latest.json go (default bench/results; with --profile the
                            run's folder under bench/work)
  --sidecar-entry FILE      sidecar entry script (default dist/src/bin/mirror-sidecar.js)
  --baseline-entry FILE     entry script of another sidecar build, run as contender "baseline" in the same
                            run (e.g. a worktree of the previous commit: ../base/dist/src/bin/mirror-sidecar.js)
  --sidecar-arg ARG         extra sidecar argument (repeatable), e.g. --sidecar-arg=--metrics.partition.labels=false;
                            with --sidecar-arg=--throughput.limit.bytes=N the results get the fetched rate
                            against the limit
  --scenario LIST           throughput scenarios, comma list or all: defaults, tuned, lz4-tuned, zstd-tuned,
                            small-records, compacted, wide-area, wide-area-100, rolling-restart,
                            none-compressible, gzip-compressible, snappy-compressible, lz4-compressible,
                            zstd-compressible, recompress-lz4, recompress-zstd, gzip-to-zstd, handler
                            (compressible: those five; decoding: recompress-lz4, recompress-zstd,
                            gzip-to-zstd, handler, compacted); each fixes compression, producer settings and value
                            size; results in scenario-<name>.md/.json and scenarios.md. rolling-restart runs
                            on two 3-node clusters at base ports KAFKA_BENCH_NODES_SOURCE_PORT (default
                            21092) and KAFKA_BENCH_NODES_TARGET_PORT (default 31092), stopped at its end
  --memory-budget           run the sidecar (only) with node --max-old-space-size=128, the issue's budget
  --sidecar-heap-mib N      run the sidecar (only) with node --max-old-space-size=N
  --target-outage-seconds N throughput mode: in every contender run, once half of the records are on the
                            target, freeze the target broker (SIGSTOP) for N s, then let it go on (default 0: none)
  --replication-ceiling     throughput mode: also time a new follower replica copying the same records on a
                            3-node cluster (partition reassignment; base port KAFKA_BENCH_NODES_SOURCE_PORT)
  --wide-area-delay-ms N    latency mode: the target behind the wide-area delay proxy, N ms each way (default 0)
  --instances-rolling-restart
                            the instances-rolling-restart scenario: --instances sidecars in one group copy a topic of
                            --partitions (default 24 here) written at --rate (default 2400 here) records/s; each
                            instance in turn is restarted with SIGTERM, then with kill -9; per restart the
                            partitions whose copy stalled > 1.5 s and the longest stall, at the end missing and
                            duplicates; --contenders sidecar,sidecar-eos (default; baseline allowed); results in
                            latest-instances.md / .json
  --instances N             instances mode: sidecar processes in the group (default 3)
  --restart-interval-seconds N
                            instances mode: seconds from one restart to the next (default 25)
  --restarts-per-phase N    instances mode: restarts with SIGTERM, then as many with kill -9 (default 3)
  --restart-phases LIST     instances mode: the phases, in order, comma list of sigterm, sigkill (default sigterm,sigkill)
  --static-membership       instances mode: each instance of the sidecar contender (only) gets its own group.instance.id
                            (KIP-345; needs MIRROR_SOURCE_CONSUMER=wire, which the sidecar contender inherits)`

function positiveInteger (flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value <= 0) throw new UsageError(`--${flag} "${raw}": expected a positive integer`)
  return value
}

function nonNegativeInteger (flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (raw.trim() === '' || !Number.isSafeInteger(value) || value < 0) throw new UsageError(`--${flag} "${raw}": expected a whole number of seconds, 0 or more`)
  return value
}

/** Parses `argv` (without node and script); throws `UsageError` naming the flag and value. */
export function parseBenchArgs (argv: readonly string[]): BenchOptions {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        quick: { type: 'boolean' },
        records: { type: 'string' },
        'value-bytes': { type: 'string' },
        'key-bytes': { type: 'string' },
        partitions: { type: 'string' },
        compression: { type: 'string' },
        streams: { type: 'string' },
        'producer-prop': { type: 'string', multiple: true },
        'consumer-prop': { type: 'string', multiple: true },
        runs: { type: 'string' },
        'java-heap': { type: 'string' },
        contenders: { type: 'string' },
        'no-ceiling': { type: 'boolean' },
        'replication-ceiling': { type: 'boolean' },
        'wide-area-delay-ms': { type: 'string' },
        'no-verify': { type: 'boolean' },
        latency: { type: 'boolean' },
        scale: { type: 'boolean' },
        topics: { type: 'string' },
        'records-per-partition': { type: 'string' },
        'commit-interval-ms': { type: 'string' },
        'idle-seconds': { type: 'string' },
        'precreate-target': { type: 'boolean' },
        rate: { type: 'string' },
        'duration-seconds': { type: 'string' },
        'latency-warm-up-seconds': { type: 'string' },
        'latency-topic-warm-up-seconds': { type: 'string' },
        'timeout-seconds': { type: 'string' },
        profile: { type: 'boolean' },
        'results-dir': { type: 'string' },
        'sidecar-entry': { type: 'string' },
        'baseline-entry': { type: 'string' },
        'sidecar-arg': { type: 'string', multiple: true },
        scenario: { type: 'string' },
        'memory-budget': { type: 'boolean' },
        'sidecar-heap-mib': { type: 'string' },
        'target-outage-seconds': { type: 'string' },
        'instances-rolling-restart': { type: 'boolean' },
        instances: { type: 'string' },
        'restart-interval-seconds': { type: 'string' },
        'restarts-per-phase': { type: 'string' },
        'restart-phases': { type: 'string' },
        'static-membership': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`)
  }
  const v = parsed.values
  if (v.help === true) throw new UsageError(USAGE)
  const quick = v.quick === true
  const compression = v.compression ?? 'none'
  if (!(Compressions as readonly string[]).includes(compression)) {
    throw new UsageError(`--compression "${compression}": expected one of ${Compressions.join(', ')}`)
  }
  const baselineEntry = v['baseline-entry']
  const instancesMode = v['instances-rolling-restart'] === true
  const defaultContenders = instancesMode ? 'sidecar,sidecar-eos' : baselineEntry === undefined ? 'sidecar,mm2,mm1' : 'sidecar,baseline,mm2,mm1'
  const contenders = (v.contenders ?? defaultContenders).split(',').map(name => name.trim()).filter(name => name !== '')
  for (const name of contenders) {
    if (!(ContenderNames as readonly string[]).includes(name)) {
      throw new UsageError(`--contenders "${v.contenders}": unknown contender "${name}", expected a comma list of ${ContenderNames.join(', ')}`)
    }
  }
  if (contenders.includes('baseline') && baselineEntry === undefined) {
    throw new UsageError(`--contenders "${v.contenders}": the baseline contender needs --baseline-entry FILE`)
  }
  const producerProps = clientProps('producer-prop', v['producer-prop'], 'batch.size=262144', {
    'bootstrap.servers': '',
    acks: '',
    'compression.type': ' (use --compression for compression.type)',
  })
  const consumerProps = clientProps('consumer-prop', v['consumer-prop'], 'fetch.min.bytes=65536', {
    'bootstrap.servers': '',
    'group.id': '',
    'auto.offset.reset': '',
  })
  const javaHeap = v['java-heap'] ?? '1g'
  if (!/^\d+[mMgG]$/.test(javaHeap)) throw new UsageError(`--java-heap "${javaHeap}": expected a size such as 512m or 1g`)
  if (v.latency === true && v.scale === true) throw new UsageError('--latency and --scale are different modes; give one of them')
  if (instancesMode) {
    const other = (['latency', 'scale', 'scenario'] as const).filter(flag => v[flag] !== undefined)
    if (other.length > 0) throw new UsageError(`--instances-rolling-restart is a mode of its own; drop ${other.map(flag => `--${flag}`).join(', ')}`)
    const notSidecar = contenders.filter(name => name !== 'sidecar' && name !== 'sidecar-eos' && name !== 'baseline')
    if (notSidecar.length > 0) {
      throw new UsageError(`--contenders "${v.contenders}": the instances-rolling-restart scenario runs sidecar instances only (sidecar, sidecar-eos, baseline); drop ${notSidecar.join(', ')}`)
    }
  } else {
    const instancesFlags = ['instances', 'restart-interval-seconds', 'restarts-per-phase', 'restart-phases', 'static-membership'] as const
    const only = instancesFlags.filter(flag => v[flag] !== undefined)
    if (only.length > 0) {
      throw new UsageError(`${only.map(flag => `--${flag}`).join(', ')}: for the instances-rolling-restart scenario; add --instances-rolling-restart`)
    }
  }
  const scale = v.scale === true
  let scenarios: Scenario[] = []
  if (v.scenario !== undefined) {
    try {
      scenarios = parseScenarioList(v.scenario)
    } catch (error) {
      if (error instanceof ScenarioListError) throw new UsageError(error.message)
      throw error
    }
    if (v.latency === true || scale) throw new UsageError(`--scenario "${v.scenario}" is a throughput mode; drop --${v.latency === true ? 'latency' : 'scale'}`)
    const fixed = (['compression', 'producer-prop', 'value-bytes'] as const).filter(flag => v[flag] !== undefined)
    if (fixed.length > 0) {
      throw new UsageError(
        `--scenario "${v.scenario}" sets compression, producer settings and value size itself; drop ${fixed.map(flag => `--${flag}`).join(', ')}`
      )
    }
  }
  if (v['memory-budget'] === true && v['sidecar-heap-mib'] !== undefined) throw new UsageError('--memory-budget is --sidecar-heap-mib 128; give one of them')
  const sidecarMaxOldSpaceMib =
    v['memory-budget'] === true ? 128 : v['sidecar-heap-mib'] === undefined ? undefined : positiveInteger('sidecar-heap-mib', v['sidecar-heap-mib'], 128)
  if (v['target-outage-seconds'] !== undefined && scenarios.some(scenario => scenario.rollingRestart === true)) {
    throw new UsageError(`--target-outage-seconds "${v['target-outage-seconds']}" freezes a single-node target; the rolling-restart scenario restarts its target's nodes instead: drop one of them`)
  }
  if (v['replication-ceiling'] === true && (v.latency === true || scale)) {
    throw new UsageError(`--replication-ceiling is for the throughput mode; drop --${v.latency === true ? 'latency' : 'scale'}`)
  }
  const bare = contenders.find(name => name === 'bare' || name === 'bare-kafkajs')
  if (bare !== undefined && v.latency !== true) {
    throw new UsageError(`--contenders "${v.contenders}": the ${bare} contender (a bare forwarder between single-node clusters) runs in the latency mode only; add --latency`)
  }
  if (v['wide-area-delay-ms'] !== undefined && v.latency !== true) {
    throw new UsageError(
      `--wide-area-delay-ms "${v['wide-area-delay-ms']}" is for the latency mode (throughput: --scenario wide-area,wide-area-100); add --latency`
    )
  }
  for (const flag of ['latency-warm-up-seconds', 'latency-topic-warm-up-seconds'] as const) {
    if (v[flag] !== undefined && v.latency !== true) throw new UsageError(`--${flag} "${v[flag]}" is for the latency mode; add --latency`)
  }
  if (v['target-outage-seconds'] !== undefined && (v.latency === true || scale)) {
    throw new UsageError(`--target-outage-seconds is for the throughput mode; drop --${v.latency === true ? 'latency' : 'scale'}`)
  }
  return Object.freeze({
    mode: v.latency === true ? 'latency' : scale ? 'scale' : instancesMode ? 'instances' : 'throughput',
    records: positiveInteger('records', v.records, quick ? 100_000 : 1_000_000),
    valueBytes: positiveInteger('value-bytes', v['value-bytes'], scale ? 100 : 512),
    keyBytes: positiveInteger('key-bytes', v['key-bytes'], 16),
    partitions: positiveInteger('partitions', v.partitions, instancesMode ? 24 : 8),
    compression: compression as Compression,
    producerProps,
    consumerProps,
    streams: positiveInteger('streams', v.streams, 2),
    runs: positiveInteger('runs', v.runs, 3),
    javaHeap,
    contenders: contenders as ContenderName[],
    ceiling: v['no-ceiling'] !== true,
    verify: v['no-verify'] !== true,
    rateRecordsPerSecond: positiveInteger('rate', v.rate, instancesMode ? 2_400 : 20_000),
    durationSeconds: positiveInteger('duration-seconds', v['duration-seconds'], quick ? 15 : 60),
    latencyWarmUpSeconds: nonNegativeInteger('latency-warm-up-seconds', v['latency-warm-up-seconds'], 30),
    latencyTopicWarmUpSeconds: nonNegativeInteger('latency-topic-warm-up-seconds', v['latency-topic-warm-up-seconds'], 10),
    timeoutSeconds: positiveInteger('timeout-seconds', v['timeout-seconds'], 600),
    profile: v.profile === true,
    resultsDir: v['results-dir'] ?? (v.profile === true ? undefined : 'bench/results'),
    sidecarEntry: v['sidecar-entry'] ?? 'dist/src/bin/mirror-sidecar.js',
    baselineEntry,
    sidecarArgs: Object.freeze([...(v['sidecar-arg'] ?? [])]),
    topics: positiveInteger('topics', v.topics, 300),
    recordsPerPartition: positiveInteger('records-per-partition', v['records-per-partition'], 50),
    commitIntervalMs:
      v['commit-interval-ms'] === undefined ? (scale ? 5_000 : undefined) : positiveInteger('commit-interval-ms', v['commit-interval-ms'], 5_000),
    idleSeconds: positiveInteger('idle-seconds', v['idle-seconds'], 30),
    precreateTarget: v['precreate-target'] === true,
    scenarios: Object.freeze(scenarios),
    sidecarMaxOldSpaceMib,
    targetOutageSeconds: positiveInteger('target-outage-seconds', v['target-outage-seconds'], 0),
    replicationCeiling: v['replication-ceiling'] === true,
    wideAreaDelayMs: positiveInteger('wide-area-delay-ms', v['wide-area-delay-ms'], 0),
    instances: positiveInteger('instances', v.instances, 3),
    restartIntervalSeconds: positiveInteger('restart-interval-seconds', v['restart-interval-seconds'], 25),
    restartsPerPhase: positiveInteger('restarts-per-phase', v['restarts-per-phase'], 3),
    restartPhases: restartPhases(v['restart-phases']),
    staticMembership: v['static-membership'] === true,
  })
}

/** `--restart-phases sigterm,sigkill` as phases in the order given, without repeats. */
function restartPhases (raw: string | undefined): RestartPhase[] {
  if (raw === undefined) return [...RestartPhases]
  const phases: RestartPhase[] = []
  for (const name of raw.split(',').map(entry => entry.trim().toUpperCase()).filter(entry => entry !== '')) {
    if (!(RestartPhases as readonly string[]).includes(name)) {
      throw new UsageError(`--restart-phases "${raw}": unknown phase "${name.toLowerCase()}", expected a comma list of sigterm, sigkill`)
    }
    if (!phases.includes(name as RestartPhase)) phases.push(name as RestartPhase)
  }
  if (phases.length === 0) throw new UsageError(`--restart-phases "${raw}": expected a comma list of sigterm, sigkill`)
  return phases
}

/** `--<flag> key=value` entries as settings; a key in `fixed` (the benchmark sets it) is refused with its hint. */
function clientProps (
  flag: string,
  entries: readonly string[] | undefined,
  example: string,
  fixed: Readonly<Record<string, string>>
): Readonly<Record<string, string>> {
  const props: Record<string, string> = {}
  for (const entry of entries ?? []) {
    const equals = entry.indexOf('=')
    if (equals <= 0) throw new UsageError(`--${flag} "${entry}": expected key=value, e.g. ${example}`)
    const key = entry.slice(0, equals).trim()
    const hint = fixed[key]
    if (hint !== undefined) throw new UsageError(`--${flag} "${entry}": ${key} is set by the benchmark itself${hint}`)
    props[key] = entry.slice(equals + 1).trim()
  }
  return Object.freeze(props)
}
