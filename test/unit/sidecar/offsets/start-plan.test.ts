import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeMm2SourcePosition } from '../../../../src/mirror-topics/mm2-source-positions.js'
import { OffsetSyncIndex } from '../../../../src/mirror-topics/offset-sync-index.js'
import { translateCommittedOffsets, withoutForeignPrefix } from '../../../../src/check/translate/translate-group.js'
import { renderStartPlan } from '../../../../src/sidecar/offsets/start-plan-text.js'
import { planStarts, type PartitionLog } from '../../../../src/sidecar/offsets/start-plan.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'

const key = (connector: string, where: unknown): Buffer => Buffer.from(JSON.stringify([connector, where]))
const value = (offset: unknown): Buffer => Buffer.from(JSON.stringify({ offset }))

test(
  "a record of Connect's offsets topic is MirrorMaker 2's position of its connector and source cluster: the stored offset + 1, any field order; a null value or a negative offset removes it",
  () => {
    assert.deepEqual(
      decodeMm2SourcePosition(key('MirrorSourceConnector', { cluster: 'A', partition: 2, topic: 'orders' }), value(41), 'MirrorSourceConnector', 'A'),
      { topic: 'orders', partition: 2, next: 42n }
    )
    assert.deepEqual(
      decodeMm2SourcePosition(key('A->B.MirrorSourceConnector', { topic: 'orders', partition: 0, cluster: 'A' }), value(0), 'A->B.MirrorSourceConnector', 'A'),
      { topic: 'orders', partition: 0, next: 1n }
    )
    assert.deepEqual(
      decodeMm2SourcePosition(key('MirrorSourceConnector', { cluster: 'A', partition: 2, topic: 'orders' }), null, 'MirrorSourceConnector', 'A'),
      {
        topic: 'orders',
        partition: 2,
        next: undefined,
      }
    )
    assert.deepEqual(
      decodeMm2SourcePosition(key('MirrorSourceConnector', { cluster: 'A', partition: 2, topic: 'orders' }), value(-1), 'MirrorSourceConnector', 'A'),
      { topic: 'orders', partition: 2, next: undefined }
    )
    assert.equal(
      decodeMm2SourcePosition(key('MirrorSourceConnector', { cluster: 'C', partition: 2, topic: 'orders' }), value(41), 'MirrorSourceConnector', 'A'),
      undefined,
      'another source cluster'
    )
    assert.equal(
      decodeMm2SourcePosition(key('MirrorCheckpointConnector', { cluster: 'A', partition: 2, topic: 'orders' }), value(41), 'MirrorSourceConnector', 'A'),
      undefined,
      'another connector'
    )
    assert.equal(decodeMm2SourcePosition(Buffer.from('not json'), value(41), 'MirrorSourceConnector', 'A'), undefined)
    assert.equal(decodeMm2SourcePosition(null, value(41), 'MirrorSourceConnector', 'A'), undefined)
  }
)

const logs: PartitionLog[] = [0, 1, 2, 3, 4, 5].map(partition => ({ topic: 't', partition, logStartOffset: partition === 4 ? 50n : 0n, highWatermark: 100n }))
const at = (entries: Array<[number, bigint]>): Map<string, bigint> => new Map(entries.map(([p, o]) => [partitionKey('t', p), o]))

test('the flow\'s own position wins; MirrorMaker 2\'s position starts a partition the group never committed, within its log; else auto.offset.reset', () => {
  const starts = planStarts({
    partitions: logs,
    committed: at([[0, 70n], [1, 90n]]),
    mm2: at([[0, 80n], [1, 60n], [2, 30n], [3, 150n], [4, 20n]]),
    autoOffsetReset: 'earliest',
  })
  assert.deepEqual(starts.map(s => [s.partition, s.offset, s.from, s.mm2Next]), [
    [0, 70n, 'group', 80n], [1, 90n, 'group', 60n], [2, 30n, 'mm2', 30n], [3, 0n, 'reset', 150n], [4, 50n, 'mm2', 20n], [5, 0n, 'reset', undefined],
  ])
  assert.match(
    starts[0]?.note ?? '',
    /MirrorMaker 2's position 80 is 10 ahead of the group's committed offset: it copied after this flow stopped; to start from MirrorMaker 2's position instead, delete the group's offsets/
  )
  assert.equal(starts[1]?.note, undefined, 'the group ahead of MirrorMaker 2: nothing to say')
  assert.match(starts[3]?.note ?? '', /past the log end offset 100 \(the topic was recreated since\): not used/)
  assert.match(starts[4]?.note ?? '', /offsets 20 to 49 were deleted by retention/)
  const latest = planStarts({ partitions: logs, committed: new Map(), mm2: new Map(), autoOffsetReset: 'latest' })
  assert.deepEqual(latest.map(s => s.offset), [100n, 100n, 100n, 100n, 100n, 100n])
})

