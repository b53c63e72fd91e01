import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import {
  committedOffsets,
  createTopic,
  deleteTopicIfExists,
  endOffsets,
  produce,
  readAll,
  sharedClusters,
  totalRecords,
  uniqueName,
  withAdmin,
  type ReadRecord,
} from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

interface DigestJson {
  passed: boolean
  digestsTopic: string
  total: {
    ranges: number
    checked: number
    matched: number
    missing: number
    duplicated: number
    extra: number
    changedRanges: number
    notChecked: number
    uncovered: number
  }
  partitions: Array<{
    partition: number
    ranges: number
    checked: number
    matched: number
    missing: number
    duplicated: number
    extra: number
    changedRanges: number
    findings: Array<{ kind: string, targetOffset: number | null, text: string }>
  }>
}

const PER_PARTITION = 5_000

/** Records with a key, a value and two headers, `PER_PARTITION` per partition. */
function records (partitions: number): Message[] {
  const now = Date.now()
  return Array.from({ length: PER_PARTITION * partitions }, (_, i) => ({
    partition: i % partitions,
    key: `k${i}`,
    value: `${i}:`.padEnd(80, 'v'),
    timestamp: String(now + i),
    headers: { trace: `t${i}`, origin: 'east' },
  }))
}

async function verifyDigests (target: LocalCluster, topic: string, extra: string[] = []): Promise<{ code: number, json: DigestJson, stderr: string }> {
  const result = await runMirrorCheck(['verify', '--digests', '--target', target.bootstrap, '--topic', topic, '--format', 'json', ...extra], {
    timeoutMs: 120_000,
  })
  assert.ok(result.stdout.startsWith('{'), `JSON on stdout, got: ${result.stdout}\nstderr: ${result.stderr}`)
  return { code: result.code, json: JSON.parse(result.stdout) as DigestJson, stderr: result.stderr }
}

async function waitAllCommitted (source: LocalCluster, sidecar: SidecarProcess, group: string, topic: string): Promise<void> {
  await waitUntil(async () => {
    const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs: 90_000, message: 'the mirror to commit the source end offsets' }).catch(error => {
    throw new Error(`${(error as Error).message}\nsidecar log:\n${sidecar.stderr().split('\n').slice(-20).join('\n')}`)
  })
}

function asMessage (r: ReadRecord, value: Buffer | null = r.value): Message {
  return { partition: r.partition, key: r.key, value, timestamp: r.timestamp, headers: r.headers }
}

test(
  'verify --digests checks the target without the source: passes on a clean copy after the source records were deleted, finds a changed value, a dropped record and a duplicate',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('digests'), partitions: 2 })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(source, topic, records(2))
    const group = uniqueName('mirror')
    // Pass-through stays at its default (auto): these uncompressed batches are forwarded, and digested after their ack.
    const sidecar = spawnSidecar(t, { source, target, groupId: group, include: topic, args: ['--digests.enabled', 'true', '--digests.range.records', '1000'] })
    await waitMirroring(sidecar)
    await waitAllCommitted(source, sidecar, group, topic)
    const metrics = await scrape(await sidecarHttpPort(sidecar))
    const forwarded = metrics
      .split('\n')
      .filter(line => line.startsWith('kafka_mirror_batches_total{') && line.includes('path="pass_through"'))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0)
    assert.ok(forwarded > 0, 'batches were forwarded undecoded (pass-through)')
    assert.ok((sampleSum(metrics, 'kafka_mirror_digests_written_total') ?? 0) >= 10, 'the digests were counted as written')
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0, sidecar.stderr())

    // The source forgets: every record deleted (deleteRecords), so only the digests can vouch for the copy.
    await withAdmin(source, async admin => {
      await admin.fetchTopicMetadata({ topics: [topic] }) // kafkajs' deleteTopicRecords needs the topic's metadata loaded
      await admin.deleteTopicRecords({ topic, partitions: [0, 1].map(partition => ({ partition, offset: '-1' })) })
    })
    assert.equal(await totalRecords(source, topic), 0n)

    // The plain check has nothing to compare the target with now: it says so and does not pass.
    const plain = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic], { timeoutMs: 120_000 })
    assert.equal(plain.code, 1, plain.stdout + plain.stderr)
    assert.match(plain.stdout, /^NOT VERIFIED: 0 records checked .*partition\(s\) 0, 1: the source holds no records any more/m)
    const plainJson = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--format', 'json'], {
      timeoutMs: 120_000,
    })
    assert.equal(plainJson.code, 1, plainJson.stderr)
    assert.deepEqual(JSON.parse(plainJson.stdout) as { passed: boolean, notVerified: number[] }, {
      ...JSON.parse(plainJson.stdout),
      passed: false,
      notVerified: [0, 1],
    })

    const clean = await verifyDigests(target, topic)
    assert.equal(clean.code, 0, clean.stderr)
    assert.equal(clean.json.passed, true)
    assert.deepEqual(clean.json.total, {
      ranges: 10,
      checked: 2 * PER_PARTITION,
      matched: 2 * PER_PARTITION,
      missing: 0,
      duplicated: 0,
      extra: 0,
      changedRanges: 0,
      notChecked: 0,
      uncovered: 0,
    })

    // Behind the mirror's back the target topic is rewritten: partition 0 with a changed value (500), a dropped record (2500) and one written twice (4500).
    const copy = await readAll(target, topic)
    assert.equal(copy.length, 2 * PER_PARTITION)
    await deleteTopicIfExists(target, topic)
    await waitUntil(async () => !(await withAdmin(target, admin => admin.listTopics())).includes(topic), { message: 'the target topic to be deleted' })
    await withAdmin(target, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }))
    const tampered = copy.flatMap(r => {
      if (r.partition !== 0) return [asMessage(r)]
      const offset = Number(r.offset)
      if (offset === 500) return [asMessage(r, Buffer.from("changed behind the mirror's back"))]
      if (offset === 2500) return []
      if (offset === 4500) return [asMessage(r), asMessage(r)]
      return [asMessage(r)]
    })
    await produce(target, topic, tampered)

    const found = await verifyDigests(target, topic)
    assert.equal(found.code, 1, found.stderr)
    assert.equal(found.json.passed, false)
    const [p0, p1] = found.json.partitions
    assert.deepEqual([p0?.changedRanges, p0?.missing, p0?.duplicated, p0?.extra, p0?.matched], [1, 1, 1, 0, 2000])
    assert.deepEqual(
      p0?.findings.map(f => [f.kind, f.targetOffset]),
      [
        ['changed', null],
        ['missing', null],
        ['duplicated', 4499],
      ]
    )
    assert.match(
      p0?.findings[0]?.text ?? '',
      /^changed: target offsets 0-999 hold 1000 records that differ from the digest of target .*-0 offsets 0-999 \(source .*-0 offsets 0-999\)/
    )
    assert.deepEqual([p1?.matched, p1?.changedRanges, p1?.missing, p1?.duplicated], [PER_PARTITION, 0, 0, 0])

    // The table names the same findings, and --allow-duplicates does not pass a changed copy.
    const table = await runMirrorCheck(['verify', '--digests', '--target', target.bootstrap, '--topic', topic, '--allow-duplicates'], { timeoutMs: 120_000 })
    assert.equal(table.code, 1, table.stderr)
    t.diagnostic(table.stdout)
    assert.match(table.stdout, /missing: 1 record\(s\) of the digest of target \S+-0 offsets 2000-2999/)
    assert.match(table.stdout, /duplicated: target \S+-0@4499 is one more copy of its neighbour/)
    assert.match(table.stdout, /FAILED: 10000 records in 10 digests checked against \S+ in [\d.]+ s, without the source/)
  }
)

