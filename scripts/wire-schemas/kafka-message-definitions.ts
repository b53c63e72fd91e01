import { readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { ensureKafkaDistribution } from '../local-kafka/kafka-distribution.js'
import { readJarEntries } from './jar-entries.js'

/** Kafka's message definitions (`FetchRequest.json` to its text) from the `kafka-clients` jar of release `version`, fetched with Maven when missing. */
export async function kafkaMessageDefinitions (version: string): Promise<Map<string, string>> {
  const distribution = await ensureKafkaDistribution(version)
  const jar = readdirSync(distribution.libDir).find(name => name === `kafka-clients-${version}.jar`)
  if (jar === undefined) throw new Error(`${distribution.libDir} holds no kafka-clients-${version}.jar`)
  const entries = readJarEntries(join(distribution.libDir, jar), name => /^common\/message\/\w+\.json$/.test(name))
  return new Map([...entries].map(([name, bytes]) => [basename(name), bytes.toString('utf8')]))
}
