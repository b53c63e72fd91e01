import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OffsetSyncIndex } from '../../../../src/mirror-topics/offset-sync-index.js'
import { decodeOffsetSync } from '../../../../src/mirror-topics/offset-sync-record.js'
import { OffsetSyncWriter } from '../../../../src/sidecar/offsets/offset-sync-writer.js'
import { ExactlyOnceLanes } from '../../../../src/sidecar/pipeline/exactly-once-lanes.js'
import type { MirrorBatch } from '../../../../src/ports/mirror-batch.js'
import { partitionKey } from '../../../../src/shared/partition-key.js'
import { PartitionProgress } from '../../../../src/sidecar/pipeline/partition-progress.js'
import type { PartitionAck, PartitionWrite, PositionStore, SourcePosition, TransactionalSink, TransactionRecord } from '../../../../src/ports/ports.js'
import type { WorkerListener } from '../../../../src/sidecar/pipeline/producer-worker.js'
import { silentLogger } from '../../../../src/shared/logger.js'
import { fakeFlowConfig, fetchControl, records } from '../../../helpers/fake-ports.js'

/** Keeps what each transaction carried at its commit; `abort` makes the next commit fail as a fenced one does. */
class RecordingTransactionalSink implements TransactionalSink {
  readonly connected = true
  readonly committed: Array<{ positions: SourcePosition[], records: TransactionRecord[] }> = []
  async start (): Promise<void> {}
  async stop (): Promise<void> {}
  async acquire (): Promise<void> {}
  async release (): Promise<void> {}
  stagePositions (): void {}
  async send (_writes: readonly PartitionWrite[]): Promise<PartitionAck[]> { return [] }
  async commitTransaction (positions: readonly SourcePosition[], records: readonly TransactionRecord[] = []): Promise<{ committed: Promise<void> }> {
    this.committed.push({ positions: [...positions], records: [...records] })
    return { committed: Promise.resolve() }
  }
}

function batch (topic: string, partition: number, from: number, count: number): MirrorBatch {
  return {
    sourceTopic: topic,
    targetTopic: topic,
    partition,
    records: records(from, count),
    firstOffset: BigInt(from),
    nextOffset: BigInt(from + count),
    bytes: count * 10,
    pollTimeMs: 0,
  }
}