test('verify --digests refuses flags that read the source before connecting, and exits 2 without a digests topic', { timeout: 60_000 }, async () => {
  const unreachable = '127.0.0.1:1'
  for (const [flags, message] of [
    [
      ['--source', unreachable],
      /^mirror-check: --source and --digests exclude each other: --digests checks the target against the mirror's digests and reads nothing from the source/,
    ],
    [['--until-mirrored'], /--until-mirrored and --digests exclude each other/],
    [['--digest'], /--digest and --digests exclude each other/],
    [['--wait', '5'], /--wait and --digests exclude each other/],
    [['--from-offset', '10', '--to-offset', '5'], /--to-offset "5" is not after --from-offset "10"/],
  ] as Array<[string[], RegExp]>) {
    const result = await runMirrorCheck(['verify', '--digests', '--target', unreachable, '--topic', 'orders', ...flags])
    assert.equal(result.code, 2, `${flags.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, message)
    assert.doesNotMatch(result.stderr, /ECONNREFUSED|connect| {4}at /)
  }
  const noDigests = await runMirrorCheck(['verify', '--digests-topic', 'x', '--source', unreachable, '--target', unreachable, '--topic', 'orders'])
  assert.equal(noDigests.code, 2)
  assert.match(noDigests.stderr, /--digests-topic needs --digests/)

  const { target } = await sharedClusters()
  const missing = await runMirrorCheck([
    'verify',
    '--digests',
    '--target',
    target.bootstrap,
    '--topic',
    'orders',
    '--digests-topic',
    uniqueName('no-such-digests'),
  ])
  assert.equal(missing.code, 2, missing.stderr)
  assert.match(missing.stderr, /--digests: no digests topic \S+ on the target cluster .*; run the sidecar with --digests.enabled true/)
})

test('copies a sidecar made before a kill -9 have no digests: verify --digests counts them as uncovered, not as matched', { timeout: 180_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName('digests-kill'), partitions: 1 })
  t.after(() => deleteTopicIfExists(target, topic))
  await produce(source, topic, records(1).slice(0, 2000))
  const group = uniqueName('mirror')
  // A short session: the killed member leaves the group in 6 s, not the default 45 s, before the second joins.
  const run = { source, target, groupId: group, include: topic, consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 } }
  const first = spawnSidecar(t, { ...run, args: ['--digests.enabled', 'true', '--offset.commit.interval.ms', '600000'] })
  await waitMirroring(first)
  await waitUntil(async () => await totalRecords(target, topic).catch(() => 0n) === 2000n, { timeoutMs: 60_000, message: 'the first copy on the target' })
  first.child.kill('SIGKILL')
  assert.equal(await first.exited, 'SIGKILL')
  const second = spawnSidecar(t, { ...run, args: ['--digests.enabled', 'true'] })
  await waitMirroring(second)
  await waitAllCommitted(source, second, group, topic)
  second.child.kill('SIGTERM')
  assert.equal(await second.exited, 0, second.stderr())

  const result = await verifyDigests(target, topic)
  assert.equal(result.code, 0, result.stderr)
  assert.deepEqual([result.json.total.checked, result.json.total.matched, result.json.total.uncovered], [2000, 2000, 2000])
  assert.match(result.stderr, /offsets 0-1999 \(2000\) lie before the first digest/)
})
