import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  decodeMm2Checkpoint,
  decodeMm2Heartbeat,
  decodeMm2OffsetSync,
  encodeMm2Checkpoint,
  encodeMm2Heartbeat,
  encodeMm2OffsetSync,
  MM2_HEARTBEATS_TOPIC,
  mm2CheckpointsTopicName,
  mm2OffsetSyncsTopicName,
} from '../../../src/mirror-topics/mm2-records.js'

// Kafka's protocol types, as MirrorMaker 2's Struct.write lays them out.
const str = (s: string): Buffer => { const b = Buffer.from(s, 'utf8'); const len = Buffer.alloc(2); len.writeInt16BE(b.length); return Buffer.concat([len, b]) }
const i16 = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b }
const i32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b }
const i64 = (n: bigint): Buffer => { const b = Buffer.alloc(8); b.writeBigInt64BE(n); return b }

test('MirrorMaker 2 offset syncs decode as OffsetSync writes them; anything else is skipped', () => {
  const key = Buffer.concat([str('orders'), i32(3)])
  assert.deepEqual(decodeMm2OffsetSync(key, Buffer.concat([i64(1200n), i64(9_000_000_000n)])), {
    topic: 'orders',
    partition: 3,
    upstreamOffset: 1200n,
    downstreamOffset: 9_000_000_000n,
  })
  assert.equal(decodeMm2OffsetSync(key, i64(1n)), undefined, 'truncated value')
  assert.equal(decodeMm2OffsetSync(key, Buffer.concat([i64(1n), i64(2n), Buffer.from([0])])), undefined, 'trailing bytes')
  assert.equal(decodeMm2OffsetSync(null, Buffer.alloc(16)), undefined)
  assert.equal(decodeMm2OffsetSync(Buffer.from('["range","t",0,"1"]'), Buffer.from('{"v":1}')), undefined, 'the sidecar\'s JSON syncs are not MirrorMaker 2\'s')
  assert.equal(mm2OffsetSyncsTopicName('B'), 'mm2-offset-syncs.B.internal')
})

test('MirrorMaker 2 checkpoints decode as Checkpoint writes them (version 0 header); other versions are skipped', () => {
  const key = Buffer.concat([str('app'), str('A.orders'), i32(0)])
  const value = (version: number): Buffer => Buffer.concat([i16(version), i64(130n), i64(101n), str('')])
  assert.deepEqual(decodeMm2Checkpoint(key, value(0)), {
    group: 'app',
    topic: 'A.orders',
    partition: 0,
    upstreamOffset: 130n,
    downstreamOffset: 101n,
    metadata: '',
  })
  assert.equal(decodeMm2Checkpoint(key, value(1)), undefined)
  assert.equal(decodeMm2Checkpoint(key, null), undefined, 'a tombstone')
  assert.equal(decodeMm2Checkpoint(Buffer.concat([str('app')]), value(0)), undefined)
  assert.equal(mm2CheckpointsTopicName('A'), 'A.checkpoints.internal')
})

test('checkpoints are written byte for byte as Checkpoint.recordKey/recordValue lay them out, and read back', () => {
  const checkpoint = { group: 'app', topic: 'A.orders', partition: 7, upstreamOffset: 130n, downstreamOffset: 9_000_000_001n, metadata: 'm\u00e9ta' }
  const { key, value } = encodeMm2Checkpoint(checkpoint)
  assert.deepEqual(key, Buffer.concat([str('app'), str('A.orders'), i32(7)]))
  assert.deepEqual(value, Buffer.concat([i16(0), i64(130n), i64(9_000_000_001n), str('m\u00e9ta')]))
  assert.deepEqual(decodeMm2Checkpoint(key, value), checkpoint)
})

test('offset syncs are written as OffsetSync lays them out (no version header), and read back', () => {
  const sync = { topic: 'orders', partition: 2, upstreamOffset: 5n, downstreamOffset: 3n }
  const { key, value } = encodeMm2OffsetSync(sync)
  assert.deepEqual(key, Buffer.concat([str('orders'), i32(2)]))
  assert.deepEqual(value, Buffer.concat([i64(5n), i64(3n)]))
  assert.deepEqual(decodeMm2OffsetSync(key, value), sync)
})

test('heartbeats are written as Heartbeat lays them out (key of both aliases, version 0, timestamp), and read back', () => {
  const heartbeat = { sourceClusterAlias: 'A', targetClusterAlias: 'B', timestampMs: 1_780_000_000_123 }
  const { key, value } = encodeMm2Heartbeat(heartbeat)
  assert.deepEqual(key, Buffer.concat([str('A'), str('B')]))
  assert.deepEqual(value, Buffer.concat([i16(0), i64(1_780_000_000_123n)]))
  assert.deepEqual(decodeMm2Heartbeat(key, value), heartbeat)
  assert.equal(decodeMm2Heartbeat(key, Buffer.concat([i16(1), i64(1n)])), undefined, 'an unknown version')
  assert.equal(decodeMm2Heartbeat(key, null), undefined)
  assert.equal(MM2_HEARTBEATS_TOPIC, 'heartbeats')
})

test('a string longer than Kafka\'s STRING type holds is refused, not truncated', () => {
  assert.throws(
    () => encodeMm2Checkpoint({ group: 'g'.repeat(40_000), topic: 't', partition: 0, upstreamOffset: 0n, downstreamOffset: 0n, metadata: '' }),
    /at most 32767/
  )
})
