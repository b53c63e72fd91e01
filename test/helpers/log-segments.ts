import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ensureKafkaDistribution } from '../../scripts/local-kafka/clusters.js'

const execFileAsync = promisify(execFile)

/** Kafka's DumpLogSegments: `kafka.tools` up to 4.3, `org.apache.kafka.tools` in the tools module from 4.4. */
const DUMP_LOG_SEGMENTS_CLASSES = ['kafka.tools.DumpLogSegments', 'org.apache.kafka.tools.DumpLogSegments']

/**
 * What Kafka's own DumpLogSegments prints of the first log segment of `topic`-`partition` on a local
 * single-node cluster (its data folder `dir/data`), with the release the clusters run.
 */
export async function dumpLogSegment (cluster: { dir: string }, topic: string, partition = 0): Promise<string> {
  const { classpath } = await ensureKafkaDistribution()
  const dir = join(cluster.dir, 'data', `${topic}-${partition}`)
  const segment = readdirSync(dir).find(name => name.endsWith('.log'))
  if (segment === undefined) throw new Error(`no log segment in ${dir}`)
  let missingClass: unknown
  for (const mainClass of DUMP_LOG_SEGMENTS_CLASSES) {
    try {
      const { stdout } = await execFileAsync('java', ['-cp', classpath, mainClass, '--files', join(dir, segment)], { maxBuffer: 64 * 1024 * 1024 })
      return stdout
    } catch (error) {
      if (!String((error as { stderr?: string }).stderr ?? '').includes('ClassNotFoundException')) throw error
      missingClass = error
    }
  }
  throw missingClass
}
