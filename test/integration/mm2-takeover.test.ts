import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test, type TestContext } from 'node:test'
import { setTimeout as pause } from 'node:timers/promises'
import { promisify } from 'node:util'
import { createKafkaClient } from '../../src/kafka/client.js'
import { AuditClient } from '../../src/kafka/audit-client.js'
import { readMm2SourcePositions } from '../../src/mirror-topics/mm2-source-positions.js'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { javaTranslateOffsets } from '../helpers/java-client.js'
import { auditKeys, committedOffsets, createTopic, endOffsets, sharedClusters, totalRecords, uniqueName, withAdmin } from '../helpers/kafka.js'
import { startMirrorMaker2, type Mm2Process } from '../helpers/mirror-maker2.js'
import { commitAsAdmin, consumeAndCommit, loadCheckpoints } from '../helpers/offsets.js'
import { spawnSidecarArgs, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
const PARTITIONS = 3

/** Every key of `topic` as an independent reader (kcat, librdkafka) sees it with read_committed. */
async function readCommittedKeys (cluster: LocalCluster, topic: string): Promise<Array<{ key: Buffer }>> {
  const { stdout } = await execFileAsync(
    'kcat',
    ['-C', '-b', cluster.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%k\n'],
    { maxBuffer: 256 * 1024 * 1024 }
  )
  return stdout.split('\n').filter(line => line !== '').map(line => ({ key: Buffer.from(line) }))
}

/** A producer of unique keys `k0`, `k1`, ... spread over the partitions, writing until `stop()`; `sent` counts what the source acknowledged. */
function startTraffic (cluster: LocalCluster, topic: string): { sent: () => number, stop: () => Promise<number> } {
  const producer = createKafkaClient(cluster.connection('takeover-traffic')).producer({ idempotent: true })
  let sent = 0
  let running = true
  const done = (async () => {
    await producer.connect()
    try {
      while (running) {
        const messages = Array.from({ length: 30 }, (_, i) => ({ partition: (sent + i) % PARTITIONS, key: `k${sent + i}`, value: `v${sent + i}` }))
        await producer.send({ topic, acks: -1, messages })
        sent += messages.length
        // Paces the traffic (about 1,000 records/s at most): the copy, not the producer, is under test.
        await pause(30)
      }
    } finally {
      await producer.disconnect()
    }
  })()
  return { sent: () => sent, stop: async () => { running = false; await done; return sent } }
}

/**
 * Cleanup after a failure: the producer's error (its topic deleted by an earlier cleanup) is noted, not thrown, so
 * the cleanups after it (MirrorMaker 2's kill among them) still run and the test process can exit.
 */
async function stopTraffic (t: TestContext, traffic: { stop: () => Promise<number> }): Promise<void> {
  await traffic.stop().catch((error: unknown) => { t.diagnostic(`the traffic producer stopped with: ${String(error)}`) })
}

/**
 * Aliases of one test's MirrorMaker 2 run (unique, so no stored position of another test is read)
 * and cleanup of what MirrorMaker 2 and the sidecar created.
 */
function aliases (t: TestContext, source: LocalCluster, target: LocalCluster): { sourceAlias: string, targetAlias: string } {
  const id = uniqueName('').replace(/-/g, '')
  t.after(async () => {
    for (const cluster of [source, target]) {
      await withAdmin(cluster, async admin => {
        const own = (await admin.listTopics()).filter(name => name.includes(id))
        if (own.length > 0) await admin.deleteTopics({ topics: own })
      })
    }
  })
  return { sourceAlias: `src${id}`, targetAlias: `dst${id}` }
}

/** The end offset of each partition, as an array by partition. */
async function ends (cluster: LocalCluster, topic: string): Promise<bigint[]> {
  const byPartition = await endOffsets(cluster, topic)
  return Array.from({ length: PARTITIONS }, (_, p) => byPartition.get(p) ?? -1n)
}

/** MirrorMaker 2's stored positions (next offsets) of `topic` by partition, read from Connect's offsets topic on the target. */
async function storedPositions (target: LocalCluster, sourceAlias: string, topic: string): Promise<bigint[]> {
  const client = new AuditClient(target.connection('takeover-positions'))
  try {
    await client.connect()
    const positions = await readMm2SourcePositions(client, `mm2-offsets.${sourceAlias}.internal`, 'MirrorSourceConnector', sourceAlias)
    return Array.from({ length: PARTITIONS }, (_, p) => [...positions.values()].find(pos => pos.topic === topic && pos.partition === p)?.next ?? -1n)
  } finally {
    await client.close()
  }
}

/** MirrorMaker 2 copying `topic`, checkpointing `group` (when given) every second. */
async function startMm2 (
  t: TestContext,
  source: LocalCluster,
  target: LocalCluster,
  topic: string,
  names: { sourceAlias: string, targetAlias: string },
  group?: string,
  properties: Record<string, string | number> = {}
): Promise<Mm2Process> {
  const flow = `${names.sourceAlias}->${names.targetAlias}`
  return await startMirrorMaker2(t, {
    source,
    target,
    ...names,
    topics: topic,
    properties: {
      ...(group === undefined ? { 'emit.checkpoints.enabled': 'false' } : { groups: group, [`${flow}.groups`]: group }),
      'emit.checkpoints.interval.seconds': 1,
      [`${flow}.emit.checkpoints.interval.seconds`]: 1,
      'refresh.groups.interval.seconds': 1,
      [`${flow}.refresh.groups.interval.seconds`]: 1,
      ...properties,
    },
  })
}

/** The sidecar on MirrorMaker 2's own mm2.properties. */
async function startSidecar (t: TestContext, mm2: Mm2Process): Promise<SidecarProcess> {
  const sidecar = spawnSidecarArgs(t, [mm2.config, '--metrics.port', '0', '--metrics.host', '127.0.0.1'])
  await waitMirroring(sidecar, 120_000)
  return sidecar
}

test(
  "the sidecar takes over from a MirrorMaker 2 stopped mid-stream (SIGTERM) on its mm2.properties: every record once on the target (kcat read_committed), a group translated by RemoteClusterUtils before the switch (MirrorMaker 2's checkpoints) and exactly after it (the sidecar's); --dry-run names MirrorMaker 2's positions",
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('takeover'), partitions: PARTITIONS })
    const names = aliases(t, source, target)
    const targetTopic = `${names.sourceAlias}.${topic}`
    const traffic = startTraffic(source, topic)
    t.after(() => stopTraffic(t, traffic))
    // An application group on the source, known to MirrorMaker 2 from its start (a group found later restarts its checkpoint tasks).
    await waitUntil(() => traffic.sent() >= 300, { message: 'the first records' })
    const group = uniqueName('app')
    const before = await consumeAndCommit(source, topic, group, new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, 60 + 10 * p])))
    const mm2 = await startMm2(t, source, target, topic, names, group)
    await waitUntil(async () => (await totalRecords(target, targetTopic).catch(() => 0n)) >= 600n, {
      timeoutMs: 150_000,
      intervalMs: 500,
      message: 'MirrorMaker 2 to copy 600 records',
    })

    // MirrorMaker 2's checkpoints give the group's place on the target.
    const checkpointsTopic = `${names.sourceAlias}.checkpoints.internal`
    const checkpointed = async (offsets: ReadonlyMap<number, bigint>): Promise<boolean> => {
      const checkpoints = (await loadCheckpoints(target, checkpointsTopic).catch(() => [])).filter(c => c.group === group)
      return [...offsets].every(([p, offset]) => checkpoints.some(c => c.topic === targetTopic && c.partition === p && c.upstreamOffset === offset))
    }
    await waitUntil(() => checkpointed(before), { timeoutMs: 180_000, intervalMs: 1000, message: "MirrorMaker 2's checkpoints of the group" })
    const translatedBefore = await javaTranslateOffsets(target.bootstrap, names.sourceAlias, group)
    const mm2Checkpoints = (await loadCheckpoints(target, checkpointsTopic)).filter(c => c.group === group && c.topic === targetTopic)
    for (const [p, offset] of before) {
      const translated = translatedBefore.find(r => r.topic === targetTopic && r.partition === p)
      const checkpoint = mm2Checkpoints.filter(c => c.partition === p).at(-1)
      assert.ok(translated !== undefined && checkpoint !== undefined, JSON.stringify(translatedBefore))
      // MirrorMaker 2 copies one to one into a new topic: the exact place is the source offset; its translation is at or below it.
      assert.equal(BigInt(translated.offset), checkpoint.downstreamOffset, "RemoteClusterUtils reads MirrorMaker 2's checkpoint")
      assert.ok(BigInt(translated.offset) <= offset, `partition ${p}: MirrorMaker 2's translation ${translated.offset} is at or below the exact ${offset}`)
    }

    // The operator's stop, mid-stream: MirrorMaker 2 flushes its positions; the producer goes on.
    await mm2.terminate('SIGTERM')
    const stoppedAt = traffic.sent()
    await waitUntil(() => traffic.sent() >= stoppedAt + 300, { timeoutMs: 60_000, message: 'more records while nothing mirrors' })
    const copiedByMm2 = await ends(target, targetTopic)
    assert.deepEqual(await storedPositions(target, names.sourceAlias, topic), copiedByMm2, "after SIGTERM MirrorMaker 2's positions are exactly what it copied")

    const dryRun = spawnSidecarArgs(t, [mm2.config, '--dry-run'])
    assert.equal(await dryRun.exited, 0, dryRun.stderr())
    const rows = dryRun
      .stdout()
      .split('\n')
      .filter(line => line.startsWith(`${topic} `))
      .map(line => line.split(/ {2,}/))
    assert.deepEqual(
      rows.map(([, partition, start, from, mm2Next]) => [Number(partition), BigInt(start ?? ''), from, BigInt(mm2Next ?? '')]),
      copiedByMm2.map((end, p) => [p, end, "MirrorMaker 2's Connect offsets", end]),
      dryRun.stdout()
    )
    assert.match(
      dryRun.stdout(),
      new RegExp(`^flow ${names.sourceAlias}->${names.targetAlias}: group mirror-sidecar\\.${names.sourceAlias}-to-${names.targetAlias}$`, 'm')
    )
    assert.match(
      dryRun.stdout(),
      new RegExp(
        `^MirrorMaker 2's positions: mm2-offsets\\.${names.sourceAlias}\\.internal on ${names.targetAlias}, connector MirrorSourceConnector: \\d+ of \\d+ partitions$`,
        'm'
      )
    )
    assert.match(dryRun.stdout(), /^dry run: nothing copied, nothing committed$/m)
    const sidecarGroup = `mirror-sidecar.${names.sourceAlias}-to-${names.targetAlias}`
    assert.deepEqual([...(await committedOffsets(source, sidecarGroup, topic)).values()], [-1n, -1n, -1n], 'the dry run committed nothing')
    assert.deepEqual(await ends(target, targetTopic), copiedByMm2, 'the dry run copied nothing')

    const sidecar = await startSidecar(t, mm2)
    const tookOver = sidecar
      .stderr()
      .split('\n')
      .filter(line => line.includes('"msg":"took over from MirrorMaker 2"'))
    assert.equal(tookOver.length, 1, sidecar.stderr())
    // MirrorMaker 2 also copies a source cluster's heartbeats topic, when there is one: at least this topic's partitions.
    const taken = new RegExp(
      `"partitions":(\\d+),"topics":\\d+,"from":"mm2-offsets\\.${names.sourceAlias}\\.internal on ${names.targetAlias}","connector":"MirrorSourceConnector"`
    ).exec(tookOver[0] ?? '')
    assert.ok(taken !== null && Number(taken[1]) >= PARTITIONS, tookOver[0])
    const switchedAt = traffic.sent()
    await waitUntil(() => traffic.sent() >= switchedAt + 300, { timeoutMs: 60_000, message: 'more records after the switch' })
    const produced = await traffic.stop()
    await waitUntil(async () => (await totalRecords(target, targetTopic)) >= BigInt(produced), {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: `the sidecar to copy up to ${produced} records`,
    })
    t.diagnostic(
      `${produced} records produced; MirrorMaker 2 copied ${copiedByMm2.join('/')} by partition before the switch; MirrorMaker 2's translations ${translatedBefore.map(r => r.offset).join('/')} of ${[...before.values()].join('/')}`
    )
    assert.deepEqual(auditKeys(await readCommittedKeys(target, targetTopic), produced), { missing: 0, duplicates: 0 }, 'every record once on the target')
    assert.equal(await totalRecords(target, targetTopic), BigInt(produced))

    // The group has not moved since before the switch: the sidecar has copied none of the records below it and writes
    // no checkpoint for it (one would map it to its first copied record, a jump forward); MirrorMaker 2's stays newest.
    const port = await sidecarHttpPort(sidecar)
    const beforeFirstSync = (exposition: string): number =>
      exposition
        .split('\n')
        .filter(
          line =>
            line.startsWith('kafka_mirror_offset_translation_failures_total{') &&
            line.includes(`group="${group}"`) &&
            line.includes('reason="before-first-sync"')
        )
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
    await waitUntil(async () => beforeFirstSync(await scrape(port)) >= PARTITIONS, {
      timeoutMs: 60_000,
      intervalMs: 500,
      message: "the sidecar's checkpoint cycle to pass over the group",
    })
    const stillMm2 = (await loadCheckpoints(target, checkpointsTopic)).filter(c => c.group === group && c.topic === targetTopic)
    for (const [p, offset] of before) {
      const newest = stillMm2.filter(c => c.partition === p).at(-1)
      assert.ok(
        newest !== undefined && newest.upstreamOffset === offset && newest.downstreamOffset <= offset,
        `partition ${p}: the newest checkpoint is MirrorMaker 2's, at or below the exact ${offset}: ${JSON.stringify(newest, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`
      )
    }

    // mirror-check translate reads the sidecar's offset syncs: below its first copy it has no translation either.
    const cli = await runMirrorCheck([
      'translate',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--source-alias',
      names.sourceAlias,
      '--format',
      'json',
    ])
    assert.equal(cli.code, 1, cli.stdout + cli.stderr)
    assert.deepEqual(
      (JSON.parse(cli.stdout) as Array<{ partition: number, status: string }>).map(r => [r.partition, r.status]),
      [
        [0, 'no offset syncs'],
        [1, 'no offset syncs'],
        [2, 'no offset syncs'],
      ]
    )

    // The group moves on past the switch: the sidecar's checkpoint gives its exact place (one to one: the same offsets).
    const after = new Map((await ends(source, topic)).map((end, p) => [p, end - 3n]))
    await commitAsAdmin(source, group, topic, after)
    await waitUntil(() => checkpointed(after), { timeoutMs: 60_000, intervalMs: 500, message: "the sidecar's checkpoints of the group" })
    const translatedAfter = await javaTranslateOffsets(target.bootstrap, names.sourceAlias, group)
    assert.deepEqual(
      translatedAfter.map(r => [r.topic, r.partition, BigInt(r.offset)]),
      [...after].map(([p, offset]) => [targetTopic, p, offset]),
      'RemoteClusterUtils.translateOffsets is exact after the switch'
    )
    for (const [p] of after) {
      assert.ok(BigInt(translatedAfter[p]?.offset ?? -1) >= BigInt(translatedBefore[p]?.offset ?? 0), 'translations move forward across the switch')
    }

    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)

