import assert from 'node:assert/strict'
import { test } from 'node:test'
import { boardStatus, boardTotals, groupBoard } from '../../../../src/check/translate/group-board.js'
import type { FailoverPartitionPlan, GroupFailoverPlan } from '../../../../src/check/translate/group-failover-plan.js'

const partition = (over: Partial<FailoverPartitionPlan>): FailoverPartitionPlan => ({
  group: 'g',
  topic: 't',
  partition: 0,
  currentOffset: 10n,
  lag: 5n,
  translation: 'translated',
  toTopic: 't',
  translatedOffset: 12n,
  plannedOffset: 12n,
  toLag: 5n,
  action: 'commit',
  ...over,
})
const idle = { state: 'Empty', members: 0 }
const plan = (group: string, over: Partial<GroupFailoverPlan> = {}): GroupFailoverPlan => ({
  group,
  from: idle,
  to: { state: 'Dead', members: 0 },
  partitions: [partition({ group }), partition({ group, partition: 1, reReads: 2n, action: 'keep-equal' })],
  writes: [{ topic: 't', partition: 0, offset: 12n }],
  ...over,
})

test('the board: one line per group with its sums, the blocker before what executing did', () => {
  const plans = [
    plan('a'),
    plan('b', { to: { state: 'Stable', members: 2 }, blocker: 'active' }),
    plan('c', { writes: [] }),
    plan('d', { partitions: [], writes: [], blocker: 'no-offsets' }),
    plan('e'),
  ]
  const rows = groupBoard(plans, [
    { group: 'a', status: 'written', offsets: 1 },
    { group: 'b', status: 'skipped', blocker: 'active' },
    { group: 'e', status: 'refused', kafkaCode: 'UNKNOWN_MEMBER_ID' },
  ])
  assert.deepEqual(rows.map(r => [r.group, r.status, r.toMembers, r.partitions, r.lag, r.toLag, r.reReads, r.writes]), [
    ['a', 'written', 0, 2, 10n, 10n, 2n, 1],
    ['b', 'active', 2, 2, 10n, 10n, 2n, 1],
    ['c', 'moved', 0, 2, 10n, 10n, 2n, 0],
    ['d', 'no-offsets', 0, 0, 0n, 0n, 0n, 0],
    ['e', 'refused', 0, 2, 10n, 10n, 2n, 1],
  ])
  assert.equal(boardStatus(plan('f'), undefined), 'to-move', 'planned, not executed')
  assert.equal(boardStatus(plan('f', { blocker: 'untranslatable' }), { group: 'f', status: 'skipped', blocker: 'untranslatable' }), 'untranslatable')
  assert.deepEqual(boardTotals(rows), { moved: 1, 'to-move': 0, written: 1, active: 1, refused: 1, untranslatable: 0, 'no-offsets': 1, failed: 0 })
})
