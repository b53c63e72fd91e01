import assert from 'node:assert/strict'
import { test } from 'node:test'
import { recordBytes } from '../../../src/ports/mirror-batch.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

const record = (overrides: Partial<KafkaRecord>): KafkaRecord => ({
  offset: '0',
  key: Buffer.from('key'),
  value: Buffer.from('value'),
  timestamp: '1764450000000',
  ...overrides,
})

test('recordBytes counts key, value, header names and values; the wire-order list wins; null values count nothing', () => {
  assert.equal(recordBytes(record({})), 8)
  assert.equal(recordBytes(record({ key: null, value: null })), 0)
  assert.equal(recordBytes(record({ headers: { a: Buffer.from('12'), bb: [Buffer.from('3'), null], c: null } })), 8 + (1 + 2) + (2 + 1) + 1)
  assert.equal(recordBytes(record({
    headers: { ignored: Buffer.from('when a list is there') },
    headerList: [{ key: 'a', value: Buffer.from('12') }, { key: 'bb', value: null }, { key: 'a', value: Buffer.from('3') }],
  })), 8 + (1 + 2) + 2 + (1 + 1))
})
