import assert from 'node:assert/strict'
import { test } from 'node:test'
import { unmirroredRecords } from '../../../../src/check/translate/unmirrored-records.js'
import { OffsetSyncIndex } from '../../../../src/mirror-topics/offset-sync-index.js'

const base = { sourceTopic: 'orders', targetTopic: 'orders' }

test('records not yet mirrored: the source end past the furthest range or position; all of the log without syncs', () => {
  const syncs = new OffsetSyncIndex()
  syncs.apply({ kind: 'range', range: { ...base, partition: 0, sourceStart: 0n, targetStart: 5n, length: 30n } })
  syncs.apply({ kind: 'range', range: { ...base, partition: 0, sourceStart: 30n, targetStart: 35n, length: 10n } })
  syncs.apply({ kind: 'position', position: { ...base, partition: 1, sourceNext: 20n, targetNext: 20n } })
  syncs.apply({ kind: 'range', range: { ...base, partition: 1, sourceStart: 0n, targetStart: 0n, length: 12n } })
  const rows = unmirroredRecords(syncs, [
    { topic: 'orders', partition: 0, logStartOffset: 0n, endOffset: 44n },
    { topic: 'orders', partition: 1, logStartOffset: 0n, endOffset: 20n },
    { topic: 'orders', partition: 2, logStartOffset: 8n, endOffset: 15n },
  ])
  assert.deepEqual(rows.map(r => [r.partition, r.mirroredUpTo, r.records]), [
    [0, 40n, 4n],
    [1, 20n, 0n],
    [2, undefined, 7n],
  ])
})
