import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { ensureKafkaDistribution, mirrorMaker2VersionFromEnv, type LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { spawnJavaMain } from '../../scripts/local-kafka/java-main.js'

export interface Mm2Run {
  readonly source: LocalCluster
  readonly target: LocalCluster
  /** Cluster aliases; unique per test so no stored position is reused. */
  readonly sourceAlias: string
  readonly targetAlias: string
  /** Regex of the topics to copy. */
  readonly topics: string
  /** More mm2.properties keys (they win). */
  readonly properties?: Readonly<Record<string, string | number>>
}

/** A running MirrorMaker 2 of `startMirrorMaker2`. */
export interface Mm2Process {
  readonly logFile: string
  /** The mm2.properties file it runs with. */
  readonly config: string
  /** Kills it (SIGKILL) and waits for the exit. */
  readonly stop: () => Promise<void>
  /** Sends `signal` (SIGTERM: the operator's stop, which flushes the source positions) and waits for the exit. */
  readonly terminate: (signal: NodeJS.Signals) => Promise<void>
}

/**
 * The real MirrorMaker 2 (dedicated mode, `org.apache.kafka.connect.mirror.MirrorMaker`) from the
 * Maven jars; killed, and its folder removed, when the test ends.
 */
export async function startMirrorMaker2 (t: TestContext, run: Mm2Run): Promise<Mm2Process> {
  const distribution = await ensureKafkaDistribution(mirrorMaker2VersionFromEnv())
  const dir = mkdtempSync(join(tmpdir(), 'mm2-'))
  const s = run.sourceAlias
  const d = run.targetAlias
  const entries: Record<string, string | number> = {
    clusters: `${s}, ${d}`,
    [`${s}.bootstrap.servers`]: run.source.bootstrap,
    [`${d}.bootstrap.servers`]: run.target.bootstrap,
    [`${s}->${d}.enabled`]: 'true',
    [`${d}->${s}.enabled`]: 'false',
    [`${s}->${d}.topics`]: run.topics,
    'replication.factor': 1,
    'checkpoints.topic.replication.factor': 1,
    'heartbeats.topic.replication.factor': 1,
    'offset-syncs.topic.replication.factor': 1,
    'offset.storage.replication.factor': 1,
    'status.storage.replication.factor': 1,
    'config.storage.replication.factor': 1,
    'emit.heartbeats.enabled': 'false',
    'offset.flush.interval.ms': 1000,
    [`${d}.offset.flush.interval.ms`]: 1000,
    'refresh.topics.interval.seconds': 1,
    [`${s}.consumer.auto.offset.reset`]: 'earliest',
    ...run.properties,
  }
  const config = join(dir, 'mm2.properties')
  writeFileSync(config, Object.entries(entries).map(([key, value]) => `${key}=${value}`).join('\n') + '\n')
  const logFile = join(dir, 'mm2.log')
  const child = await spawnJavaMain({
    distribution,
    mainClass: 'org.apache.kafka.connect.mirror.MirrorMaker',
    args: [config, '--clusters', d],
    maxHeap: '384m',
    loggingConfigFile: join(dir, 'log4j2.properties'),
    logFile,
    stdoutFile: join(dir, 'mm2.stdout.log'),
  })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }
  const stop = (): Promise<void> => terminate('SIGKILL')
  t.after(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return { logFile, config, stop, terminate }
}
