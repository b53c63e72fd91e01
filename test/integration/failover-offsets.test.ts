import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { commitAsAdmin, consumeAndCommit, copyPairs, mm2ReReads, readAsGroup, readToEnd, tagged, values } from '../helpers/offsets.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

interface Failover {
  /** Source group -> its committed offset per partition, as the application left it. */
  readonly groups: ReadonlyMap<string, ReadonlyMap<number, bigint>>
}

/**
 * Mirrors `topic` with group offset sync on, waits until everything is mirrored and each group's
 * offsets are on the target, then starts each group on the target and checks it reads exactly the
 * records it had not read on the source: the first is the next one, none is missing, none twice.
 * Reports what MirrorMaker 2's translation rule would have re-read on the same data.
 */
async function failOverAndCheck (t: TestContext, source: LocalCluster, target: LocalCluster, topic: string, failover: Failover): Promise<void> {
  const groupIds = [...failover.groups.keys()]
  const mirrorGroup = uniqueName('mirror')
  t.after(() => deleteTopicIfExists(target, topic))
  const sidecar = spawnSidecar(t, {
    source,
    target,
    groupId: mirrorGroup,
    include: topic,
    args: ['--sync.group.offsets.enabled', 'true', '--groups', groupIds.join(','), '--sync.group.offsets.interval.seconds', '1'],
  })
  await waitMirroring(sidecar)
  const sourceEnds = await endOffsets(source, topic)
  await waitUntil(async () => {
    const committed = await committedOffsets(source, mirrorGroup, topic)
    return [...sourceEnds].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs: 40_000, message: 'the mirror to commit the source end offsets (past trailing transaction markers too)' }).catch(async error => {
    const committed = await committedOffsets(source, mirrorGroup, topic)
    throw new Error(`${(error as Error).message}: ends ${[...sourceEnds]} committed ${[...committed]}\nsidecar log:\n${sidecar.stderr().split('\n').filter(l => !l.includes('"level":"debug"')).slice(-20).join('\n')}`)
  })
  for (const [group, offsets] of failover.groups) {
    await waitUntil(async () => {
      const onTarget = await committedOffsets(target, group, topic)
      return [...offsets.keys()].every(p => (onTarget.get(p) ?? -1n) >= 0n)
    }, { timeoutMs: 30_000, message: `group ${group} offsets on the target` }).catch(error => {
      throw new Error(`${(error as Error).message}\nsidecar log:\n${sidecar.stderr().split('\n').filter(l => !l.includes('"level":"debug"')).slice(-20).join('\n')}`)
    })
  }
  // Stop the mirror first: nothing moves while the groups fail over.
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))

  const sourceRecords = await readToEnd(source, topic)
  for (const [group, offsets] of failover.groups) {
    const translated = await committedOffsets(target, group, topic)
    const read = await readAsGroup(target, topic, group)
    for (const [partition, offset] of offsets) {
      const expected = sourceRecords.filter(r => r.partition === partition && BigInt(r.offset) >= offset).map(r => r.value?.toString() ?? 'null')
      assert.deepEqual(values(read, partition), expected, `${group} partition ${partition}: reads on the target exactly what it had not read on the source`)
      const pairs = await copyPairs(source, target, topic, partition)
      const exact = translated.get(partition) as bigint
      const mm2 = mm2ReReads(pairs, offset, exact)
      t.diagnostic(`MM2-COMPARE ${JSON.stringify({ topic, group, partition, sourceOffset: String(offset), targetOffset: String(exact), ourReReads: 0, mm2ReReads: mm2 === undefined ? 'untranslatable' : String(mm2), records: pairs.length })}`)
    }
  }
}

test('failover: a group started on the target reads exactly the records it had not read on the source', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('fo-plain'), partitions: 2 })
  await produce(source, topic, [...tagged('plain', 0, 250), ...tagged('plain', 1, 250)])
  const group = uniqueName('app')
  const committed = await consumeAndCommit(source, topic, group, new Map([[0, 47], [1, 163]]))
  assert.deepEqual([...committed].sort(), [[0, 47n], [1, 163n]])
  await failOverAndCheck(t, source, target, topic, { groups: new Map([[group, committed]]) })
})

