import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { projectRoot } from './paths.js'

const execFileAsync = promisify(execFile)

/** Kafka release the local clusters run when `KAFKA_VERSION` is not set. */
export const DEFAULT_KAFKA_VERSION = '4.1.1'
/** Last release line that still ships MirrorMaker 1 (`kafka.tools.MirrorMaker`). */
export const MIRROR_MAKER_1_VERSION = '3.9.1'
/**
 * The newest release whose MirrorMaker 2 jars (connect-mirror, connect-mirror-client) Maven Central
 * serves: MirrorMaker 2 in the benchmark and the tests, and the MirrorMaker 2 client library
 * (`RemoteClusterUtils`) the tests ask, run from it, against brokers of any supported release.
 * `MIRROR_MAKER_2_VERSION` in the environment names another.
 */
export const MIRROR_MAKER_2_VERSION = '4.3.1'

/** A Kafka release fetched from Maven Central: its version and the folder holding every jar. */
export interface KafkaDistribution {
  readonly version: string
  readonly libDir: string
  /** Java classpath (`<libDir>/*`). */
  readonly classpath: string
  /** 4.x logs through log4j2, 3.x through reload4j. */
  readonly logging: 'log4j2' | 'reload4j'
}

export class LocalKafkaError extends Error {
  override readonly name = 'LocalKafkaError'
}

export function kafkaVersionFromEnv (): string {
  return process.env.KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION
}

export function mirrorMaker2VersionFromEnv (): string {
  return process.env.MIRROR_MAKER_2_VERSION ?? MIRROR_MAKER_2_VERSION
}

export function cacheDir (): string {
  return process.env.KAFKA_CACHE_DIR ?? join(projectRoot(), '.cache', 'kafka')
}

function pomFor (version: string, logging: KafkaDistribution['logging'], mirrorMaker2: boolean): string {
  const dependency = (group: string, artifact: string, ver: string): string =>
    `    <dependency><groupId>${group}</groupId><artifactId>${artifact}</artifactId><version>${ver}</version></dependency>`
  const deps = [
    dependency('org.apache.kafka', 'kafka_2.13', version),
    dependency('org.apache.kafka', 'kafka-tools', version),
    ...(mirrorMaker2 ? [dependency('org.apache.kafka', 'connect-mirror', version)] : []),
    logging === 'log4j2'
      ? dependency('org.apache.logging.log4j', 'log4j-slf4j-impl', '2.25.3')
      : dependency('org.slf4j', 'slf4j-reload4j', '1.7.36'),
  ]
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>kafka-${version}</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${deps.join('\n')}
  </dependencies>
</project>
`
}

async function requireCommand (command: string, args: string[], what: string): Promise<void> {
  try {
    await execFileAsync(command, args)
  } catch {
    throw new LocalKafkaError(`${command} not found: ${what}`)
  }
}

/** Java 17 runs every Kafka line we use; fail early with a readable message when it is missing. */
export async function requireJava (): Promise<void> {
  await requireCommand('java', ['-version'], 'install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless)')
}

/**
 * Fetches Apache Kafka `version` (broker, tools, MirrorMaker 2) from Maven Central into the cache,
 * once; later calls return the cached folder without running Maven.
 */
export async function ensureKafkaDistribution (version = kafkaVersionFromEnv()): Promise<KafkaDistribution> {
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new LocalKafkaError(`KAFKA_VERSION "${version}": expected a release such as ${DEFAULT_KAFKA_VERSION} or ${MIRROR_MAKER_1_VERSION}`)
  }
  const logging = Number(version.split('.')[0]) >= 4 ? 'log4j2' : 'reload4j'
  const home = join(cacheDir(), version)
  const libDir = join(home, 'lib')
  const marker = join(home, '.complete')
  const distribution = { version, libDir, classpath: `${libDir}/*`, logging } as const
  if (existsSync(marker)) return distribution

  await requireJava()
  await requireCommand('mvn', ['-v'], 'install Apache Maven (Debian: apt-get install maven) to fetch the Kafka jars')
  await rm(libDir, { recursive: true, force: true })
  await mkdir(home, { recursive: true })
  const pom = join(home, 'pom.xml')
  const fetch = async (mirrorMaker2: boolean): Promise<void> => {
    await writeFile(pom, pomFor(version, logging, mirrorMaker2))
    await execFileAsync('mvn', [
      '-B', '-q', '-f', pom,
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
      '-DincludeScope=runtime', `-DoutputDirectory=${libDir}`,
    ], { maxBuffer: 32 * 1024 * 1024 })
  }
  const mavenOutput = (error: unknown): string =>
    String((error as { stdout?: string }).stdout ?? '') + String((error as { stderr?: string }).stderr ?? '')
  try {
    await fetch(true)
  } catch (error) {
    const output = mavenOutput(error)
    // A release whose MirrorMaker 2 jar the registry does not serve still runs as a broker: the clusters
    // start without it, and only what runs MirrorMaker 2 (its scenarios, the benchmark) needs another release.
    const withoutMirrorMaker2 = output.includes(`connect-mirror:jar:${version}`)
      ? await fetch(false).then(() => undefined, (retryError: unknown) => mavenOutput(retryError))
      : output
    if (withoutMirrorMaker2 !== undefined) {
      throw new LocalKafkaError(`fetching Kafka ${version} with Maven failed:\n${withoutMirrorMaker2.split('\n').slice(-20).join('\n')}`)
    }
  }
  const jars = await readdir(libDir)
  if (!jars.some(jar => jar.startsWith(`kafka_2.13-${version}`))) {
    throw new LocalKafkaError(`Maven finished but ${libDir} holds no kafka_2.13-${version}.jar`)
  }
  await writeFile(marker, new Date().toISOString() + '\n')
  return distribution
}
