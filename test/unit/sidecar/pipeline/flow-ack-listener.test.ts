import assert from 'node:assert/strict'
import { test } from 'node:test'
import { flowAckListener, type AckGuard, type HoldingListener, type SyncListener } from '../../../../src/sidecar/pipeline/flow-ack-listener.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import type { AckSegment, TransactionAck } from '../../../../src/ports/ports.js'
import { records } from '../../../helpers/fake-ports.js'

const batch: MirrorBatch = {
  sourceTopic: 't',
  targetTopic: 't',
  partition: 0,
  records: records(0, 2),
  firstOffset: 0n,
  nextOffset: 2n,
  bytes: 20,
  pollTimeMs: 0,
}
const segments: readonly AckSegment[] = [{ from: 0, count: 2, targetBaseOffset: 0n }]
const acks: readonly TransactionAck[] = [{ batch, segments }]

/** The four parts, each noting its calls in `calls`; `refuse` makes the guard refuse the next flushes, `fail` makes a part's flush fail. */
function parts (calls: string[]): {
  guard: AckGuard & { refuse: Error | undefined }
  offsetSyncs: SyncListener & { fail: Error | undefined }
  mm2OffsetSyncs: SyncListener & { fail: Error | undefined }
  digests: HoldingListener & { fail: Error | undefined, hashing: Promise<void> }
} {
  const sync = (name: string): SyncListener & { fail: Error | undefined } => {
    const part = {
      fail: undefined as Error | undefined,
      acknowledged: () => { calls.push(`${name} acknowledged`) },
      flush: async () => {
        calls.push(`${name} flush`)
        if (part.fail !== undefined) throw part.fail
      },
      transactionRecords: () => [{ topic: name, key: 'k', value: 'v' }],
    }
    return part
  }
  const guard = {
    refuse: undefined as Error | undefined,
    acknowledged: () => { calls.push('guard acknowledged') },
    beforeFlush: async () => {
      calls.push('guard check')
      if (guard.refuse !== undefined) throw guard.refuse
    },
  }
  const digests = {
    fail: undefined as Error | undefined,
    hashing: Promise.resolve(),
    acknowledged: () => { calls.push('digests acknowledged') },
    heldUntil: () => digests.hashing,
    flush: async () => {
      calls.push('digests flush')
      if (digests.fail !== undefined) throw digests.fail
    },
  }
  return { guard, offsetSyncs: sync('offset syncs'), mm2OffsetSyncs: sync('mm2 syncs'), digests }
}

test('Invariant A: the guard hears each acknowledgement first, and a flush it refuses flushes no part', async () => {
  const calls: string[] = []
  const all = parts(calls)
  const listener = flowAckListener(all)
  listener.acknowledged(batch, segments)
  assert.deepEqual(calls, ['guard acknowledged', 'offset syncs acknowledged', 'mm2 syncs acknowledged', 'digests acknowledged'])
  calls.length = 0
  await listener.flush([])
  assert.deepEqual(calls, ['guard check', 'offset syncs flush', 'mm2 syncs flush', 'digests flush'])
  calls.length = 0
  all.guard.refuse = new Error('records lost')
  await assert.rejects(listener.flush([]), /records lost/)
  assert.deepEqual(calls, ['guard check'])
})

test('Invariant B: a batch is held as long as the digests read it, with or without the sync writers; without digests nothing holds it', () => {
  const all = parts([])
  const hashing = new Promise<void>(() => {})
  all.digests.hashing = hashing
  assert.equal(flowAckListener(all).heldUntil?.(batch), hashing)
  assert.equal(flowAckListener({ guard: all.guard, digests: all.digests }).heldUntil?.(batch), hashing)
  assert.equal(flowAckListener({ guard: all.guard, offsetSyncs: all.offsetSyncs, mm2OffsetSyncs: all.mm2OffsetSyncs }).heldUntil, undefined)
})

test('Invariant C: a transaction carries the sidecar\'s syncs, then MirrorMaker 2\'s; without a sync writer there are no transaction records', () => {
  const all = parts([])
  assert.deepEqual(flowAckListener(all).transactionRecords?.(acks, []).map(r => r.topic), ['offset syncs', 'mm2 syncs'])
  assert.deepEqual(flowAckListener({ guard: all.guard, mm2OffsetSyncs: all.mm2OffsetSyncs }).transactionRecords?.(acks, []).map(r => r.topic), ['mm2 syncs'])
  assert.equal(flowAckListener({ guard: all.guard, digests: all.digests }).transactionRecords, undefined)
})

test('Invariant D: a flush waits for every part, and throws the first failure in the order offset syncs, MirrorMaker 2\'s syncs, digests', async () => {
  const calls: string[] = []
  const all = parts(calls)
  const listener = flowAckListener(all)
  all.digests.fail = new Error('digests not written')
  all.mm2OffsetSyncs.fail = new Error('mm2 syncs not written')
  await assert.rejects(listener.flush([]), /mm2 syncs not written/)
  assert.deepEqual(calls, ['guard check', 'offset syncs flush', 'mm2 syncs flush', 'digests flush'], 'every part was flushed')
  all.offsetSyncs.fail = new Error('offset syncs not written')
  await assert.rejects(listener.flush([]), /offset syncs not written/)
  all.offsetSyncs.fail = undefined
  all.mm2OffsetSyncs.fail = undefined
  await assert.rejects(listener.flush([]), /digests not written/)
})

test('the guard alone: every acknowledgement reaches it, and a flush is its check', async () => {
  const calls: string[] = []
  const listener = flowAckListener({ guard: parts(calls).guard })
  listener.acknowledged(batch, segments)
  await listener.flush()
  assert.deepEqual(calls, ['guard acknowledged', 'guard check'])
  assert.equal(listener.heldUntil, undefined)
  assert.equal(listener.transactionRecords, undefined)
})
