import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import { OffsetSyncPruner } from '../../src/sidecar/offsets/offset-sync-pruner.js'
import { encodeRange, type OffsetRange } from '../../src/mirror-topics/offset-sync-record.js'
import { loadOffsetSyncs } from '../../src/check/translate/offset-sync-store.js'
import { createLogger } from '../../src/shared/logger.js'
import { createTopic, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { writeProperties } from '../helpers/sidecar.js'

test(
  'the pruner tombstones ranges whose target records are gone; translation then starts at the first copy still on the target',
  { timeout: 60_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, target, { partitions: 1 })
    await produce(
      target,
      topic,
      Array.from({ length: 100 }, (_, i) => ({ partition: 0, key: `k${i}`, value: `v${i}` }))
    )
    const syncsTopic = await createTopic(t, target, { name: uniqueName('prune-syncs'), partitions: 1 })

    // Source 0..39 copied to target 0..39, a crash re-copied 10..39 to 40..69, then 40..69 went to 70..99.
    const range = (sourceStart: bigint, targetStart: bigint, length: bigint, mirrored = topic): OffsetRange => ({
      sourceTopic: mirrored,
      targetTopic: mirrored,
      partition: 0,
      sourceStart,
      targetStart,
      length,
    })
    const gone = uniqueName('deleted-topic')
    const ranges = [range(0n, 0n, 40n), range(10n, 40n, 30n), range(40n, 70n, 30n), range(0n, 0n, 10n, gone), range(10n, 10n, 10n, gone)]
    await produce(
      target,
      syncsTopic,
      ranges.map(r => ({ partition: 0, ...encodeRange(r) }))
    )

    const flow = configFromMm1({
      'consumer.config': [writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': uniqueName('prune') }, 'source.properties')],
      'producer.config': writeProperties({ 'bootstrap.servers': target.bootstrap }, 'target.properties'),
      whitelist: topic,
    }).flows[0]
    assert.ok(flow !== undefined)
    const pruned: number[] = []
    const pruner = new OffsetSyncPruner(
      { ...flow, offsetSyncs: { enabled: true, topic: syncsTopic, replicationFactor: -1 } },
      { logger: createLogger({ level: 'silent' }), observer: { syncsPruned: (_, count) => pruned.push(count) } }
    )
    await pruner.start()
    t.after(() => pruner.stop())
    const deleteBelow = async (offset: number): Promise<void> => {
      await withAdmin(target, async admin => {
        await admin.fetchTopicMetadata({ topics: [topic] }) // kafkajs' deleteTopicRecords needs the topic's metadata loaded
        await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(offset) }] })
      })
    }
    const translateAll = async (): Promise<Array<string | undefined>> => {
      const syncs = await loadOffsetSyncs(target.connection('test'), syncsTopic)
      return [0n, 15n, 45n].map(offset => {
        const tr = syncs.translate(topic, 0, offset)
        return tr.status === 'translated' ? `${offset}->${tr.targetOffset}` : tr.status
      })
    }
    assert.deepEqual(await translateAll(), ['0->0', '15->45', '45->75'], 'the newest copy wins before any pruning')

    await deleteBelow(39)
    assert.equal(await pruner.prune(), 0, 'one record of the first range is still on the target')
    await deleteBelow(70)
    assert.equal(await pruner.prune(), 2, 'both ranges below offset 70 are gone')
    assert.deepEqual(await translateAll(), ['0->70', '15->70', '45->75'], 'offsets of pruned ranges lead to the first copy still there')
    const left = await loadOffsetSyncs(target.connection('test'), syncsTopic)
    assert.deepEqual(
      left.ranges(topic, 0).map(r => r.targetStart),
      [70n]
    )
    assert.deepEqual(
      left.ranges(gone, 0).map(r => r.targetStart),
      [0n, 10n],
      'ranges into a topic that does not exist are kept'
    )

    await deleteBelow(100)
    assert.equal(await pruner.prune(), 0, 'the newest range of a partition is kept (a running mirror may still grow it)')
    assert.deepEqual(pruned, [0, 2, 0])
  }
)