test(
  'exactly-once: a lane transaction carries the offset syncs of its own records (ranges and position), so a crash after its commit leaves no hole in them',
  async () => {
    const flow = fakeFlowConfig({
      offsetSyncs: { enabled: true, topic: 'mirror-offset-syncs.source.internal', replicationFactor: 1 },
      exactlyOnce: {
        key: '--exactly.once',
        commitIntervalMs: 60_000,
        transactionTimeoutMs: 60_000,
        positionsTopic: 'mirror-positions.source.internal',
        positionsReplicationFactor: 1,
      },
    })
    // Never started: a flush that had anything to write would fail (no client), which is what the last check relies on.
    const writer = new OffsetSyncWriter(flow, { logger: silentLogger })
    const sinks = [new RecordingTransactionalSink()]
    const positions: PositionStore = { start: async () => {}, stop: async () => {}, read: async () => new Map() }
    const progress = new PartitionProgress()
    // As the flow's AckRecorder: acknowledgements of a committed transaction reach the offset-sync writer.
    const inner: WorkerListener = {
      acknowledged: (b, segments) => {
        progress.acknowledged(b, 0)
        writer.acknowledged(b, segments)
      },
      skipped: () => {},
      produceRequest: () => {},
      retry: () => {},
    }
    const lanes = new ExactlyOnceLanes({
      sinks,
      positions,
      progress,
      commitIntervalMs: 60_000,
      heartbeatIntervalMs: 50,
      labels: { flow: 'a->b', source: 'a', target: 'b' },
      observer: {},
      logger: silentLogger,
      signal: new AbortController().signal,
      onFatal: error => { throw error },
      seek: () => {},
      describe: writer.transactionRecords.bind(writer),
      acks: inner,
      held: { capacityBytes: 1_000_000, releaseBytes: () => {} },
    })
    lanes.assign(new Set([partitionKey('t', 0)]))
    const ticket = await lanes.admit('t', 0, fetchControl()) as number
    const { transaction, listener } = lanes.lane(0)
    // Source 0..9 went to target 100..109, source 10..14 to 110..114 (one request each).
    const first = batch('t', 0, 0, 10)
    const second = batch('t', 0, 10, 5)
    for (const b of [first, second]) {
      lanes.stamp(b, ticket)
      progress.admitted(b)
    }
    await transaction.write([first, second], async written => {
      let target = 100n
      for (const b of written) {
        listener.acknowledged(b, [{ from: 0, count: b.records.length, targetBaseOffset: target }], 0, b.records.length)
        target += BigInt(b.records.length)
      }
    })
    await transaction.idle()

    const [commit] = sinks[0]?.committed ?? []
    assert.ok(commit !== undefined, 'the transaction committed')
    assert.deepEqual(commit.positions, [{ topic: 't', partition: 0, offset: 15n }])
    assert.ok(commit.records.length > 0, 'the transaction carries offset syncs')
    assert.ok(commit.records.every(r => r.topic === 'mirror-offset-syncs.source.internal'), 'into the offset-syncs topic')
    // What a reader of the syncs topic makes of the transaction's records alone (as after a kill -9 right after the commit).
    const index = new OffsetSyncIndex()
    for (const record of commit.records) {
      const entry = decodeOffsetSync(record.key.toString(), record.value.toString())
      assert.ok(entry !== undefined, `a sync record: ${record.key}`)
      index.apply(entry)
    }
    assert.deepEqual(index.ranges('t', 0).map(r => [r.sourceStart, r.targetStart, r.length]), [[0n, 100n, 15n]])
    assert.deepEqual(index.position('t', 0), { sourceTopic: 't', targetTopic: 't', partition: 0, sourceNext: 15n, targetNext: 115n })
    for (const offset of [0n, 7n, 10n, 14n]) {
      assert.deepEqual(
        index.translate('t', 0, offset),
        { status: 'translated', targetTopic: 't', targetOffset: 100n + offset, basis: 'range' },
      `source ${offset}`
      )
    }
    assert.deepEqual(index.translate('t', 0, 15n), { status: 'translated', targetTopic: 't', targetOffset: 115n, basis: 'position' })
    // The ranges are durable with the transaction: the next source commit's flush does not write them again.
    await writer.flush()
  }
)

test(
  'exactly-once: the syncs of a transaction are worked out from its own acknowledgements alone: a range per run of consecutive offsets, a position per partition',
  () => {
    const flow = fakeFlowConfig({
      offsetSyncs: { enabled: true, topic: 'syncs', replicationFactor: 1 },
      exactlyOnce: { key: '--exactly.once', commitIntervalMs: 100, transactionTimeoutMs: 60_000, positionsTopic: 'positions', positionsReplicationFactor: 1 },
    })
    const writer = new OffsetSyncWriter(flow, { logger: silentLogger })
    const earlier = batch('t', 1, 0, 3)
    writer.acknowledged(earlier, [{ from: 0, count: 3, targetBaseOffset: 0n }])
    // The next transaction: source 3..5 at target 4..6 (the marker of the first one is at 3), and a gap in source offsets at 6..7.
    const next = { ...batch('t', 1, 3, 3) }
    const after = { ...batch('t', 1, 8, 2) }
    const records = writer.transactionRecords([
      { batch: next, segments: [{ from: 0, count: 3, targetBaseOffset: 4n }] },
      { batch: after, segments: [{ from: 0, count: 2, targetBaseOffset: 7n }] },
    ], [{ topic: 't', partition: 1, offset: 10n }])
    const entries = records.map(r => decodeOffsetSync(r.key.toString(), r.value.toString()))
    assert.deepEqual(
      entries.filter(e => e?.kind === 'range').map(e => (e?.kind === 'range' ? [e.range.sourceStart, e.range.targetStart, e.range.length] : [])),
      [
        [3n, 4n, 3n],
        [8n, 7n, 2n],
      ]
    )
    assert.deepEqual(
      entries.filter(e => e?.kind === 'position').map(e => (e?.kind === 'position' ? [e.position.sourceNext, e.position.targetNext] : [])),
      [[10n, 9n]]
    )
  }
)
