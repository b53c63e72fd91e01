import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_KAFKA_VERSION } from '../../scripts/local-kafka/kafka-distribution.js'
import { kafkaMessageDefinitions } from '../../scripts/wire-schemas/kafka-message-definitions.js'
import { generateSchemaModules, SCHEMAS_FOLDER } from '../../scripts/wire-schemas/message-schema-generator.js'
import { REPOSITORY } from '../helpers/source-imports.js'

test('src/kafka/wire/schemas/ is what the generator writes from the message definitions in kafka-clients of the suite\'s Kafka release', async () => {
  const generated = generateSchemaModules(await kafkaMessageDefinitions(DEFAULT_KAFKA_VERSION), DEFAULT_KAFKA_VERSION)
  const folder = join(REPOSITORY, SCHEMAS_FOLDER)
  assert.deepEqual(readdirSync(folder).sort(), [...generated.keys()].sort(), 'the modules (run node dist/scripts/wire-schemas/generate-wire-schemas.js)')
  for (const [file, text] of generated) {
    const message = `${SCHEMAS_FOLDER}/${file} differs from Kafka ${DEFAULT_KAFKA_VERSION}'s definitions: regenerate it`
    assert.equal(readFileSync(join(folder, file), 'utf8'), text, message)
  }
})
