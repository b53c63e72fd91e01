import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import { PartitionProgress } from '../../../../src/sidecar/pipeline/partition-progress.js'
import { forSeeds } from '../../../helpers/seeded-random.js'

function batch (topic: string, offsets: readonly bigint[], next: bigint): MirrorBatch {
  return {
    sourceTopic: topic,
    targetTopic: topic,
    partition: 0,
    bytes: 1,
    pollTimeMs: 0,
    records: offsets.map(o => ({ offset: String(o), key: null, value: null, timestamp: String(o) })),
    firstOffset: offsets[0] as bigint,
    nextOffset: next,
  }
}

interface Model {
  /** Where the source fetches next. */
  fetchNext: bigint
  /** The group's committed offset. */
  committed: bigint
  /** Batches pushed to the queue and not yet acknowledged, in admission order. */
  readonly unacked: Array<{ batch: MirrorBatch }>
}

test('random operations keep Invariants A-F, and no commit candidate passes a record the target has not acknowledged', () => {
  const topics = ['t', 'u']
  forSeeds(300, random => {
    const progress = new PartitionProgress()
    const models = new Map<string, Model>(topics.map(t => [t, { fetchNext: 0n, committed: 0n, unacked: [] }]))
    let owned = new Set(topics.map(t => partitionKey(t, 0)))
    progress.retain(owned)
    for (let step = 0; step < 200; step++) {
      const topic = random.pick(topics)
      const model = models.get(topic) as Model
      const op = random.int(8) // 3: more fetches
      if (op <= 1 || op === 3) {
        // A fetch: records with gaps (compaction), the part handed over already dropped at intake.
        const offsets: bigint[] = []
        let offset = model.fetchNext
        for (let n = 1 + random.int(4); n > 0; n--) {
          offsets.push(offset)
          offset += 1n + BigInt(random.int(2))
        }
        const keep = progress.admitFrom(topic, 0, offsets.map(o => ({ offset: String(o) })))
        model.fetchNext = offset
        if (keep < offsets.length) {
          const admitted = batch(topic, offsets.slice(keep), offset)
          progress.admitted(admitted)
          if (random.chance(0.9)) model.unacked.push({ batch: admitted })
          else {
            // The queue closed: the batch never reached it and is taken back at once.
            progress.abandoned(admitted)
            model.fetchNext = admitted.firstOffset
          }
        }
      } else if (op === 2 && model.unacked.length > 0) {
        const index = random.int(model.unacked.length)
        progress.acknowledged((model.unacked[index] as { batch: MirrorBatch }).batch, step)
        model.unacked.splice(index, 1)
      } else if (op === 4 && model.unacked.length > 0) {
        // A failed record in any batch: only the head's prefix may count.
        const failed = (random.pick(model.unacked)).batch
        const index = random.int(failed.records.length)
        progress.acknowledgedPrefix(failed, BigInt((failed.records[index] as { offset: string }).offset), step)
      } else if (op === 5) {
        const next = model.fetchNext + BigInt(random.int(3))
        progress.skipped(topic, 0, next)
        model.fetchNext = next
      } else if (op === 6) {
        const candidates = progress.commitCandidates(owned)
        for (const candidate of candidates) {
          const head = models.get(candidate.topic)?.unacked[0]
          if (head !== undefined) {
            const limit = BigInt((head.batch.records.at(-1) as { offset: string }).offset)
            assert.ok(candidate.offset <= limit, `commit of ${candidate.topic} at ${candidate.offset} passes unacknowledged ${limit}`)
          }
        }
        const committable = progress.stillCommittable(candidates, owned)
        progress.committed(committable)
        for (const { topic: t, offset } of committable) (models.get(t) as Model).committed = offset
      } else if (op === 7 && random.chance(0.2)) {
        // A rebalance: in-flight batches of a partition given away leave flight; one that comes back starts over.
        const before = owned
        owned = new Set(topics.filter(() => random.chance(0.7)).map(t => partitionKey(t, 0)))
        progress.retain(owned)
        for (const t of topics) {
          const key = partitionKey(t, 0)
          if (owned.has(key) && before.has(key)) continue
          // Its progress was dropped; one assigned here again is fetched from the group's offset.
          const dropped = models.get(t) as Model
          dropped.unacked.length = 0
          if (owned.has(key)) dropped.fetchNext = dropped.committed
        }
      }
      progress.checkInvariants()
    }
  })
})

test('checkInvariants names the invariant a corrupted state breaks', () => {
  const progress = new PartitionProgress()
  const a = batch('t', [0n, 1n], 2n)
  const b = batch('t', [2n], 3n)
  progress.admitted(a)
  progress.admitted(b)
  progress.checkInvariants()
  // A caller admitting out of offset order breaks A.
  progress.admitted(batch('t', [1n], 2n))
  assert.throws(() => progress.checkInvariants(), /^Error: Invariant A broken: partition t\/0/)

  // acknowledgedPrefix past the head's end breaks C.
  const beyond = new PartitionProgress()
  const c = batch('t', [0n, 1n], 2n)
  beyond.admitted(c)
  beyond.skipped('t', 0, 9n)
  beyond.acknowledgedPrefix(c, 9n, 1)
  assert.throws(() => beyond.checkInvariants(), /Invariant C broken: partition t\/0 may commit 9/)

  // Abandoning a batch that was acknowledged already moves the handed-over offset below the committable one: D.
  const handed = new PartitionProgress()
  const d = batch('t', [0n, 1n], 2n)
  handed.admitted(d)
  handed.acknowledged(d, 1)
  handed.abandoned(d)
  assert.throws(() => handed.checkInvariants(), /Invariant D broken/)
})