test(
  'after kill -9 of MirrorMaker 2 the sidecar starts where MirrorMaker 2 last stored its positions: nothing missing, and the only duplicates are what MirrorMaker 2 copied after its last flush',
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('takeover-kill'), partitions: PARTITIONS })
    const names = aliases(t, source, target)
    const targetTopic = `${names.sourceAlias}.${topic}`
    const traffic = startTraffic(source, topic)
    t.after(() => stopTraffic(t, traffic))
    // Positions flushed every 3 s: a kill lands between two flushes.
    const mm2 = await startMm2(t, source, target, topic, names, undefined, {
      'offset.flush.interval.ms': 3000,
      [`${names.targetAlias}.offset.flush.interval.ms`]: 3000,
    })
    await waitUntil(async () => (await storedPositions(target, names.sourceAlias, topic)).every(next => next > 100n), {
      timeoutMs: 150_000,
      intervalMs: 500,
      message: 'MirrorMaker 2 to copy and store positions past offset 100 on every partition',
    })

    await mm2.terminate('SIGKILL')
    const copiedByMm2 = await ends(target, targetTopic)
    const stored = await storedPositions(target, names.sourceAlias, topic)
    stored.forEach((next, p) =>
      assert.ok(next <= (copiedByMm2[p] ?? -1n), `partition ${p}: the stored position ${next} is at or below what was copied (${copiedByMm2[p]})`)
    )

    const sidecar = await startSidecar(t, mm2)
    const produced = await traffic.stop()
    await waitUntil(
      async () => (await totalRecords(target, targetTopic)) >= BigInt(produced) + copiedByMm2.reduce((sum, end, p) => sum + end - (stored[p] ?? 0n), 0n),
      { timeoutMs: 120_000, intervalMs: 500, message: "the sidecar to copy everything from MirrorMaker 2's positions on" }
    )
    const keys = await readCommittedKeys(target, targetTopic)
    const reCopied = copiedByMm2.reduce((sum, end, p) => sum + Number(end - (stored[p] ?? 0n)), 0)
    t.diagnostic(
      `${produced} records produced; MirrorMaker 2 copied ${copiedByMm2.join('/')} and stored ${stored.join('/')} by partition when killed: ${reCopied} to copy again`
    )
    assert.deepEqual(
      auditKeys(keys, produced),
      { missing: 0, duplicates: reCopied },
      `records MirrorMaker 2 copied after its last flush are copied again (${reCopied}), nothing else`
    )
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr().slice(-2000))
  }
)