test('failover is exact when the target topic already held other records (shifted offsets)', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('fo-shift'), partitions: 2 })
  await createTopic(t, target, { name: topic, partitions: 2 })
  await produce(target, topic, [...tagged('other', 0, 37), ...tagged('other', 1, 11)])
  await produce(source, topic, [...tagged('shift', 0, 250), ...tagged('shift', 1, 250)])
  const group = uniqueName('app')
  const committed = await consumeAndCommit(source, topic, group, new Map([[0, 130], [1, 201]]))
  await failOverAndCheck(t, source, target, topic, { groups: new Map([[group, committed]]) })
  const onTarget = await committedOffsets(target, group, topic)
  assert.deepEqual([onTarget.get(0), onTarget.get(1)], [130n + 37n, 201n + 11n], 'translated past the records that were there before')
})

test('failover is exact over transaction markers and aborted transactions; a caught-up group lands at the end', { timeout: 120_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('fo-txn'), partitions: 2 })
  const producer = createKafkaClient(source.connection('test-tx')).producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    for (let round = 0; round < 10; round++) {
      const tx = await producer.transaction()
      await tx.send({ topic, acks: -1, messages: [...tagged(`tx${round}`, 0, 20), ...tagged(`tx${round}`, 1, 20)] })
      if (round % 3 === 1) await tx.abort()
      else await tx.commit()
    }
  } finally {
    await producer.disconnect()
  }
  // 10 transactions of 20 records and a marker per partition. The end offset a reader sees is the
  // last stable offset: wait until the last commit marker is written.
  await waitUntil(async () => [...(await endOffsets(source, topic)).values()].every(end => end === 210n), { message: 'the last transaction to be complete' })
  const ends = await endOffsets(source, topic)
  const group = uniqueName('app')
  const committed = await consumeAndCommit(source, topic, group, new Map([[0, 75], [1, 33]]))
  // A kafkajs consumer that read everything commits the offset after the last marker: the end offset.
  const caughtUp = uniqueName('app-done')
  await commitAsAdmin(source, caughtUp, topic, ends)
  await failOverAndCheck(t, source, target, topic, { groups: new Map([[group, committed], [caughtUp, ends]]) })
  const targetEnds = await endOffsets(target, topic)
  assert.deepEqual(await committedOffsets(target, caughtUp, topic), targetEnds, 'the caught-up group starts at the end of the mirrored data')
  assert.deepEqual([...targetEnds.values()], [140n, 140n], 'committed records only, aborted data left behind')
})

test('failover is exact on a compacted source topic whose offsets have gaps', { timeout: 150_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, {
    name: uniqueName('fo-compact'),
    configs: {
      'cleanup.policy': 'compact',
      'segment.ms': '100',
      'min.cleanable.dirty.ratio': '0.01',
      'delete.retention.ms': '100',
      'min.compaction.lag.ms': '0',
    },
  })
  let round = 0
  // Each round rolls the segment (segment.ms passed); the cleaner compacts closed segments.
  await waitUntil(async () => {
    // Half the keys are written once (they survive), half repeat (older copies are cleaned away).
    const r = round++
    await produce(source, topic, tagged(`c${r}`, 0, 50, i => i % 2 === 0 ? `u-${r}-${i}` : `k-${i % 10}`))
    const offsets = (await readToEnd(source, topic)).map(r => BigInt(r.offset))
    return offsets.some((o, i) => i > 0 && o !== (offsets[i - 1] as bigint) + 1n)
  }, { timeoutMs: 90_000, intervalMs: 500, message: 'the log cleaner to leave gaps in the source offsets' })
  // Freeze the source from here on, so what is compared is what was mirrored.
  await withAdmin(source, admin =>
    admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: 'cleanup.policy', value: 'delete' }] }] })
  )
  await produce(source, topic, tagged('tail', 0, 30))
  const before = await readToEnd(source, topic)
  const gaps = before.filter((r, i) => i > 0 && BigInt(r.offset) !== BigInt((before[i - 1] as typeof r).offset) + 1n).length
  assert.ok(gaps > 0, 'the source offsets have gaps')
  const group = uniqueName('app')
  const committed = await consumeAndCommit(source, topic, group, new Map([[0, 25]]))
  t.diagnostic(`compacted: ${before.length} records over offsets ${before[0]?.offset}..${before.at(-1)?.offset}, ${gaps} gaps, group at ${committed.get(0)}`)
  await failOverAndCheck(t, source, target, topic, { groups: new Map([[group, committed]]) })
})
