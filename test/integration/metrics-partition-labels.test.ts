import assert from 'node:assert/strict'
import { test } from 'node:test'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, sharedClusters, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 6

/** Series of the sidecar's own metrics in a text exposition, as `name{labels}`. */
function series (exposition: string): string[] {
  return exposition.split('\n').filter(line => line.startsWith('kafka_mirror_')).map(line => line.slice(0, line.lastIndexOf(' ')))
}

test(
  '--metrics.partition.labels false turns the per-partition series into per-topic ones with the same sums; true (default) keeps one per partition',
  { timeout: 120_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    await createTopic(t, target, { name: topic, partitions: PARTITIONS })
    await produce(
      source,
      topic,
      Array.from({ length: PARTITIONS * 5 }, (_, i) => ({ partition: i % PARTITIONS, value: `v${i}` }))
    )
    t.after(() => deleteTopicIfExists(target, topic))

    const exposition = async (args: string[]): Promise<string> => {
      const group = uniqueName('labels')
      const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic, args })
      await waitMirroring(sidecar)
      const port = await sidecarHttpPort(sidecar)
      await waitUntil(async () => [...(await committedOffsets(source, group, topic)).values()].filter(offset => offset > 0n).length === PARTITIONS, {
        timeoutMs: 60_000,
        message: 'every partition committed',
      })
      // A scrape once the sidecar saw that too: every partition has fetched, acknowledged and committed.
      let body = ''
      await waitUntil(
        async () => {
          body = await scrape(port)
          // Commit age 0: the sidecar itself saw every acknowledged offset committed.
          return sampleSum(body, 'kafka_mirror_commit_age_seconds') === 0 && sampleSum(body, 'kafka_mirror_lag_records') === 0
        },
        { message: 'a scrape after the commit' }
      )
      sidecar.child.kill('SIGTERM')
      assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
      return body
    }
    const perPartition = await exposition([])
    const perTopic = await exposition(['--metrics.partition.labels', 'false'])

    const of = (body: string, name: string): string[] => series(body).filter(s => s.startsWith(`${name}{`) && s.includes(`topic="${topic}"`))
    for (const [name, perPartitionCount, perTopicCount] of [
      ['kafka_mirror_lag_records', PARTITIONS, 1],
      ['kafka_mirror_lag_seconds', PARTITIONS, 1],
      ['kafka_mirror_partition_status', PARTITIONS * 5, 5],
      ['kafka_mirror_committed_offset', PARTITIONS, 0],
    ] as const) {
      assert.equal(of(perPartition, name).length, perPartitionCount, `${name} per partition`)
      assert.equal(of(perTopic, name).length, perTopicCount, `${name} per topic`)
    }
    assert.deepEqual(
      series(perTopic).filter(s => s.includes('partition="')),
      [],
      'no series carries a partition label'
    )
    assert.equal(sampleSum(perTopic, 'kafka_mirror_partition_status'), PARTITIONS, 'sum by (status) still counts partitions')
    assert.equal(sampleSum(perTopic, 'kafka_mirror_lag_records'), sampleSum(perPartition, 'kafka_mirror_lag_records'))
    assert.equal(series(perPartition).length - series(perTopic).length, PARTITIONS * 8 - 7)
  }
)
