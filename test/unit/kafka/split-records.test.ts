import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  BATCH_OVERHEAD_BYTES,
  recordBytesPerRequest,
  recordSizeBytes,
  REQUEST_OVERHEAD_BYTES,
  splitRecords,
  type InternalRecord,
} from '../../../src/kafka/split-records.js'
import { MirrorError } from '../../../src/shared/errors.js'

const records = (count: number, valueBytes = 200): InternalRecord[] =>
  Array.from({ length: count }, (_, i) => ({ key: `["range","orders",${i},"0"]`, value: 'x'.repeat(valueBytes) }))

test('records are split, in order, into chunks of at most the byte budget; together they are all the records', () => {
  const input = records(2_400)
  const budget = recordBytesPerRequest({ maxRequestSizeBytes: 1_048_576, maxMessageBytes: 4096 })
  assert.equal(budget, 4096 - BATCH_OVERHEAD_BYTES)
  const chunks = splitRecords(input, budget, 'syncs')
  assert.ok(chunks.length > 100, `${chunks.length} chunks`)
  for (const chunk of chunks) assert.ok(chunk.reduce((sum, r) => sum + recordSizeBytes(r), 0) <= budget)
  assert.deepEqual(chunks.flat(), input)
  // Greedy: no two neighbouring chunks would fit in one.
  for (let i = 1; i < chunks.length; i++) {
    const previous = (chunks[i - 1] as InternalRecord[]).reduce((sum, r) => sum + recordSizeBytes(r), 0)
    assert.ok(previous + recordSizeBytes((chunks[i] as InternalRecord[])[0] as InternalRecord) > budget)
  }
})

test('the smaller of max.request.size and max.message.bytes bounds a request, less its overhead', () => {
  assert.equal(recordBytesPerRequest({ maxRequestSizeBytes: 1_048_576, maxMessageBytes: 1_048_588 }), 1_048_576 - REQUEST_OVERHEAD_BYTES)
  assert.equal(recordBytesPerRequest({ maxRequestSizeBytes: 1_048_576, maxMessageBytes: 65_536 }), 65_536 - BATCH_OVERHEAD_BYTES)
  assert.deepEqual(splitRecords(records(3), 1_000_000, 'syncs').map(c => c.length), [3])
  assert.deepEqual(splitRecords([], 1_000, 'syncs'), [])
})

test('the size of a record counts UTF-8 bytes of key and value plus the record overhead; a tombstone has no value bytes', () => {
  assert.equal(recordSizeBytes({ key: 'é', value: 'ab' }) - recordSizeBytes({ key: 'e', value: null }), 1 + 2)
})

test('a record larger than any request is a clear, non-retriable error naming the topic', () => {
  assert.throws(() => splitRecords([...records(2), { key: 'big', value: 'y'.repeat(5000) }], 4000, 'mirror-offset-syncs.A.internal'), (error: unknown) => {
    assert.ok(error instanceof MirrorError)
    assert.equal(error.retriable, false)
    assert.match(error.message, /record of 5035 bytes .* mirror-offset-syncs\.A\.internal, which takes 4000 bytes .*raise max\.message\.bytes/)
    return true
  })
})
