import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { registerCodecs } from '../../src/kafka/codecs.js'

// Its own file (a fresh process): here kafkajs' record batch encoder is loaded before registerCodecs.
test('when kafkajs was used before the mirror registered its codecs, its own CRC-32C stays and the codecs still register', async () => {
  const { RecordBatch } = createRequire(import.meta.url)('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (options: object) => Promise<{ buffer: Buffer }> }
  await RecordBatch({ records: [] })
  assert.deepEqual({ ...registerCodecs() }, { snappy: 'native', lz4: 'native', zstd: 'native', crc32c: 'javascript' })
})
