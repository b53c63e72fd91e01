import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { kafkaVersionFromEnv } from '../local-kafka/kafka-distribution.js'
import { projectRoot } from '../local-kafka/paths.js'
import { kafkaMessageDefinitions } from './kafka-message-definitions.js'
import { generateSchemaModules, SCHEMAS_FOLDER } from './message-schema-generator.js'

// Writes src/kafka/wire/schemas/ anew from Kafka KAFKA_VERSION's definitions (default 4.1.1):
// node dist/scripts/wire-schemas/generate-wire-schemas.js
const version = kafkaVersionFromEnv()
try {
  const modules = generateSchemaModules(await kafkaMessageDefinitions(version), version)
  const folder = join(projectRoot(), SCHEMAS_FOLDER)
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  for (const [file, text] of modules) writeFileSync(join(folder, file), text)
  console.log(`${modules.size} modules written to ${SCHEMAS_FOLDER} from Kafka ${version}`)
} catch (error) {
  console.error((error as Error).message)
  process.exitCode = 1
}
