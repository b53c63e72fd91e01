import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ProducerSettings } from '../../src/config/mirror-config.js'
import { PartialSendError } from '../../src/ports/partial-send-error.js'
import type { PartitionWrite } from '../../src/ports/ports.js'
import type { KafkaRecord } from '../../src/shared/kafka-record.js'
import { silentLogger } from '../../src/shared/logger.js'
import { wireClusterOptions } from '../../src/kafka/wire/wire-connection-options.js'
import { WireRecordSink } from '../../src/kafka/wire-record-sink.js'
import { uniqueName } from '../helpers/kafka.js'
import { wholeFaultClusters } from './fault-clusters.js'

const SETTINGS: ProducerSettings = {
  acks: -1, compression: 'none', compressionSet: false, batchSizeBytes: 1 << 20, lingerMs: 0, idempotent: true, maxRequestSizeBytes: 1 << 20,
}

function records (count: number, label: string): KafkaRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: String(i), timestamp: String(Date.now()), key: Buffer.from(`${label}-k${i}`), value: Buffer.from(`${label}-v${i}`),
  }))
}

test(
  'sends that time out while the target leader is hung (SIGSTOP), sent again as the worker does, write their records once, at the exact offset',
  { timeout: 300_000 },
  async t => {
    const { target } = await wholeFaultClusters()
    const topic = uniqueName('wire-hung')
    await target.withAdmin(admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 3 }] }))
    await target.waitUntilIsrFull([topic])
    const connection = target.connection('wire-sink-hung-leader')
    const sink = new WireRecordSink(connection, wireClusterOptions(connection)!, SETTINGS, silentLogger)
    t.after(() => sink.stop())
    await sink.start()

    const first: PartitionWrite[] = [{ topic, partition: 0, records: records(10, 'before') }]
    assert.deepEqual(await sink.send(first, 30_000), [{ topic, partition: 0, baseOffset: 0n }])

    const leader = await target.withAdmin(async admin => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions[0]!.leader)
    const hung = target.node(leader)
    await hung.freeze()
    t.after(() => hung.thaw())

    // The same writes again after each failure, as the pipeline's worker retries: the records are one batch, handed to the produce sink once.
    const writes: PartitionWrite[] = [{ topic, partition: 0, records: records(25, 'during') }]
    let timeouts = 0
    let acks: Awaited<ReturnType<WireRecordSink['send']>> | undefined
    const deadline = Date.now() + 240_000
    while (acks === undefined && Date.now() < deadline) {
      try {
        acks = await sink.send(writes, 1_000)
      } catch (error) {
        assert.ok(error instanceof PartialSendError && error.retriable, `a retriable partial failure: ${String(error)}`)
        assert.equal(error.failed[0]?.error.kafkaCode, 'REQUEST_TIMED_OUT')
        assert.equal(sink.connected, false)
        sink.checkInvariants()
        // Thawed after three sends that timed out: the batch, unanswered meanwhile, is still the one in the produce sink.
        if (++timeouts === 3) await hung.thaw()
      }
    }
    assert.ok(timeouts >= 3, `sends timed out while the leader was hung (${timeouts})`)
    assert.deepEqual(acks, [{ topic, partition: 0, baseOffset: 10n }], 'acknowledged once, at the offset after the first batch')
    assert.equal(sink.connected, true)
    sink.checkInvariants()

    const ends = await target.withAdmin(admin => admin.fetchTopicOffsets(topic))
    assert.equal(ends[0]?.high, '35', 'the log holds 10 + 25 records: no copy of the timed-out batch')
    await target.withAdmin(admin => admin.deleteTopics({ topics: [topic] }))
  }
)
