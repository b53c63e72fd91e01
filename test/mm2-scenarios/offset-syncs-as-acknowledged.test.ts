/**
 * Offset syncs follow the copy (at least once: the target's acknowledgements; exactly-once: the
 * lane transactions' commits), not the source commit: an mm2.properties flow
 * with checkpoints every second and `offset.commit.interval.ms` at its default (60 s, the commit
 * flush this test never waits for). Read with Kafka's own client library, as the other MirrorMaker 2
 * scenarios: `RemoteClusterUtils.translateOffsets` (the checkpoints) and connect-mirror's
 * `OffsetSyncStore` (MirrorMaker 2's syncs), through test/java/Mm2ClientProbe.java.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopicIfExists, endOffsets, produce, readAll, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { javaSyncStoreTranslate, javaTranslateOffsets } from '../helpers/java-client.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { mm2File } from '../helpers/mm2-file.js'
import { commitAsAdmin, loadCheckpoints, tagged } from '../helpers/offsets.js'
import { spawnSidecarArgs, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const RECORDS_PER_PARTITION = 800
/** Records already on the remote topic's partitions: target offsets differ from source offsets. */
const OLD_RECORDS = [7, 3]
const CHECKPOINT_INTERVAL_MS = 1_000
/** A few seconds past the checkpoint interval for a cycle to read, translate and write on a loaded machine; far below the 60 s commit flush. */
const SLACK_MS = 9_000
/** MirrorMaker 2's default `offset.lag.max`. */
const OFFSET_LAG_MAX = 100

