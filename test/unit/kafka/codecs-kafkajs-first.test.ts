import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { crc32cImplementation } from '../../../src/kafka/crc32c.js'
import { registerCodecs } from '../../../src/kafka/codecs.js'

// Its own file (a fresh process): here kafkajs' record batch encoder is loaded before registerCodecs.
test('when kafkajs\' encoder was loaded before the mirror registered its codecs, the codecs and the mirror\'s CRC-32C are used all the same', async () => {
  const { RecordBatch } = createRequire(import.meta.url)('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as {
    RecordBatch: (options: object) => Promise<{ buffer: Buffer }>
  }
  await RecordBatch({ records: [] })
  assert.equal(crc32cImplementation, 'native')
  assert.deepEqual({ ...registerCodecs() }, { snappy: 'native', lz4: 'native', zstd: 'native', crc32c: 'native' })
})
