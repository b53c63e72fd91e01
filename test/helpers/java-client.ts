import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ensureKafkaDistribution, mirrorMaker2VersionFromEnv } from '../../scripts/local-kafka/clusters.js'
import { projectRoot } from '../../scripts/local-kafka/paths.js'

const execFileAsync = promisify(execFile)

/** The Java program asking Kafka's connect-mirror-client library (see its doc comment). */
const PROBE_SOURCE = join(projectRoot(), 'test', 'java', 'Mm2ClientProbe.java')

/** One consumer group's offsets as `RemoteClusterUtils.translateOffsets` gives them. */
export interface JavaTranslatedOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly metadata: string
}

/** What `MirrorClient` finds on a cluster from its heartbeats topics. */
export interface JavaMirrorClusters {
  readonly heartbeatTopics: string[]
  readonly upstreamClusters: string[]
  readonly replicationHops: number
}

let compiled: Promise<string> | undefined

/**
 * Compiles the probe with `javac` against the jars of the MirrorMaker 2 release (`mirrorMaker2VersionFromEnv`)
 * (connect-mirror-client among them), once per source and Kafka version, into
 * `.cache/java-probe/<hash>/`; resolves with the classpath to run it.
 */
function probeClasspath (): Promise<string> {
  compiled ??= (async () => {
    const distribution = await ensureKafkaDistribution(mirrorMaker2VersionFromEnv())
    const hash = createHash('sha256').update(readFileSync(PROBE_SOURCE)).update(distribution.version).digest('hex').slice(0, 16)
    const root = join(projectRoot(), '.cache', 'java-probe')
    const classes = join(root, hash)
    if (!existsSync(join(classes, 'Mm2ClientProbe.class'))) {
      await mkdir(root, { recursive: true })
      // Compiled aside, then moved in whole: a half-written folder is never taken for a compiled one.
      const scratch = mkdtempSync(join(root, 'tmp-'))
      try {
        await execFileAsync('javac', ['-cp', distribution.classpath, '-d', scratch, PROBE_SOURCE])
        if (!existsSync(classes)) renameSync(scratch, classes)
      } finally {
        rmSync(scratch, { recursive: true, force: true })
      }
    }
    return `${classes}:${distribution.classpath}`
  })()
  return compiled
}

async function runProbe (args: readonly string[]): Promise<unknown> {
  const classpath = await probeClasspath()
  const { stdout } = await execFileAsync('java', ['-Xmx128m', '-cp', classpath, 'Mm2ClientProbe', ...args], { timeout: 60_000, maxBuffer: 4 * 1024 * 1024 })
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null')
}

/** `RemoteClusterUtils.translateOffsets(bootstrap.servers=bootstrap, sourceAlias, group, timeout)`, sorted by topic and partition. */
export async function javaTranslateOffsets (bootstrap: string, sourceAlias: string, group: string, timeoutMs = 10_000): Promise<JavaTranslatedOffset[]> {
  return await runProbe(['translate', bootstrap, sourceAlias, group, String(timeoutMs)]) as JavaTranslatedOffset[]
}

/** `MirrorClient.heartbeatTopics()`, `upstreamClusters()` (sorted) and `replicationHops(sourceAlias)` on the cluster at `bootstrap`. */
export async function javaMirrorClusters (bootstrap: string, sourceAlias: string): Promise<JavaMirrorClusters> {
  return await runProbe(['clusters', bootstrap, sourceAlias]) as JavaMirrorClusters
}

/**
 * One upstream offset as MirrorMaker 2's checkpoint task translates it from the offset-syncs topic
 * (`OffsetSyncStore.translateDownstream`); null: no translation.
 */
export interface JavaSyncStoreTranslation {
  readonly partition: number
  readonly upstreamOffset: number
  readonly downstreamOffset: number | null
}

/**
 * Connect-mirror's `OffsetSyncStore` (what MirrorMaker 2's checkpoint task reads its offset syncs
 * with), built for the flow `sourceAlias` -> `targetAlias` with `offset-syncs.topic.location` =
 * `location`.
 */
export async function javaSyncStoreTranslate (
  flow: {
    readonly sourceBootstrap: string
    readonly targetBootstrap: string
    readonly sourceAlias: string
    readonly targetAlias: string
    readonly location: 'source' | 'target'
  },
  topic: string,
  offsets: ReadonlyArray<readonly [number, bigint]>
): Promise<JavaSyncStoreTranslation[]> {
  const specs = offsets.map(([partition, offset]) => `${partition}:${offset}`).join(',')
  return (await runProbe([
    'sync-store',
    flow.sourceBootstrap,
    flow.targetBootstrap,
    flow.sourceAlias,
    flow.targetAlias,
    flow.location,
    topic,
    specs,
  ])) as JavaSyncStoreTranslation[]
}

/** `MirrorClient.remoteConsumerOffsets(group, sourceAlias, timeout)` on the cluster at `bootstrap`, sorted by topic and partition. */
export async function javaRemoteConsumerOffsets (bootstrap: string, sourceAlias: string, group: string, timeoutMs = 10_000): Promise<JavaTranslatedOffset[]> {
  return await runProbe(['remote-offsets', bootstrap, sourceAlias, group, String(timeoutMs)]) as JavaTranslatedOffset[]
}

/** One record of a checkpoints topic as Kafka's `Checkpoint.deserializeRecord` reads it. */
export interface JavaCheckpoint {
  readonly group: string
  readonly topic: string
  readonly partition: number
  readonly upstreamOffset: number
  readonly downstreamOffset: number
  readonly metadata: string
}

/** Every record of the checkpoints topic `topic` on the cluster at `bootstrap`, in log order, decoded by Kafka's `Checkpoint.deserializeRecord`. */
export async function javaCheckpoints (bootstrap: string, topic: string): Promise<JavaCheckpoint[]> {
  return await runProbe(['checkpoints', bootstrap, topic]) as JavaCheckpoint[]
}