test('exactly-once: the position on the target wins over the group and MirrorMaker 2', () => {
  const starts = planStarts({
    partitions: logs.slice(0, 2),
    committed: at([[0, 40n]]),
    positions: at([[0, 45n]]),
    mm2: at([
      [0, 60n],
      [1, 10n],
    ]),
    autoOffsetReset: 'earliest',
  })
  assert.deepEqual(starts.map(s => [s.offset, s.from]), [[45n, 'positions'], [10n, 'mm2']])
  assert.match(starts[0]?.note ?? '', /15 ahead of the exactly-once position/)
})

test('--dry-run\'s table names each partition\'s start, why, and MirrorMaker 2\'s position', () => {
  const partitions = planStarts({ partitions: logs.slice(0, 3), committed: at([[0, 70n]]), mm2: at([[1, 30n]]), autoOffsetReset: 'earliest' })
  const text = renderStartPlan(
    {
      flow: 'A->B',
      groupId: 'mirror-sidecar.A-to-B',
      mm2: { offsetsTopic: 'mm2-offsets.A.internal', cluster: 'B', connector: 'MirrorSourceConnector', read: true, found: 1 },
      partitions,
    },
    'earliest'
  )
  assert.equal(text, [
    'flow A->B: group mirror-sidecar.A-to-B',
    'MirrorMaker 2\'s positions: mm2-offsets.A.internal on B, connector MirrorSourceConnector: 1 of 3 partitions',
    'TOPIC  PARTITION  START  FROM                             MM2  NOTE',
    't      0          70     own group                        -',
    't      1          30     MirrorMaker 2\'s Connect offsets  30',
    't      2          0      auto.offset.reset=earliest       -',
    '',
  ].join('\n'))
})

test(
  "a group below the first record the flow copied is not translated forward while the target still holds another mirror's copies before it (MirrorMaker 2 before a takeover); with them gone, it is",
  async () => {
    const index = new OffsetSyncIndex()
    // The flow took over at source offset 500, written from target offset 480 on (MirrorMaker 2 copied 0..499 to 0..479: gaps on the source).
    index.apply({ kind: 'range', range: { sourceTopic: 't', targetTopic: 'A.t', partition: 0, sourceStart: 500n, targetStart: 480n, length: 100n } })
    const rows = translateCommittedOffsets(
      'app',
      [
        { topic: 't', partition: 0, offset: 420n },
        { topic: 't', partition: 1, offset: 7n },
      ],
      index
    )
    assert.deepEqual(
      rows.map(r => [r.partition, r.status, r.targetOffset]),
      [
        [0, 'translated', 480n],
        [1, 'no-syncs', undefined],
      ],
      'the rule alone maps 420 forward to 480'
    )
    const logs = (logStartOffset: bigint) => async () => new Map([[0, { logStartOffset, highWatermark: 580n }]])
    assert.deepEqual(
      (await withoutForeignPrefix(rows, index, logs(0n))).map(r => [r.partition, r.status, r.targetOffset]),
      [
        [0, 'no-syncs', undefined],
        [1, 'no-syncs', undefined],
      ]
    )
    assert.deepEqual(
      (await withoutForeignPrefix(rows, index, logs(480n))).map(r => [r.partition, r.status, r.targetOffset]),
      [
        [0, 'translated', 480n],
        [1, 'no-syncs', undefined],
      ],
      'everything before the first copy gone: the next record that exists'
    )
    const above = translateCommittedOffsets('app', [{ topic: 't', partition: 0, offset: 550n }], index)
    assert.deepEqual(
      (await withoutForeignPrefix(above, index, logs(0n))).map(r => r.targetOffset),
      [530n],
      'at or above the first copy: exact'
    )
  }
)
