import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CONNECTION_TABLE, CONSUMER_TABLE, PRODUCER_TABLE } from '../../../src/config/client-keys.js'
import { keyNames, KeyValues, readKeys, rowsOf, type KeyRow, type KeySource } from '../../../src/config/key-table.js'
import { FLOW_TABLE } from '../../../src/config/mm2-flow-keys.js'
import { SECURITY_TABLE } from '../../../src/config/security-keys.js'
import { ProblemList } from '../../../src/config/values.js'

const TABLE: readonly KeyRow[] = [
  { key: 'a.ms', type: 'integer', min: 1, default: 500, doc: 'a' },
  {
    key: 'b.ms',
    type: 'integer',
    min: 0,
    default: 100,
    check: (value, earlier) => (value as number) < earlier.number('a.ms') ? undefined : 'must be below a.ms',
    doc: 'b',
  },
  { key: 'c', type: 'choice', choices: ['x', 'y'], check: value => value === 'y' ? 'y is refused' : undefined, doc: 'c' },
  { key: 'd', type: 'number', min: 0, max: 1, default: 0.5, doc: 'd' },
  { key: 'e', type: 'text', readBy: 'elsewhere', doc: 'e' },
  { key: 'f', type: 'boolean', default: true, doc: 'f' },
]

function source (entries: Record<string, string>): KeySource {
  return { get: key => entries[key] === undefined ? undefined : { key: `file: ${key}`, value: entries[key] }, name: key => `file: ${key}` }
}

function read (entries: Record<string, string>): { values: KeyValues, problems: ProblemList } {
  const problems = new ProblemList()
  const values = readKeys(TABLE, source(entries), problems)
  values.checkInvariants()
  return { values, problems }
}

test('readKeys: unset keys take their row default; a row another parser reads is not read', () => {
  const { values, problems } = read({ e: 'anything' })
  assert.deepEqual(problems.problems, [])
  assert.equal(values.number('a.ms'), 500)
  assert.equal(values.number('b.ms'), 100)
  assert.equal(values.text('c'), undefined)
  assert.equal(values.number('d'), 0.5)
  assert.equal(values.boolean('f'), true)
  assert.throws(() => values.text('e'), /not a key of the table read/)
})

test('readKeys: a value that does not parse is one problem naming the full key, and the default stands', () => {
  const { values, problems } = read({ 'a.ms': '0', d: '2', f: 'yes' })
  assert.deepEqual(problems.problems, [
    { key: 'file: a.ms', value: '0', message: 'expected a positive integer' },
    { key: 'file: d', value: '2', message: 'expected a number from 0 to 1 (default 0.5)' },
    { key: 'file: f', value: 'yes', message: 'expected true or false' },
  ])
  assert.equal(values.number('a.ms'), 500)
  assert.equal(values.number('d'), 0.5)
})

test('readKeys: a check sees the rows above it and runs on defaults too; its problem shows the resolved value', () => {
  assert.deepEqual(read({ 'a.ms': '50' }).problems.problems, [{ key: 'file: b.ms', value: '100', message: 'must be below a.ms' }])
  assert.deepEqual(read({ 'b.ms': ' 700 ' }).problems.problems, [{ key: 'file: b.ms', value: '700', message: 'must be below a.ms' }])
  assert.deepEqual(read({ c: 'Y' }).problems.problems, [{ key: 'file: c', value: 'y', message: 'y is refused' }])
  assert.deepEqual(read({ c: 'z' }).problems.problems, [{ key: 'file: c', value: 'z', message: 'expected one of x, y' }])
})

test('KeyValues: a getter of another type than the row is a bug and throws; Invariant A holds after every set', () => {
  const values = new KeyValues()
  values.set(TABLE[0] as KeyRow, 3)
  values.checkInvariants()
  values.set(TABLE[2] as KeyRow, 'x')
  values.checkInvariants()
  assert.throws(() => values.boolean('a.ms'), /holds a number, not a boolean/)
  assert.throws(() => values.set(TABLE[5] as KeyRow, 'true'), /a string for a boolean key/)
  values.checkInvariants()
})

test('rowsOf takes the rows in the order named and refuses a key the table does not hold', () => {
  assert.deepEqual(keyNames(rowsOf(TABLE, ['f', 'a.ms'])), ['f', 'a.ms'])
  assert.throws(() => rowsOf(TABLE, ['nope']), /not a row of the table/)
})

test('every key table holds each key once, with a doc line, and a default of its own type', () => {
  for (const table of [CONNECTION_TABLE, CONSUMER_TABLE, PRODUCER_TABLE, FLOW_TABLE, SECURITY_TABLE]) {
    const names = keyNames(table)
    assert.equal(new Set(names).size, names.length, names.join(', '))
    for (const row of table) {
      assert.ok(row.doc.trim() !== '', `${row.key} has a doc line`)
      const values = new KeyValues()
      values.set(row, row.default)
      values.checkInvariants()
    }
  }
})
