import assert from 'node:assert/strict'
import { test } from 'node:test'
import { digestRecord, hashHeaders } from '../../../src/mirror-topics/record-digest.js'
import type { KafkaRecord } from '../../../src/shared/kafka-record.js'

const base: KafkaRecord = { offset: '0', timestamp: '1764450000000', key: Buffer.from('k'), value: Buffer.from('v'), headers: {} }
const list = (...pairs: Array<[string, string | null]>): KafkaRecord['headerList'] =>
  pairs.map(([key, value]) => ({ key, value: value === null ? null : Buffer.from(value) }))

test('header hash follows wire order when the list is known: interleaved repeated names are told apart', () => {
  const written = hashHeaders({ headers: {}, headerList: list(['a', '1'], ['b', '2'], ['a', '3']) })
  assert.equal(hashHeaders({ headers: {}, headerList: list(['a', '1'], ['b', '2'], ['a', '3']) }), written)
  assert.notEqual(hashHeaders({ headers: {}, headerList: list(['a', '1'], ['a', '3'], ['b', '2']) }), written, 'regrouped by name')
  assert.notEqual(hashHeaders({ headers: {}, headerList: list(['a', '1'], ['b', '2']) }), written, 'one dropped')
  // Without the list (grouped form only) the same record hashes as its grouping flattened name by name.
  assert.equal(
    hashHeaders({ headers: { a: [Buffer.from('1'), Buffer.from('3')], b: Buffer.from('2') } }),
    hashHeaders({ headers: {}, headerList: list(['a', '1'], ['a', '3'], ['b', '2']) })
  )
})

test('a null header value is legal: hashed apart from an empty value, counted as no bytes', () => {
  assert.notEqual(hashHeaders({ headers: {}, headerList: list(['a', null]) }), hashHeaders({ headers: {}, headerList: list(['a', '']) }))
  assert.equal(hashHeaders({ headers: { a: null } }), hashHeaders({ headers: {}, headerList: list(['a', null]) }))
  const digest = digestRecord({ ...base, headerList: list(['a', null], ['bb', 'xyz']) })
  assert.equal(digest.sizeBytes, 1 + 1 + 3, 'key + value + header values')
})
