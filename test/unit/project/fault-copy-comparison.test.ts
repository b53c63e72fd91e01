import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareCopies, describeComparison, type KeyedRecord } from '../../faults/copy-comparison.js'

const records = (partition: number, keys: string): KeyedRecord[] => keys.split(' ').filter(k => k !== '').map(key => ({ partition, key }))

test('a faithful copy has no finding', () => {
  const source = [...records(0, 'a b c'), ...records(1, 'd e')]
  const c = compareCopies(source, [...records(1, 'd e'), ...records(0, 'a b c')])
  assert.deepEqual([c.missing, c.duplicates, c.outOfOrderPartitions, c.partitions.length], [0, 0, 0, 0])
})

test('missing and duplicated keys are counted per partition with the first keys named', () => {
  const c = compareCopies([...records(0, 'a b c d'), ...records(1, 'e f')], [...records(0, 'a b b c c c'), ...records(1, 'e f f')])
  assert.equal(c.missing, 1)
  assert.equal(c.duplicates, 4)
  assert.deepEqual(c.partitions.map(p => [p.partition, p.missing, p.duplicates, p.firstMissingKeys, p.firstDuplicateKeys]), [
    [0, 1, 3, ['d'], ['b', 'c']],
    [1, 0, 1, [], ['f']],
  ])
  assert.equal(c.outOfOrderPartitions, 0, 'a resent tail after the first copies keeps the order')
  assert.match(describeComparison(c), /partition 0: 1 missing, 3 duplicates; first missing d; first duplicated b c/)
})

test('a key the source holds twice must be on the target twice; a key in the wrong partition is missing there and extra in the other', () => {
  const c = compareCopies(records(0, 'a a b'), [...records(0, 'a b'), ...records(1, 'a')])
  assert.equal(c.missing, 1)
  assert.equal(c.duplicates, 1)
  assert.deepEqual(c.partitions.map(p => p.partition), [0, 1])
})

test('reordered first copies are reported with the position where the order leaves the source\'s', () => {
  const c = compareCopies(records(3, 'a b c d'), records(3, 'a c b d'))
  assert.equal(c.outOfOrderPartitions, 1)
  assert.deepEqual(c.partitions[0]?.firstOutOfOrder, { index: 1, sourceKey: 'b', targetKey: 'c' })
})
