/**
 * The group leader's assignment for the classic protocol with cooperative rebalancing (KIP-429), under the
 * name Java's consumer gives it ("cooperative-sticky"), so that our members and Java's can share a group.
 */
import { partitionKey, sortPartitions, type TopicPartition } from './topic-partition.js'

/** The assignor's name in JoinGroup, the same as Kafka's `CooperativeStickyAssignor`. */
export const COOPERATIVE_STICKY = 'cooperative-sticky'

/** What the leader knows of one member from its JoinGroup subscription. */
export interface AssignorMember {
  readonly memberId: string
  readonly topics: readonly string[]
  readonly ownedPartitions: readonly TopicPartition[]
  /** The generation the owned partitions are from; -1 when unknown. */
  readonly generationId: number
}

/**
 * Assigns every partition of the subscribed topics (`partitionCounts`: partitions per topic) to the members.
 *
 * - Sticky: a member keeps the partitions it validly owns, up to its share.
 * - Balanced: with the same subscription everywhere, counts differ by at most one; otherwise each partition
 *   not kept goes to the subscribed member furthest below its share, then to the one holding fewest.
 * - Two-phase (KIP-429): a partition that moves from one owner to another is left out of this assignment;
 *   its old owner, not assigned it, revokes it and joins again, and the next rebalance gives it out. So no
 *   partition is ever assigned to a member while another member of the group may still hold it.
 * - Ownership claims: a partition claimed by several members goes to the claim of the highest generation;
 *   claims of equal generation cancel each other (AbstractStickyAssignor does the same, KIP-792): a member
 *   whose owned partitions are from an older generation may have lost them to another member meanwhile.
 */
export function assignCooperativeSticky (
  partitionCounts: ReadonlyMap<string, number>,
  members: readonly AssignorMember[]
): Map<string, TopicPartition[]> {
  const ordered = [...members].sort((a, b) => a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0)
  const subscribers = new Map<string, Set<string>>()
  for (const member of ordered) {
    for (const topic of member.topics) {
      if (!partitionCounts.has(topic)) continue
      const set = subscribers.get(topic) ?? new Set<string>()
      set.add(member.memberId)
      subscribers.set(topic, set)
    }
  }
  const all: TopicPartition[] = []
  for (const topic of [...subscribers.keys()].sort()) {
    for (let partition = 0; partition < partitionCounts.get(topic)!; partition++) all.push({ topic, partition })
  }

  const owner = validOwners(ordered, subscribers, partitionCounts)
  const assignment = new Map<string, TopicPartition[]>(ordered.map(member => [member.memberId, []]))
  if (ordered.length === 0) return assignment

  // Shares: floor(P / n) each, one more for P mod n members; the extra slots go first to members that own more.
  const base = Math.floor(all.length / ordered.length)
  const ownedCount = new Map(ordered.map(member => [member.memberId, 0]))
  for (const memberId of owner.values()) ownedCount.set(memberId, ownedCount.get(memberId)! + 1)
  const byOwned = [...ordered].sort((a, b) => ownedCount.get(b.memberId)! - ownedCount.get(a.memberId)!)
  const share = new Map(byOwned.map((member, i) => [member.memberId, base + (i < all.length % ordered.length ? 1 : 0)]))

  const unplaced: TopicPartition[] = []
  for (const partition of all) {
    const memberId = owner.get(partitionKey(partition))
    const list = memberId === undefined ? undefined : assignment.get(memberId)!
    if (list !== undefined && list.length < share.get(memberId!)!) list.push(partition)
    else unplaced.push(partition)
  }
  for (const partition of unplaced) {
    let best: string | undefined
    let bestRoom = -Infinity
    let bestCount = Infinity
    for (const memberId of subscribers.get(partition.topic)!) {
      const count = assignment.get(memberId)!.length
      const room = share.get(memberId)! - count
      if (room > bestRoom || (room === bestRoom && count < bestCount)) {
        best = memberId
        bestRoom = room
        bestCount = count
      }
    }
    assignment.get(best!)!.push(partition)
  }

  // KIP-429: a partition moving between two members is taken from the new owner's assignment for this round.
  for (const [memberId, list] of assignment) {
    const kept = list.filter(partition => {
      const previous = owner.get(partitionKey(partition))
      return previous === undefined || previous === memberId
    })
    assignment.set(memberId, sortPartitions(kept))
  }
  return assignment
}

/** Per partition key, the member whose claim to own it stands (see `assignCooperativeSticky`). */
function validOwners (
  members: readonly AssignorMember[],
  subscribers: ReadonlyMap<string, ReadonlySet<string>>,
  partitionCounts: ReadonlyMap<string, number>
): Map<string, string> {
  const claims = new Map<string, { memberId: string | undefined, generationId: number }>()
  for (const member of members) {
    for (const partition of member.ownedPartitions) {
      const count = partitionCounts.get(partition.topic)
      if (count === undefined || partition.partition >= count || subscribers.get(partition.topic)?.has(member.memberId) !== true) continue
      const key = partitionKey(partition)
      const claim = claims.get(key)
      if (claim === undefined || member.generationId > claim.generationId) claims.set(key, { memberId: member.memberId, generationId: member.generationId })
      else if (member.generationId === claim.generationId) claim.memberId = undefined
    }
  }
  const owners = new Map<string, string>()
  for (const [key, claim] of claims) if (claim.memberId !== undefined) owners.set(key, claim.memberId)
  return owners
}
