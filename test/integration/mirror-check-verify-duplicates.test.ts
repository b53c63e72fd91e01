import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { committedOffsets, createTopic, deleteTopicIfExists, endOffsets, produce, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring, type SidecarProcess, type SidecarRun } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)

interface VerifyJson {
  passed: boolean
  total: { checked: number, matched: number, missing: number, duplicated: number, extra: number, changed: number, outOfOrder: number }
  alignment: { offsetSyncsTopic: string | null, byPartition: Record<string, string> }
  partitions: Array<{ partition: number, alignment: { targetOffset: number, earliestCopyOffset?: number, method: string }, counts: { duplicated: number } }>
}

/** Records `k<from>..k<from+count-1>`, spread over `partitions` partitions, each key once. */
function keyed (from: number, count: number, partitions: number): Message[] {
  const now = Date.now()
  return Array.from({ length: count }, (_, i) => ({
    partition: (from + i) % partitions,
    key: `k${from + i}`,
    value: `${from + i}:`.padEnd(100, 'v'),
    timestamp: String(now + i),
  }))
}

/** The independent count: every key on the target read with kcat; a key seen n times is n - 1 duplicates. */
async function kcatDuplicates (bootstrap: string, topic: string): Promise<{ records: number, keys: number, duplicates: number }> {
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k\n'], {
    maxBuffer: 64 * 1024 * 1024,
  })
  const keys = stdout.split('\n').filter(line => line !== '')
  const seen = new Map<string, number>()
  for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1)
  let duplicates = 0
  for (const n of seen.values()) duplicates += n - 1
  return { records: keys.length, keys: seen.size, duplicates }
}

async function verify (
  source: LocalCluster,
  target: LocalCluster,
  topic: string,
  group: string,
  extra: string[] = []
): Promise<{ code: number, json: VerifyJson, stderr: string }> {
  const result = await runMirrorCheck(
    ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', group, '--format', 'json', ...extra],
    { timeoutMs: 120_000 }
  )
  assert.ok(result.stdout.startsWith('{'), `JSON on stdout, got: ${result.stdout}\nstderr: ${result.stderr}`)
  return { code: result.code, json: JSON.parse(result.stdout) as VerifyJson, stderr: result.stderr }
}

async function waitAllCommitted (source: LocalCluster, sidecar: SidecarProcess, group: string, topic: string, timeoutMs = 90_000): Promise<void> {
  await waitUntil(async () => {
    const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs, message: 'the mirror to commit the source end offsets' }).catch(error => {
    throw new Error(`${(error as Error).message}\nsidecar log:\n${sidecar.stderr().split('\n').filter(l => !l.includes('"level":"debug"')).slice(-20).join('\n')}`)
  })
}

/** The smallest committed offset of `group` over the partitions of `topic` (-1n while one has none). */
async function committedOnEvery (source: LocalCluster, group: string, topic: string): Promise<bigint> {
  const committed = [...(await committedOffsets(source, group, topic)).values()]
  return committed.length === 0 ? -1n : committed.reduce((a, b) => a < b ? a : b)
}

async function kill9 (sidecar: SidecarProcess): Promise<void> {
  sidecar.child.kill('SIGKILL')
  assert.equal(await sidecar.exited, 'SIGKILL')
}

const consumer = { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 }

test(
  'a sidecar killed before its first commit copies everything again: verify counts every first copy as a duplicate, with and without offset syncs',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const partitions = 3
    const total = 2_000
    const topic = await createTopic(t, source, { name: uniqueName('verify-dups-first'), partitions })
    t.after(() => deleteTopicIfExists(target, topic))
    await produce(source, topic, keyed(0, total, partitions))
    const group = uniqueName('mirror')
    const run: SidecarRun = { source, target, groupId: group, include: topic, consumer }

    const first = spawnSidecar(t, { ...run, args: ['--offset.commit.interval.ms', '600000'] })
    await waitMirroring(first)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === BigInt(total), {
      timeoutMs: 60_000,
      message: 'the first copy on the target',
    })
    await kill9(first)
    assert.ok(
      [...(await committedOffsets(source, group, topic)).values()].every(o => o < 0n),
      'nothing was committed before the kill'
    )

    const second = spawnSidecar(t, run)
    await waitMirroring(second)
    await waitAllCommitted(source, second, group, topic)
    assert.equal(await totalRecords(target, topic), BigInt(2 * total), 'every record twice on the target')
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0, second.stderr().slice(-2000))

    const independent = await kcatDuplicates(target.bootstrap, topic)
    t.diagnostic(`kcat: ${independent.records} records, ${independent.keys} keys, ${independent.duplicates} duplicates`)
    assert.deepEqual(independent, { records: 2 * total, keys: total, duplicates: total })

    const bySyncs = await verify(source, target, topic, group)
    t.diagnostic(`verify (offset syncs): ${JSON.stringify(bySyncs.json.total)}`)
    assert.deepEqual(bySyncs.json.alignment.byPartition, { 0: 'offset-syncs', 1: 'offset-syncs', 2: 'offset-syncs' })
    assert.deepEqual(bySyncs.json.total, {
      ...bySyncs.json.total,
      checked: total,
      matched: total,
      missing: 0,
      duplicated: independent.duplicates,
      extra: 0,
      changed: 0,
      outOfOrder: 0,
    })
    assert.equal(bySyncs.code, 1, `duplicates fail the check: ${bySyncs.stderr}`)
    assert.equal(bySyncs.json.passed, false)
    // The syncs point at the second copy; the first copies before it are what was not looked at before.
    for (const p of bySyncs.json.partitions) {
      assert.equal(p.alignment.method, 'offset sync')
      assert.equal(p.alignment.earliestCopyOffset, 0, `partition ${p.partition}: read from the first copy`)
      assert.ok(p.alignment.targetOffset > 0, `partition ${p.partition}: the syncs point at the second copy`)
    }

    const table = await runMirrorCheck(['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', group])
    assert.equal(table.code, 1, table.stderr)
    for (let p = 0; p < partitions; p++) {
      const match = bySyncs.json.partitions[p]!.alignment.targetOffset
      // The first copy of the partition's `match` records is at 0..match-1, the second (the match) from `match` on.
      assert.match(table.stdout, new RegExp(`^${p} +0-${match - 1} +${p}@0, match ${p}@${match} +${match} +0 +${match} +0 `, 'm'))
      assert.match(
        table.stderr,
        new RegExp(
          `target offsets 0\\.\\.${match - 1} of partition ${p} lie before the copy the alignment points at \\(${p}@${match}\\): read as earlier copies, ${match} duplicated, 0 extra, 0 changed`
        )
      )
    }
    assert.match(table.stdout, new RegExp(`^FAILED: ${total} records checked`, 'm'))

    const allowed = await verify(source, target, topic, group, ['--allow-duplicates'])
    assert.equal(allowed.code, 0, allowed.stderr)
    assert.equal(allowed.json.total.duplicated, independent.duplicates)

    const byOrder = await verify(source, target, topic, group, ['--no-offset-syncs'])
    t.diagnostic(`verify (--no-offset-syncs): ${JSON.stringify(byOrder.json.total)}`)
    assert.equal(byOrder.code, 1)
    assert.deepEqual(byOrder.json.total, bySyncs.json.total, 'the same totals as by order')

    const byRanges = await verify(source, target, topic, group, ['--digest'])
    assert.equal(byRanges.code, 1)
    assert.deepEqual(byRanges.json.total, bySyncs.json.total, 'the same totals with range hashes first')
  }
)

