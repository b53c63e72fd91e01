import { spawn, spawnSync } from 'node:child_process'
import { getHeapStatistics } from 'node:v8'
import { closeSync, existsSync, openSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { KafkaDistribution } from '../scripts/local-kafka/kafka-distribution.js'
import { spawnJavaMain } from '../scripts/local-kafka/java-main.js'
import type { Compression, ContenderName } from './bench-options.js'
import { track, type TrackedChild } from './child-registry.js'
import { mirrorMaker1Expectations, mirrorMaker2Expectations, sidecarExpectations, type WrittenProperties } from './contender-settings.js'
import { parseConfigBlocks, printConfigBlock } from './resolved-config.js'
import { checkSettings, type SettingsCheck } from './settings-check.js'

/** What one contender is told to do: copy `topic` from source to the same-named target topic. */
export interface MirrorJob {
  readonly sourceBootstrap: string
  readonly targetBootstrap: string
  readonly topic: string
  readonly streams: number
  readonly compression: Compression
  /** Extra producer settings (`--producer-prop`), applied after acks and compression. */
  readonly producerProps: Readonly<Record<string, string>>
  /** Extra source consumer settings (`--consumer-prop`), applied after the group and offset reset; default none. */
  readonly consumerProps?: Readonly<Record<string, string>>
  /** Unique per contender run: the consumer group and MM2 cluster-alias suffix. */
  readonly tag: string
  /** Folder (created) for this run's properties files and logs. */
  readonly workDir: string
  /** Source commit interval (MM1 and sidecar `--offset.commit.interval.ms`, MM2 `offset.flush.interval.ms`); default each tool's own. */
  readonly commitIntervalMs?: number
  /** Replication factor of the topics a contender creates for itself (MirrorMaker 2's internal topics); default 1, the single-node clusters. */
  readonly replicationFactor?: number
  /** Arguments only the sidecar gets, after `--sidecar-arg`s (a scenario's message handler); default none. */
  readonly sidecarArgs?: readonly string[]
}

/** The consumer group a sidecar or MirrorMaker 1 run commits in on the source (MM2 keeps its position in Connect). */
export function mirrorGroupId (job: Pick<MirrorJob, 'tag'>): string {
  return `bench-${job.tag}`
}

function commitIntervalArgs (job: MirrorJob): string[] {
  return job.commitIntervalMs === undefined ? [] : ['--offset.commit.interval.ms', String(job.commitIntervalMs)]
}

/** A mirror under test. `start` returns the process whose pid is the mirror itself (JVM or node). */
export interface Contender {
  readonly name: ContenderName
  readonly label: string
  /** Heap setting stated in the results. */
  readonly heap: string
  /** The mirror's log in the run's work folder (`sidecar.log`, `mm1.log`, `mm2.log`). */
  readonly logFile: string
  readonly start: (job: MirrorJob) => Promise<TrackedChild>
  /** Writes in transactions on the target: what it copied counts once committed (read_committed). */
  readonly exactlyOnce?: boolean
  /**
   * After a run (the mirror stopped): every setting the bench passed it against what it printed
   * as resolved (its log's config blocks, or the sidecar's `--print-config` with the same arguments).
   */
  readonly checkSettings: (job: MirrorJob) => Promise<SettingsCheck>
  /** Topics the contender created for itself, to delete after the run: [source topics, target topics]. */
  readonly ownTopics: (job: MirrorJob, listed: { source: readonly string[], target: readonly string[] }) => { source: string[], target: string[] }
}

function properties (entries: WrittenProperties): string {
  return Object.entries(entries).map(([key, value]) => `${key}=${value}`).join('\n') + '\n'
}

/** The consumer and producer files of the MirrorMaker 1 command line (MirrorMaker 1 and the sidecar), as written. */
function mm1StyleProperties (job: MirrorJob): { consumer: WrittenProperties, producer: WrittenProperties } {
  return {
    consumer: { 'bootstrap.servers': job.sourceBootstrap, 'group.id': mirrorGroupId(job), 'auto.offset.reset': 'earliest', ...job.consumerProps },
    producer: { 'bootstrap.servers': job.targetBootstrap, acks: 'all', 'compression.type': job.compression, ...job.producerProps },
  }
}

async function mm1StyleConfigs (job: MirrorJob): Promise<{ consumer: string, producer: string }> {
  await mkdir(job.workDir, { recursive: true })
  const consumer = join(job.workDir, 'source.properties')
  const producer = join(job.workDir, 'target.properties')
  const written = mm1StyleProperties(job)
  await writeFile(consumer, properties(written.consumer))
  await writeFile(producer, properties(written.producer))
  return { consumer, producer }
}

/** Every `<Name>Config values:` block of a contender's log in its work folder. */
async function logBlocks (file: string): Promise<ReturnType<typeof parseConfigBlocks>> {
  try {
    return parseConfigBlocks(await readFile(file, 'utf8'))
  } catch (error) {
    // A missing log leaves no block: every setting read from it is then a mismatch naming the file.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

const noOwnTopics = (): { source: string[], target: string[] } => ({ source: [], target: [] })

export interface SidecarSettings {
  /** Entry script, e.g. `dist/src/bin/mirror-sidecar.js`. */
  readonly entry: string
  /** When set, run under `node --cpu-prof --heap-prof` writing profiles into this folder (the heap profile: what was still live at exit, sampled). */
  readonly profileDir?: string
  /** Extra arguments after the benchmark's own; default none. */
  readonly args?: readonly string[]
  /** `node --max-old-space-size` in MiB (the memory budget check); default node's own limit. */
  readonly maxOldSpaceMib?: number
}

/**
 * This project's sidecar, started with the MirrorMaker 1 command line (identity topic naming);
 * as `baseline`, another build of it (`--baseline-entry`).
 */
export function sidecarContender (settings: SidecarSettings, name: 'sidecar' | 'baseline' | 'sidecar-eos' = 'sidecar'): Contender {
  const exactlyOnce = name === 'sidecar-eos'
  /** The arguments each run was started with (after the entry script), by work folder. */
  const argvByWorkDir = new Map<string, string[]>()
  return {
    name,
    exactlyOnce,
    label:
      name === 'sidecar'
        ? 'mirror-sidecar (this project)'
        : exactlyOnce
          ? 'mirror-sidecar --exactly.once true (this project)'
          : `mirror-sidecar baseline (${settings.entry})`,
    // Same node binary and flags as this process, so the same default old-space limit.
    heap:
      settings.maxOldSpaceMib === undefined
        ? `node default (${Math.round(getHeapStatistics().heap_size_limit / 2 ** 20)} MiB limit)`
        : `node --max-old-space-size=${settings.maxOldSpaceMib}`,
    logFile: 'sidecar.log',
    ownTopics: noOwnTopics,
    start: async job => {
      const entry = resolve(settings.entry)
      if (!existsSync(entry)) throw new Error(`sidecar entry ${entry} not found: build it (npm run build) or pass --sidecar-entry / --contenders mm2,mm1`)
      const { consumer, producer } = await mm1StyleConfigs(job)
      const profiling =
        settings.profileDir === undefined
          ? []
          : [
              '--cpu-prof',
              '--cpu-prof-dir',
              resolve(settings.profileDir),
              '--heap-prof',
              '--heap-prof-dir',
              resolve(settings.profileDir),
              '--import',
              pathToFileURL(fileURLToPath(new URL('./profile-exit-hook.js', import.meta.url))).href,
            ]
      const out = openSync(join(job.workDir, 'sidecar.log'), 'a')
      try {
        const heap = settings.maxOldSpaceMib === undefined ? [] : [`--max-old-space-size=${settings.maxOldSpaceMib}`]
        const argv = [
          '--consumer.config',
          consumer,
          '--producer.config',
          producer,
          '--whitelist',
          job.topic,
          '--num.streams',
          String(job.streams),
          '--metrics.port',
          '0',
          '--metrics.host',
          '127.0.0.1',
          ...commitIntervalArgs(job),
          ...(exactlyOnce ? ['--exactly.once', 'true'] : []),
          ...(settings.args ?? []),
          ...(job.sidecarArgs ?? []),
        ]
        argvByWorkDir.set(job.workDir, argv)
        const child = spawn(process.execPath, [...heap, ...profiling, entry, ...argv], { stdio: ['ignore', out, out] })
        return track(name === 'sidecar-eos' ? 'sidecar' : name, child, settings.profileDir === undefined ? 'SIGTERM' : 'SIGUSR2')
      } finally {
        closeSync(out)
      }
    },
    checkSettings: async job => {
      const argv = argvByWorkDir.get(job.workDir)
      if (argv === undefined) throw new Error(`${name}: no run started in ${job.workDir}`)
      // The same parser on the same arguments, files and environment as the run: what it resolved, then exit (nothing connects).
      const printed = spawnSync(process.execPath, [resolve(settings.entry), ...argv, '--print-config'], { encoding: 'utf8', env: process.env })
      const file = join(job.workDir, 'sidecar.print-config.json')
      await writeFile(file, printed.stdout ?? '')
      const shown = relative(process.cwd(), file)
      if (printed.status !== 0) {
        throw new Error(`${name}: --print-config exited ${printed.status ?? printed.signal}: ${(printed.stderr ?? '').trim().split('\n')[0] ?? ''}`)
      }
      const written = mm1StyleProperties(job)
      return checkSettings(name, shown, sidecarExpectations(written.consumer, written.producer, argv), [printConfigBlock(printed.stdout)])
    },
  }
}

/**
 * The bare forwarder (`bare-forwarder.ts`): the least CPU a Node.js process spends copying the
 * same batches between the single-node clusters, without anything that makes a mirror (group,
 * commits, idempotence, retries, metrics). Passed no settings of its own: the producer and
 * consumer settings of the run do not apply to it (its outcomes say so).
 */
export function bareForwarderContender (partitions: number, via: 'raw' | 'kafkajs' = 'raw'): Contender {
  const name = via === 'raw' ? 'bare' : 'bare-kafkajs'
  return {
    name,
    label: via === 'raw'
      ? 'bare forwarder (Node.js, raw Fetch/Produce, no group, no commits)'
      : 'bare forwarder over kafkajs\' connections (the same requests)',
    heap: 'node default',
    logFile: 'bare-forwarder.log',
    ownTopics: noOwnTopics,
    checkSettings: async job => {
      const where = 'bare-forwarder.ts'
      const clientProps = Object.entries({ ...job.producerProps, ...job.consumerProps })
      return {
        contender: name,
        file: relative(process.cwd(), join(job.workDir, 'bare-forwarder.log')),
        outcomes: [
          { key: 'acks', passed: 'all', status: 'unchecked', resolved: 'fixed in its Produce requests (acks=-1)', where },
          ...clientProps.map(([key, passed]) => ({
            key, passed, status: 'unchecked' as const, resolved: 'not applied: the bare forwarder has no client settings', where,
          })),
        ],
      }
    },
    start: async job => {
      await mkdir(job.workDir, { recursive: true })
      const log = openSync(join(job.workDir, 'bare-forwarder.log'), 'a')
      const entry = fileURLToPath(new URL('./bare-forwarder.js', import.meta.url))
      const firstBroker = (bootstrap: string): string => bootstrap.split(',')[0] ?? bootstrap
      const args = [entry, firstBroker(job.sourceBootstrap), firstBroker(job.targetBootstrap), job.topic, String(partitions), via]
      const child = spawn(process.execPath, args, { stdio: ['ignore', log, log] })
      closeSync(log)
      return track(name, child)
    },
  }
}

/** MirrorMaker 1 (`kafka.tools.MirrorMaker`, last shipped in 3.9.x) against the 4.x clusters. */
export function mirrorMaker1Contender (distribution: KafkaDistribution, heap: string): Contender {
  return {
    name: 'mm1',
    label: `MirrorMaker 1 (${distribution.version})`,
    heap: `-Xmx${heap}`,
    logFile: 'mm1.log',
    ownTopics: noOwnTopics,
    checkSettings: async job => {
      const file = join(job.workDir, 'mm1.log')
      const written = mm1StyleProperties(job)
      const commitInterval = job.commitIntervalMs === undefined ? {} : { commitIntervalMs: job.commitIntervalMs }
      const commandLine = { include: job.topic, streams: job.streams, ...commitInterval }
      return checkSettings(
        'mm1',
        relative(process.cwd(), file),
        mirrorMaker1Expectations(written.consumer, written.producer, commandLine),
        await logBlocks(file)
      )
    },
    start: async job => {
      const { consumer, producer } = await mm1StyleConfigs(job)
      const child = await spawnJavaMain({
        distribution,
        mainClass: 'kafka.tools.MirrorMaker',
        args: [
          '--consumer.config',
          consumer,
          '--producer.config',
          producer,
          '--include',
          job.topic,
          '--num.streams',
          String(job.streams),
          ...commitIntervalArgs(job),
        ],
        maxHeap: heap,
        loggingConfigFile: join(job.workDir, 'log4j.properties'),
        logFile: join(job.workDir, 'mm1.log'),
        stdoutFile: join(job.workDir, 'mm1.stdout.log'),
      })
      return track('MirrorMaker 1', child)
    },
  }
}

function mm2Aliases (job: MirrorJob): { source: string, target: string } {
  return { source: `bsrc${job.tag}`, target: `btgt${job.tag}` }
}

/** MirrorMaker 2's mm2.properties for one run: dedicated mode, data only, into the job's target alias. */
export function mm2Properties (job: MirrorJob, exactlyOnce: boolean): WrittenProperties {
  const { source: s, target: t } = mm2Aliases(job)
  return {
    clusters: `${s}, ${t}`,
    [`${s}.bootstrap.servers`]: job.sourceBootstrap,
    [`${t}.bootstrap.servers`]: job.targetBootstrap,
    [`${s}->${t}.enabled`]: 'true',
    [`${t}->${s}.enabled`]: 'false',
    [`${s}->${t}.topics`]: job.topic.replace(/[.]/g, '\\\\.'),
    'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
    'tasks.max': job.streams,
    'replication.factor': job.replicationFactor ?? 1,
    'checkpoints.topic.replication.factor': job.replicationFactor ?? 1,
    'heartbeats.topic.replication.factor': job.replicationFactor ?? 1,
    'offset-syncs.topic.replication.factor': job.replicationFactor ?? 1,
    'offset.storage.replication.factor': job.replicationFactor ?? 1,
    'status.storage.replication.factor': job.replicationFactor ?? 1,
    'config.storage.replication.factor': job.replicationFactor ?? 1,
    'emit.heartbeats.enabled': 'false',
    'emit.checkpoints.enabled': 'false',
    'sync.group.offsets.enabled': 'false',
    'sync.topic.configs.enabled': 'false',
    'sync.topic.acls.enabled': 'false',
    'refresh.groups.enabled': 'false',
    // Dedicated mode builds each worker's config from the target cluster's keys (MirrorMakerConfig.workerConfig): a top-level key is not applied.
    ...(job.commitIntervalMs === undefined ? {} : { [`${t}.offset.flush.interval.ms`]: job.commitIntervalMs }),
    [`${s}.consumer.auto.offset.reset`]: 'earliest',
    ...Object.fromEntries(Object.entries(job.consumerProps ?? {}).map(([key, value]) => [`${s}.consumer.${key}`, value])),
    [`${t}.producer.acks`]: 'all',
    // KIP-618: read per target cluster in dedicated mode (a top-level key is not applied).
    ...(exactlyOnce ? { [`${t}.exactly.once.source.support`]: 'enabled' } : {}),
    [`${t}.producer.compression.type`]: job.compression,
    ...Object.fromEntries(Object.entries(job.producerProps).map(([key, value]) => [`${t}.producer.${key}`, value])),
  }
}

/**
 * MirrorMaker 2 in dedicated mode, data only: identity topic names, `tasks.max` = streams,
 * heartbeats, checkpoints, group and config sync off (offset syncs stay on: MM2 refuses to
 * configure its source connector without them while the checkpoint connector exists), internal topics with
 * the job's replication factor (1 by default). Cluster aliases are unique per run so no stored position is reused.
 */
export function mirrorMaker2Contender (distribution: KafkaDistribution, heap: string, exactlyOnce = false): Contender {
  return {
    name: exactlyOnce ? 'mm2-eos' : 'mm2',
    exactlyOnce,
    label: `MirrorMaker 2 (${distribution.version}, dedicated${exactlyOnce ? ', exactly.once.source.support=enabled' : ''})`,
    heap: `-Xmx${heap}`,
    logFile: 'mm2.log',
    ownTopics: (job, listed) => {
      const aliases = mm2Aliases(job)
      const own = (topic: string): boolean => topic.includes(aliases.source) || topic.includes(aliases.target) || topic === 'heartbeats'
      return { source: listed.source.filter(own), target: listed.target.filter(own) }
    },
    checkSettings: async job => {
      const file = join(job.workDir, 'mm2.log')
      return checkSettings(
        exactlyOnce ? 'mm2-eos' : 'mm2',
        relative(process.cwd(), file),
        mirrorMaker2Expectations(mm2Properties(job, exactlyOnce), mm2Aliases(job)),
        await logBlocks(file)
      )
    },
    start: async job => {
      await mkdir(job.workDir, { recursive: true })
      const { target: t } = mm2Aliases(job)
      const config = join(job.workDir, 'mm2.properties')
      await writeFile(config, properties(mm2Properties(job, exactlyOnce)))
      const child = await spawnJavaMain({
        distribution,
        mainClass: 'org.apache.kafka.connect.mirror.MirrorMaker',
        args: [config, '--clusters', t],
        maxHeap: heap,
        loggingConfigFile: join(job.workDir, 'log4j2.properties'),
        logFile: join(job.workDir, 'mm2.log'),
        stdoutFile: join(job.workDir, 'mm2.stdout.log'),
      })
      return track('MirrorMaker 2', child)
    },
  }
}
