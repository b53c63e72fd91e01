import assert from 'node:assert/strict'
import { test } from 'node:test'
import { committedOffsets, createTopic, deleteTopicIfExists, produce, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { javaMirrorClusters, javaTranslateOffsets } from '../helpers/java-client.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { mm2File } from '../helpers/mm2-file.js'
import { commitAsAdmin, loadCheckpoints, tagged } from '../helpers/offsets.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'
import { readInternalTopicBytes } from '../../src/kafka/internal-topic.js'
import { silentLogger } from '../../src/shared/logger.js'
import { decodeMm2Heartbeat, type Mm2HeartbeatRecord } from '../../src/mirror-topics/mm2-records.js'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'

/** The heartbeats on `cluster`'s `heartbeats` topic emitted at or after `sinceMs`. */
async function heartbeatsSince (cluster: LocalCluster, sinceMs: number): Promise<Mm2HeartbeatRecord[]> {
  const found: Mm2HeartbeatRecord[] = []
  await readInternalTopicBytes(cluster.connection('test-heartbeats'), 'heartbeats', (key, value) => {
    const heartbeat = decodeMm2Heartbeat(key, value)
    if (heartbeat !== undefined && heartbeat.timestampMs >= sinceMs) found.push(heartbeat)
  }, silentLogger)
  return found
}

interface TranslateJsonRow {
  readonly topic: string
  readonly partition: number
  readonly targetTopic: string | null
  readonly targetOffset: number | null
  readonly status: string
}

test(
  "Kafka's own client library reads the mirror's checkpoints and heartbeats: RemoteClusterUtils.translateOffsets equals mirror-check translate on every partition; MirrorClient finds the source alias",
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const startedMs = Date.now()
    const topic = await createTopic(t, source, { name: uniqueName('mm2lib'), partitions: 3 })
    const targetTopic = `source.${topic}`
    // Records already on the target topic: target offsets differ from source offsets, so an answer that echoes the source offset fails.
    await createTopic(t, target, { name: targetTopic, partitions: 3 })
    await produce(target, targetTopic, [...tagged('old', 0, 7), ...tagged('old', 1, 3), ...tagged('old', 2, 5)])
    await produce(source, topic, [...tagged('m', 0, 40), ...tagged('m', 1, 25), ...tagged('m', 2, 30)])
    t.after(() => deleteTopicIfExists(target, 'source.heartbeats'))

    const config = mm2File({
      clusters: 'source, target',
      'source.bootstrap.servers': source.bootstrap,
      'target.bootstrap.servers': target.bootstrap,
      'source->target.enabled': 'true',
      'source->target.topics': topic,
      'source.consumer.group.id': uniqueName('mirror'),
      'source.consumer.auto.offset.reset': 'earliest',
      'refresh.topics.interval.seconds': '1',
      'offset.flush.interval.ms': '500',
      'replication.factor': '1',
      'emit.checkpoints.interval.seconds': '1',
      'checkpoints.topic.replication.factor': '1',
      'heartbeats.topic.replication.factor': '1',
    })
    const sidecar = spawnSidecarArgs(t, [config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(target, targetTopic)) === 15n + 95n, { timeoutMs: 60_000, message: 'the mirror to copy the 95 records' })

    const group = uniqueName('app')
    const committed = new Map([
      [0, 31n],
      [1, 25n],
      [2, 4n],
    ])
    await commitAsAdmin(source, group, topic, committed)
    await waitUntil(
      async () => {
        const checkpoints = (await loadCheckpoints(target)).filter(c => c.group === group)
        return [0, 1, 2].every(p => checkpoints.some(c => c.topic === targetTopic && c.partition === p && c.upstreamOffset === committed.get(p)))
      },
      { timeoutMs: 30_000, intervalMs: 500, message: 'checkpoints of the group on all three partitions' }
    )

    const cli = await runMirrorCheck([
      'translate',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--source-alias',
      'source',
      '--format',
      'json',
    ])
    assert.equal(cli.code, 0, cli.stderr)
    const exact = (JSON.parse(cli.stdout) as TranslateJsonRow[]).map(r => ({ topic: r.targetTopic, partition: r.partition, offset: r.targetOffset }))
    assert.deepEqual(exact, [
      { topic: targetTopic, partition: 0, offset: 38 },
      { topic: targetTopic, partition: 1, offset: 28 },
      { topic: targetTopic, partition: 2, offset: 9 },
    ])

    const java = await javaTranslateOffsets(target.bootstrap, 'source', group)
    assert.deepEqual(
      java.map(r => ({ topic: r.topic, partition: r.partition, offset: r.offset })),
      exact,
      "RemoteClusterUtils.translateOffsets gives mirror-check's exact translation"
    )
    assert.deepEqual(
      [...(await committedOffsets(target, group, targetTopic)).values()],
      [-1n, -1n, -1n],
      'checkpoints alone: sync.group.offsets.enabled is off, the target group is not written'
    )

    await waitUntil(async () => (await javaMirrorClusters(target.bootstrap, 'source')).upstreamClusters.includes('source'), {
      timeoutMs: 60_000,
      intervalMs: 1000,
      message: 'MirrorClient to find the source alias from source.heartbeats',
    })
    const clusters = await javaMirrorClusters(target.bootstrap, 'source')
    assert.ok(clusters.heartbeatTopics.includes('heartbeats') && clusters.heartbeatTopics.includes('source.heartbeats'), JSON.stringify(clusters))
    assert.equal(clusters.replicationHops, 1)
    const pairs = async (cluster: LocalCluster): Promise<string[]> => [
      ...new Set((await heartbeatsSince(cluster, startedMs)).map(h => `${h.sourceClusterAlias}->${h.targetClusterAlias}`)),
    ]
    assert.deepEqual(await pairs(target), ['source->target'], "the flow's heartbeats on the target")
    assert.deepEqual(await pairs(source), ['target->source'], "the reverse pair's heartbeats on the source, as MirrorMaker 2 emits them")

    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
