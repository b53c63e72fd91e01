import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decidePartition, planBlocker, type FailoverPartitionPlan } from '../../../../src/check/translate/group-failover-plan.js'

test('a partition is committed at its exact translation unless the group is already there or past it (never rewound)', () => {
  assert.deepEqual(decidePartition(47n, undefined), { action: 'commit', plannedOffset: 47n })
  assert.deepEqual(decidePartition(47n, 12n), { action: 'commit', plannedOffset: 47n })
  assert.deepEqual(decidePartition(47n, 47n), { action: 'keep-equal', plannedOffset: 47n })
  assert.deepEqual(decidePartition(47n, 100n), { action: 'keep-ahead', plannedOffset: 100n })
  assert.deepEqual(decidePartition(undefined, undefined), { action: 'untranslatable' })
  assert.deepEqual(decidePartition(undefined, 5n), { action: 'untranslatable', plannedOffset: 5n })
})

test('a group is blocked when it has nothing to move, a partition cannot be translated, or it has members where it is written', () => {
  const partition = (action: FailoverPartitionPlan['action']): FailoverPartitionPlan => ({
    group: 'g',
    topic: 't',
    partition: 0,
    currentOffset: 1n,
    translation: action === 'untranslatable' ? 'no-syncs' : 'translated',
    action,
  })
  const idle = { state: 'Empty', members: 0 }
  assert.equal(planBlocker(idle, []), 'no-offsets')
  assert.equal(planBlocker(idle, [partition('commit'), partition('untranslatable')]), 'untranslatable')
  assert.equal(planBlocker({ state: 'Stable', members: 2 }, [partition('commit')]), 'active')
  assert.equal(planBlocker({ state: 'Stable', members: 2 }, [partition('untranslatable')]), 'untranslatable')
  assert.equal(planBlocker(idle, [partition('commit'), partition('keep-ahead'), partition('keep-equal')]), undefined)
  assert.equal(planBlocker({ state: 'Dead', members: 0 }, [partition('commit')]), undefined)
})
