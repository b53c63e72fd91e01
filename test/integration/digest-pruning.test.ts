import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1 } from '../../src/config/mm1-args.js'
import { MirrorSidecar } from '../../src/sidecar/mirror-sidecar.js'
import { silentLogger } from '../../src/shared/logger.js'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { writeProperties } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

test(
  'digests whose target records retention or deleteRecords removed are tombstoned; verify --digests then checks what is left',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('digest-prune'), partitions: 1 })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(
      source,
      topic,
      Array.from({ length: 3000 }, (_, i) => ({ partition: 0, key: `k${i}`, value: `v${i}` }))
    )
    const group = uniqueName('mirror')
    const config = configFromMm1({
      'consumer.config': [writeProperties({ 'bootstrap.servers': source.bootstrap, 'group.id': group, 'auto.offset.reset': 'earliest' }, 'source.properties')],
      'producer.config': writeProperties({ 'bootstrap.servers': target.bootstrap }, 'target.properties'),
      whitelist: topic,
      'offset.commit.interval.ms': '200',
      'metrics.port': '0',
      'metrics.host': '127.0.0.1',
      'digests.enabled': 'true',
    })
    const sidecar = new MirrorSidecar(config, { logger: silentLogger })
    t.after(() => sidecar.stop())
    await sidecar.start()
    await waitUntil(async () => (await committedOffsets(source, group, topic)).get(0) === 3000n, {
      timeoutMs: 60_000,
      message: 'the mirror to commit every record',
    })

    await withAdmin(target, async admin => {
      await admin.fetchTopicMetadata({ topics: [topic] })
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2000' }] })
    })
    const pruner = sidecar.digests[0]?.pruner
    assert.ok(pruner !== undefined)
    // Every digests topic of these shared clusters is pruned too: count only this topic's by what verify sees.
    await pruner.prune()
    const result = await runMirrorCheck(['verify', '--digests', '--target', target.bootstrap, '--topic', topic, '--format', 'json'])
    assert.equal(result.code, 0, result.stderr)
    const json = JSON.parse(result.stdout) as { total: { ranges: number, checked: number, matched: number, notChecked: number } }
    assert.deepEqual(json.total, { ...json.total, ranges: 1, checked: 1000, matched: 1000, notChecked: 0 })
  }
)
