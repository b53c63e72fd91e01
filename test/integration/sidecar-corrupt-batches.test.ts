import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { LocalCluster } from '../../scripts/local-kafka/local-cluster.js'
import { committedOffsets, deleteTopicIfExists, produce, readAll, sharedClusters, startExtraCluster, uniqueName, withAdmin } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

/** Three batches on partition 0 (one send each): offsets 0..9 (`a-`), 10..19 (`corrupt-me-`), 20..29 (`c-`). */
async function writeThreeBatches (cluster: LocalCluster, topic: string): Promise<void> {
  for (const [prefix, from] of [['a-', 0], ['corrupt-me-', 10], ['c-', 20]] as const) {
    await produce(cluster, topic, Array.from({ length: 10 }, (_, i) => ({ partition: 0, key: `k${from + i}`, value: `${prefix}${from + i}` })))
  }
}

/**
 * Flips one bit inside the value of offset 15 (the middle batch) in the partition's first segment,
 * with the broker stopped. The batch is not the last of the segment, and the broker stopped
 * cleanly (recovery point checkpointed), so its restart does not re-validate or truncate it.
 */
function flipValueByte (cluster: LocalCluster, topic: string): void {
  const file = join(cluster.dir, 'data', `${topic}-0`, '00000000000000000000.log')
  const bytes = readFileSync(file)
  const at = bytes.indexOf('corrupt-me-15')
  assert.ok(at > 0, `the value of offset 15 is in ${file}`)
  bytes[at + 3] = bytes[at + 3]! ^ 0x01
  writeFileSync(file, bytes)
}

test(
  'a source batch corrupted on disk: the mirror stops with exit code 2 and a line naming topic, partition and offsets, and nothing of it reaches the target; with --corrupt.batches skip (and the deep path) the rest is copied and the batch is counted once',
  { timeout: 300_000 },
  async t => {
    const { target } = await sharedClusters()
    // A cluster of its own: its data is broken on purpose.
    const source = await startExtraCluster(t, uniqueName('corrupt'))
    const failTopic = uniqueName('corrupt-fail')
    const skipTopic = uniqueName('corrupt-skip')
    // Not createTopic: its clean-up would run after the cluster's own (which removes the cluster).
    await withAdmin(source, admin =>
      admin.createTopics({ waitForLeaders: true, topics: [failTopic, skipTopic].map(topic => ({ topic, numPartitions: 1, replicationFactor: 1 })) })
    )
    t.after(() => deleteTopicIfExists(target, failTopic))
    t.after(() => deleteTopicIfExists(target, skipTopic))
    await writeThreeBatches(source, failTopic)
    await writeThreeBatches(source, skipTopic)
    await source.pause()
    flipValueByte(source, failTopic)
    flipValueByte(source, skipTopic)
    await source.resume()

    const failGroup = uniqueName('corrupt-fail')
    const failing = spawnSidecar(t, { source, target, groupId: failGroup, include: failTopic })
    const code = await failing.exited
    const stderr = failing.stderr()
    assert.equal(code, 2, stderr)
    const line = stderr.split('\n').find(l => l.startsWith('mirror-sidecar: '))
    assert.ok(line !== undefined, stderr)
    assert.match(
      line,
      new RegExp(
        `^mirror-sidecar: topic "${failTopic}" partition 0: the record batch at offsets 10\\.\\.19 \\(\\d+ bytes\\) is corrupt on the source cluster \\(CRC-32C of its bytes 0x[0-9a-f]{8}, expected 0x[0-9a-f]{8} as its header says\\): the mirror stopped; .*--corrupt\\.batches skip`
      )
    )
    const copied = await readAll(target, failTopic).catch(() => [])
    assert.ok(
      copied.every(r => String(r.value).startsWith('a-')),
      `only records before the corrupt batch on the target: ${copied.map(r => String(r.value)).join(',')}`
    )
    const failCommitted = (await committedOffsets(source, failGroup, failTopic)).get(0) ?? -1n
    assert.ok(failCommitted <= 10n, `committed ${failCommitted}, never past the corrupt batch`)

    const skipGroup = uniqueName('corrupt-skip')
    const skipping = spawnSidecar(t, { source, target, groupId: skipGroup, include: skipTopic, args: ['--corrupt.batches', 'skip', '--pass.through', 'off'] })
    await waitMirroring(skipping)
    await waitUntil(async () => (await committedOffsets(source, skipGroup, skipTopic)).get(0) === 30n, {
      timeoutMs: 60_000,
      message: 'the skip run to commit past the whole partition',
    })
    const skipped = await readAll(target, skipTopic)
    assert.deepEqual(
      skipped.map(r => String(r.value)),
      [...Array.from({ length: 10 }, (_, i) => `a-${i}`), ...Array.from({ length: 10 }, (_, i) => `c-${20 + i}`)]
    )
    const exposition = await scrape(await sidecarHttpPort(skipping))
    const counted = exposition.split('\n').filter(l => l.startsWith('kafka_mirror_corrupt_batches_total{'))
    assert.equal(counted.length, 1, exposition)
    assert.match(counted[0] ?? '', new RegExp(`topic="${skipTopic}",partition="0"\\} 1$`))
    assert.match(
      skipping.stderr(),
      new RegExp(`topic \\\\"${skipTopic}\\\\" partition 0: the record batch at offsets 10\\.\\.19 .*skipped \\(corrupt\\.batches=skip\\)`)
    )
    skipping.child.kill('SIGTERM')
    assert.equal(await skipping.exited, 0, skipping.stderr())
  }
)