test(
  'kill -9 twice while a producer writes (before the first commit, then after commits): verify counts the duplicates an independent reader counts, with and without offset syncs',
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const partitions = 3
    const total = 15_000
    const topic = await createTopic(t, source, { name: uniqueName('verify-dups-kills'), partitions })
    t.after(() => deleteTopicIfExists(target, topic))
    const group = uniqueName('mirror')
    const run: SidecarRun = { source, target, groupId: group, include: topic, consumer, args: ['--offset.commit.interval.ms', '1000', '--queue.size', '2000'] }
    await produce(source, topic, keyed(0, 1_500, partitions))
    // A steady stream of about 1,500 records a second (a rate, not a wait for a condition), so that both kills fall inside it.
    const producing = (async () => {
      for (let from = 1_500; from < total; from += 300) {
        await produce(source, topic, keyed(from, 300, partitions))
        await sleep(200)
      }
    })()

    // The first kill comes before the first commit (everything copied so far is copied again, and no
    // offset sync describes the first copies), the second after commits (what was acknowledged since is copied again).
    const first = spawnSidecar(t, { ...run, args: ['--offset.commit.interval.ms', '600000', '--queue.size', '2000'] })
    await waitMirroring(first)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= 3_000n, { timeoutMs: 60_000, message: 'mirroring under way' })
    await kill9(first)
    const committedAtRestart = await committedOnEvery(source, group, topic)
    assert.equal(committedAtRestart, -1n, 'nothing committed before the first kill')
    const onTargetAtRestart = await totalRecords(target, topic)
    t.diagnostic(
      `first kill: ${onTargetAtRestart} records on the target, nothing committed, source end offsets ${[...(await endOffsets(source, topic)).values()].join(',')}`
    )

    const second = spawnSidecar(t, run)
    await waitMirroring(second)
    await waitUntil(
      async () => (await committedOnEvery(source, group, topic)) > committedAtRestart && (await totalRecords(target, topic)) >= onTargetAtRestart + 1_000n,
      { timeoutMs: 60_000, message: 'the restarted mirror under way, committed' }
    )
    await kill9(second)
    t.diagnostic(
      `second kill: committed at least ${await committedOnEvery(source, group, topic)} on every partition, ${await totalRecords(target, topic)} records on the target, source end offsets ${[...(await endOffsets(source, topic)).values()].join(',')}`
    )
    await producing

    const third = spawnSidecar(t, run)
    await waitMirroring(third)
    await waitAllCommitted(source, third, group, topic)
    third.child.kill('SIGTERM')
    assert.equal(await third.exited, 0, third.stderr().slice(-2000))

    const independent = await kcatDuplicates(target.bootstrap, topic)
    t.diagnostic(`kcat: ${independent.records} records, ${independent.keys} keys, ${independent.duplicates} duplicates`)
    assert.equal(independent.keys, total, 'no record missing')
    assert.ok(independent.duplicates > 0, 'the kills left duplicates on the target')

    for (const flags of [[], ['--no-offset-syncs']]) {
      const result = await verify(source, target, topic, group, flags)
      t.diagnostic(`verify ${flags.join(' ') || '(offset syncs)'}: ${JSON.stringify(result.json.total)}`)
      assert.deepEqual(
        result.json.total,
        { ...result.json.total, checked: total, matched: total, missing: 0, duplicated: independent.duplicates, extra: 0, changed: 0, outOfOrder: 0 },
        `verify ${flags.join(' ')}: ${result.stderr}`
      )
      assert.equal(result.code, 1, 'duplicates fail the check')
    }
    const allowed = await verify(source, target, topic, group, ['--allow-duplicates'])
    assert.equal(allowed.code, 0, allowed.stderr)
  }
)