for (const exactlyOnce of [false, true]) {
  const mode = exactlyOnce
    ? 'exactly-once (the exact syncs in the lane transactions, MirrorMaker 2\'s on the source as each transaction commits): the checkpoints and'
    : 'at least once (as the target acknowledges): RemoteClusterUtils, mirror-check translate, the checkpoints and'
  test(
    `an mm2.properties flow's offset syncs follow the copy, ${mode} MirrorMaker 2's OffsetSyncStore translate a group ` +
    'within the checkpoint interval plus a few seconds of its records being copied, with offset.commit.interval.ms at 60 s',
    { timeout: 180_000 },
    async t => {
      const { source, target } = await sharedClusters()
      const id = uniqueName('s').slice(2)
      const [sourceAlias, targetAlias] = [`src${id}`, `tgt${id}`]
      const topic = await createTopic(t, source, { name: uniqueName('syncs-acked'), partitions: OLD_RECORDS.length })
      const remote = `${sourceAlias}.${topic}`
      await createTopic(t, target, { name: remote, partitions: OLD_RECORDS.length })
      await produce(target, remote, OLD_RECORDS.flatMap((count, p) => tagged('old', p, count)))
      t.after(async () => {
        for (const [cluster, name] of [
          [source, `mm2-offset-syncs.${targetAlias}.internal`],
          [target, `mirror-offset-syncs.${sourceAlias}.internal`],
          [target, `${sourceAlias}.checkpoints.internal`],
        ] as const) await deleteTopicIfExists(cluster, name)
      })
      const group = `app-${id}`
      const config = mm2File({
        clusters: `${sourceAlias}, ${targetAlias}`,
        [`${sourceAlias}.bootstrap.servers`]: source.bootstrap,
        [`${targetAlias}.bootstrap.servers`]: target.bootstrap,
        [`${sourceAlias}->${targetAlias}.enabled`]: 'true',
        [`${sourceAlias}->${targetAlias}.topics`]: topic,
        [`${sourceAlias}->${targetAlias}.consumer.group.id`]: uniqueName('mirror'),
        [`${sourceAlias}.consumer.auto.offset.reset`]: 'earliest',
        groups: group,
        'emit.checkpoints.interval.seconds': String(CHECKPOINT_INTERVAL_MS / 1000),
        'emit.heartbeats.enabled': 'false',
        'sync.topic.acls.enabled': 'false',
        'refresh.topics.interval.seconds': '1',
        'replication.factor': '1',
        'checkpoints.topic.replication.factor': '1',
        'offset-syncs.topic.replication.factor': '1',
        ...(exactlyOnce ? { [`${targetAlias}.exactly.once.source.support`]: 'enabled' } : {}),
      })
      const sidecar = spawnSidecarArgs(t, [config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
      await waitMirroring(sidecar)

      await produce(source, topic, OLD_RECORDS.flatMap((_, p) => tagged('new', p, RECORDS_PER_PARTITION)))
      const committed = await endOffsets(source, topic)
      await commitAsAdmin(source, group, topic, committed)
      const copied = BigInt(OLD_RECORDS.reduce((a, b) => a + b, 0) + OLD_RECORDS.length * RECORDS_PER_PARTITION)
      // Exactly-once, the target's offsets hold transaction markers too: the records are copied once a read_committed reader sees them all.
      const allCopied = async (): Promise<boolean> => exactlyOnce
        ? BigInt((await readAll(target, remote)).length) === copied
        : (await totalRecords(target, remote)) === copied
      await waitUntil(allCopied, { timeoutMs: 60_000, intervalMs: 100, message: 'the records copied' })
      const copiedAtMs = Date.now()
      const exact = OLD_RECORDS.map((old, partition) => ({ topic: remote, partition, offset: old + RECORDS_PER_PARTITION }))

      await waitUntil(
        async () => {
          const checkpoints = (await loadCheckpoints(target, `${sourceAlias}.checkpoints.internal`)).filter(c => c.group === group && c.topic === remote)
          return exact.every(e => checkpoints.some(c => c.partition === e.partition && c.upstreamOffset === committed.get(e.partition)))
        },
        {
          timeoutMs: CHECKPOINT_INTERVAL_MS + SLACK_MS,
          intervalMs: 200,
          message: `the group's checkpoints within ${CHECKPOINT_INTERVAL_MS + SLACK_MS} ms of its records being copied (not at the 60 s commit flush)`,
        }
      )
      const checkpointedInMs = Date.now() - copiedAtMs

      const checkpoints = (await loadCheckpoints(target, `${sourceAlias}.checkpoints.internal`)).filter(c => c.group === group && c.topic === remote)
      assert.deepEqual(
        exact.map(e => Number(checkpoints.find(c => c.partition === e.partition)?.downstreamOffset)),
        exact.map(e => e.offset),
        'the checkpoints carry the exact translation'
      )

      // Kafka's RemoteClusterUtils and mirror-check translate read those checkpoints and the exact syncs alike in both modes: asked once (CI time).
      if (!exactlyOnce) {
        const java = await javaTranslateOffsets(target.bootstrap, sourceAlias, group)
        assert.deepEqual(java.map(r => ({ topic: r.topic, partition: r.partition, offset: r.offset })), exact, 'RemoteClusterUtils.translateOffsets: exact')
        const cli = await runMirrorCheck([
          'translate', '--source', source.bootstrap, '--target', target.bootstrap, '--group', group, '--source-alias', sourceAlias, '--format', 'json',
        ])
        assert.equal(cli.code, 0, cli.stderr)
        const rows = JSON.parse(cli.stdout) as Array<{ partition: number, targetTopic: string | null, targetOffset: number | null }>
        assert.deepEqual(rows.map(r => ({ topic: r.targetTopic, partition: r.partition, offset: r.targetOffset })), exact, 'mirror-check translate: exact')
      }

      // MirrorMaker 2's syncs the rules asked for (first record, every offset.lag.max) are on the source already; the delayed
      // sync of each partition's last record waits for the commit, as in MirrorMaker 2 (KAFKA-14610): within offset.lag.max.
      const store = await javaSyncStoreTranslate(
        { sourceBootstrap: source.bootstrap, targetBootstrap: target.bootstrap, sourceAlias, targetAlias, location: 'source' },
        topic,
        exact.map(e => [e.partition, committed.get(e.partition) ?? 0n] as [number, bigint])
      )
      for (const e of exact) {
        const translated = store.find(r => r.partition === e.partition)?.downstreamOffset
        assert.ok(
          typeof translated === 'number' && translated <= e.offset && translated >= e.offset - OFFSET_LAG_MAX,
        `partition ${e.partition}: OffsetSyncStore gives ${String(translated)}, at most offset.lag.max ${OFFSET_LAG_MAX} before ${e.offset}`
        )
      }
      t.diagnostic(`checkpoints ${checkpointedInMs} ms after the records were copied`)

      sidecar.child.kill('SIGTERM')
      assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
    }
  )
}
