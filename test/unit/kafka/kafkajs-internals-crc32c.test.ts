import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import { crc32cJs } from '../../../src/kafka/crc32c.js'
import { useKafkajsCrc32c } from '../../../src/kafka/kafkajs-internals.js'

const require = createRequire(import.meta.url)

test('kafkajs\' record batch encoder computes the CRC-32C with the function given, also when given after the encoder was loaded', async () => {
  const seen: number[] = []
  const spy = (bytes: Buffer): number => { seen.push(bytes.length); return crc32cJs(bytes) }
  useKafkajsCrc32c(spy)
  const { RecordBatch } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/v0') as {
    RecordBatch: (options: object) => Promise<{ buffer: Buffer }>
  }
  const Record = require('@kafka-mirror-sidecar/kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => unknown
  const records = [Record({ offsetDelta: 0, key: Buffer.from('k'), value: Buffer.from('v'), headers: [] })]
  for (const compression of [kafkajs.CompressionTypes.None, kafkajs.CompressionTypes.GZIP]) {
    seen.length = 0
    const batch = (await RecordBatch({ compression, records })).buffer
    assert.deepEqual(seen, [batch.length - 21], 'one call, over bytes 21 to the end')
    assert.equal(batch.readUInt32BE(17), crc32cJs(batch.subarray(21)), 'the CRC field holds its result')
  }
  const later: number[] = []
  useKafkajsCrc32c(bytes => { later.push(bytes.length); return crc32cJs(bytes) })
  seen.length = 0
  const batch = (await RecordBatch({ records })).buffer
  assert.deepEqual([seen.length, later], [0, [batch.length - 21]], 'the encoder is loaded: the function given later is the one in use')
  assert.equal(batch.readUInt32BE(17), crc32cJs(batch.subarray(21)))
})
