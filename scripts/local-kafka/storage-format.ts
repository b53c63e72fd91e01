import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { javaLoggingArg, javaLoggingConfig } from './java-main.js'
import { LocalKafkaError, type KafkaDistribution } from './kafka-distribution.js'

const execFileAsync = promisify(execFile)

/**
 * `kafka-storage format` of one node's `log.dirs` for cluster `clusterId`, with the node's
 * `server.properties` (its `controller.quorum.voters` name the static quorum). `what` names the
 * node in the error.
 */
export async function formatStorage (
  distribution: KafkaDistribution,
  propertiesFile: string,
  clusterId: string,
  loggingConfigFile: string,
  what: string,
  extraArgs: readonly string[] = []
): Promise<void> {
  await writeFile(loggingConfigFile, javaLoggingConfig(distribution, '/dev/null', 'WARN'))
  try {
    await execFileAsync('java', [
      '-Xmx256m',
      javaLoggingArg(distribution, loggingConfigFile),
      '-cp',
      distribution.classpath,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      propertiesFile,
      ...extraArgs,
    ])
  } catch (error) {
    const output = String((error as { stderr?: string }).stderr ?? '') + String((error as { stdout?: string }).stdout ?? '')
    throw new LocalKafkaError(`${what}: kafka-storage format failed:\n${output.trim()}`)
  }
}
