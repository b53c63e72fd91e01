import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Mm2OffsetSyncEmitter } from '../../../../src/sidecar/offsets/mm2-offset-sync-emitter.js'
import { flowAckListener, type SyncListener } from '../../../../src/sidecar/pipeline/flow-ack-listener.js'
import { decodeMm2OffsetSync } from '../../../../src/mirror-topics/mm2-records.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import type { TransactionRecord } from '../../../../src/ports/ports.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { fakeFlowConfig, records } from '../../../helpers/fake-ports.js'

const exactlyOnce = {
  key: '--exactly.once',
  commitIntervalMs: 60_000,
  transactionTimeoutMs: 60_000,
  positionsTopic: 'mirror-positions.source.internal',
  positionsReplicationFactor: 1,
}
const mm2 = (location: 'source' | 'target') => ({
  location,
  topic: location === 'source' ? 'mm2-offset-syncs.B.internal' : 'mm2-offset-syncs.A.internal',
  maxOffsetLagRecords: 10,
  replicationFactor: 1,
})

/** Records at the given source offsets (a compacted source or transaction markers leave gaps). */
function batchAt (offsets: readonly number[]): MirrorBatch {
  const list = offsets.map(offset => ({ ...records(offset, 1)[0]!, offset: String(offset) }))
  return {
    sourceTopic: 'orders',
    targetTopic: 'A.orders',
    partition: 0,
    records: list,
    firstOffset: BigInt(offsets[0]!),
    nextOffset: BigInt(offsets.at(-1)! + 1),
    bytes: list.length * 10,
    pollTimeMs: 0,
  }
}

const decoded = (records: readonly TransactionRecord[]): Array<[number, number]> => records.map(r => {
  const sync = decodeMm2OffsetSync(r.key as Buffer, r.value as Buffer)
  assert.ok(sync !== undefined && sync.topic === 'orders' && sync.partition === 0)
  return [Number(sync.upstreamOffset), Number(sync.downstreamOffset)]
})

test(
  "exactly-once with the syncs on the target: a transaction carries MirrorMaker 2's binary OffsetSync records its rules ask for, gaps in the source offsets included",
  () => {
    const flow = fakeFlowConfig({
      exactlyOnce,
      offsetSyncs: { enabled: true, topic: 'mirror-offset-syncs.A.internal', replicationFactor: 1, mm2: mm2('target') },
    })
    const emitter = Mm2OffsetSyncEmitter.of(flow, { logger: silentLogger })
    assert.ok(emitter !== undefined)
    const offsets = [...Array.from({ length: 15 }, (_, i) => i), 17, 18, 19] // 15 and 16: a marker and an aborted record
    const inTransaction = emitter.transactionRecords([{ batch: batchAt(offsets), segments: [{ from: 0, count: offsets.length, targetBaseOffset: 100n }] }])
    assert.ok(inTransaction.every(r => r.topic === 'mm2-offset-syncs.A.internal' && Buffer.isBuffer(r.key)))
    assert.deepEqual(decoded(inTransaction), [
      [0, 100],
      [11, 111],
      [17, 115],
    ])
  }
)

test(
  'with the syncs on the source, exactly-once transactions carry none of them (they are written after the commit), and without exactly-once no transaction asks',
  () => {
    const onSource = Mm2OffsetSyncEmitter.of(
      fakeFlowConfig({ exactlyOnce, offsetSyncs: { enabled: true, topic: 'mirror-offset-syncs.A.internal', replicationFactor: 1, mm2: mm2('source') } }),
      { logger: silentLogger }
    )
    assert.deepEqual(onSource?.transactionRecords([{ batch: batchAt([0, 1, 2]), segments: [{ from: 0, count: 3, targetBaseOffset: 0n }] }]), [])
    assert.equal(
      Mm2OffsetSyncEmitter.of(fakeFlowConfig({ offsetSyncs: { enabled: true, topic: 't', replicationFactor: 1 } }), { logger: silentLogger }),
      undefined,
      'MirrorMaker 1 flags: no MirrorMaker 2 syncs'
    )
    assert.equal(
      Mm2OffsetSyncEmitter.of(fakeFlowConfig({ offsetSyncs: { enabled: false, topic: 't', replicationFactor: 1, mm2: mm2('source') } }), {
        logger: silentLogger,
      }),
      undefined,
      'emit.offset-syncs.enabled = false'
    )
  }
)

test('beside the sidecar\'s syncs (flowAckListener): both hear every batch, a transaction holds both\'s records, a flush fails when either fails', async () => {
  const heard: string[] = []
  const inner: SyncListener = {
    acknowledged: () => { heard.push('exact') },
    flush: async () => { throw new Error('exact syncs not written') },
    transactionRecords: () => [{ topic: 'mirror-offset-syncs.A.internal', key: 'k', value: 'v' }],
  }
  const emitter = Mm2OffsetSyncEmitter.of(
    fakeFlowConfig({ exactlyOnce, offsetSyncs: { enabled: true, topic: 'mirror-offset-syncs.A.internal', replicationFactor: 1, mm2: mm2('target') } }),
    { logger: silentLogger }
  )
  const guard = { acknowledged: () => {}, beforeFlush: async () => {} }
  const both = flowAckListener({ guard, offsetSyncs: inner, mm2OffsetSyncs: emitter })
  assert.ok(both.transactionRecords !== undefined)
  const acks = [{ batch: batchAt([0, 1]), segments: [{ from: 0, count: 2, targetBaseOffset: 0n }] }]
  assert.deepEqual(both.transactionRecords(acks, []).map(r => r.topic), ['mirror-offset-syncs.A.internal', 'mm2-offset-syncs.A.internal'])
  both.acknowledged(batchAt([0, 1]), acks[0]!.segments)
  assert.deepEqual(heard, ['exact'])
  await assert.rejects(both.flush([]), /exact syncs not written/)
  const alone = flowAckListener({ guard, offsetSyncs: inner })
  assert.deepEqual(alone.transactionRecords?.(acks, []).map(r => r.topic), ['mirror-offset-syncs.A.internal'])
})
