import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assignCooperativeSticky, type AssignorMember } from '../../../../../src/kafka/wire/group/cooperative-sticky-assignor.js'
import { partitionKey, type TopicPartition } from '../../../../../src/kafka/wire/group/topic-partition.js'
import { forSeeds } from '../../../../helpers/seeded-random.js'

const COUNTS = new Map([['orders', 12]])
const all = (): TopicPartition[] => Array.from({ length: 12 }, (_, partition) => ({ topic: 'orders', partition }))

function member (memberId: string, ownedPartitions: TopicPartition[] = [], generationId = 1): AssignorMember {
  return { memberId, topics: ['orders'], ownedPartitions, generationId }
}

/** Every partition at most once over the assignment. */
function assertDisjoint (assignment: Map<string, TopicPartition[]>): void {
  const seen = new Set<string>()
  for (const partitions of assignment.values()) {
    for (const partition of partitions) {
      assert.ok(!seen.has(partitionKey(partition)), `${partitionKey(partition)} assigned twice`)
      seen.add(partitionKey(partition))
    }
  }
}

/** Runs rebalances as the members would: each owns what it was assigned, until an assignment changes nothing. */
function settle (members: string[], owned: Map<string, TopicPartition[]>): { assignment: Map<string, TopicPartition[]>, rounds: number } {
  for (let rounds = 1; rounds <= 5; rounds++) {
    const assignment = assignCooperativeSticky(COUNTS, members.map(id => member(id, owned.get(id) ?? [], rounds)))
    assertDisjoint(assignment)
    const changed = members.some(id => (assignment.get(id) ?? []).map(partitionKey).join() !== (owned.get(id) ?? []).map(partitionKey).join())
    if (!changed) return { assignment, rounds }
    owned = assignment
  }
  assert.fail('the assignment did not settle within 5 rebalances')
}

test('three new members get four partitions each, every partition once', () => {
  const assignment = assignCooperativeSticky(COUNTS, [member('a'), member('b'), member('c')])
  assertDisjoint(assignment)
  assert.deepEqual([...assignment.values()].map(list => list.length), [4, 4, 4])
})

test('balanced within one partition for any member count', () => {
  for (let n = 1; n <= 13; n++) {
    const ids = Array.from({ length: n }, (_, i) => `m${i}`)
    const assignment = assignCooperativeSticky(COUNTS, ids.map(id => member(id)))
    const sizes = [...assignment.values()].map(list => list.length)
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `${n} members: ${sizes.join(',')}`)
    assert.equal(sizes.reduce((a, b) => a + b, 0), 12)
  }
})

test('sticky: a member joining takes partitions from the others, who keep the rest; nothing moves in the same round', () => {
  const first = assignCooperativeSticky(COUNTS, [member('a'), member('b')])
  // Round 1 with c joining: a and b own six each. KIP-429: c gets nothing yet, a and b each give two up.
  const round1 = assignCooperativeSticky(COUNTS, [member('a', first.get('a')!), member('b', first.get('b')!), member('c')])
  assert.deepEqual(round1.get('c'), [])
  assert.equal(round1.get('a')!.length, 4)
  assert.equal(round1.get('b')!.length, 4)
  for (const id of ['a', 'b']) {
    const kept = new Set(first.get(id)!.map(partitionKey))
    assert.ok(round1.get(id)!.every(partition => kept.has(partitionKey(partition))), `${id} keeps only partitions it owned`)
  }
  // Round 2: a and b revoked what they lost; c takes the four free partitions.
  const round2 = assignCooperativeSticky(COUNTS, [member('a', round1.get('a')!, 2), member('b', round1.get('b')!, 2), member('c', [], 2)])
  assert.deepEqual(round2.get('a'), round1.get('a'))
  assert.deepEqual(round2.get('b'), round1.get('b'))
  assert.equal(round2.get('c')!.length, 4)
  assertDisjoint(round2)
})

test('two-phase: no partition is assigned to a member while another member owns it, over random joins and leaves', () => {
  forSeeds(20, random => {
    let owned = new Map<string, TopicPartition[]>()
    let members = ['a', 'b', 'c']
    for (let round = 1; round <= 60; round++) {
      if (random.chance(0.3)) {
        members = random.chance(0.5) && members.length > 1 ? members.filter(id => id !== random.pick(members)) : [...members, `m${round}`]
      }
      const ownerOf = new Map<string, string>()
      for (const id of members) for (const partition of owned.get(id) ?? []) ownerOf.set(partitionKey(partition), id)
      const assignment = assignCooperativeSticky(COUNTS, members.map(id => member(id, owned.get(id) ?? [], round)))
      assertDisjoint(assignment)
      for (const [id, partitions] of assignment) {
        for (const partition of partitions) {
          const owner = ownerOf.get(partitionKey(partition))
          assert.ok(owner === undefined || owner === id, `round ${round}: ${partitionKey(partition)} given to ${id} while ${owner} owns it`)
        }
      }
      owned = assignment
    }
    // Once membership stops changing, two rounds at most give every partition out, balanced.
    const { assignment } = settle(members, owned)
    const sizes = [...assignment.values()].map(list => list.length)
    assert.equal(sizes.reduce((a, b) => a + b, 0), 12)
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, sizes.join(','))
  })
})

test('a member leaving: its partitions go to the others in one rebalance, the others keep theirs', () => {
  const { assignment } = settle(['a', 'b', 'c'], new Map())
  const after = assignCooperativeSticky(COUNTS, [member('a', assignment.get('a')!, 9), member('b', assignment.get('b')!, 9)])
  assert.equal(after.get('a')!.length + after.get('b')!.length, 12)
  for (const id of ['a', 'b']) {
    const now = new Set(after.get(id)!.map(partitionKey))
    assert.ok(assignment.get(id)!.every(partition => now.has(partitionKey(partition))), `${id} kept every partition it owned`)
  }
})

test('claims: the higher generation wins a partition two members claim; equal generations cancel', () => {
  const p0 = { topic: 'orders', partition: 0 }
  const newer = assignCooperativeSticky(COUNTS, [member('a', [p0], 5), member('b', [p0], 4)])
  assert.ok(newer.get('a')!.some(p => p.partition === 0))
  assert.ok(!newer.get('b')!.some(p => p.partition === 0))
  const tied = assignCooperativeSticky(COUNTS, [member('a', [p0], 5), member('b', [p0], 5)])
  assertDisjoint(tied)
  assert.equal([...tied.values()].flat().filter(p => p.partition === 0).length, 1)
})

test('unknown topics and partitions beyond the count are not assigned; a member of other topics gets none of these', () => {
  const assignment = assignCooperativeSticky(COUNTS, [
    { memberId: 'a', topics: ['orders', 'gone'], ownedPartitions: [{ topic: 'orders', partition: 40 }], generationId: 1 },
    { memberId: 'b', topics: ['payments'], ownedPartitions: [], generationId: 1 },
  ])
  assert.deepEqual(assignment.get('a'), all())
  assert.deepEqual(assignment.get('b'), [])
})
