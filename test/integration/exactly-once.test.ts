import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test, type TestContext } from 'node:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { LocalCluster } from '../../scripts/local-kafka/local-cluster.js'
import { createKafkaClient } from '../../src/kafka/client.js'
import {
  committedOffsets,
  createTopic,
  deleteTopicIfExists,
  endOffsets,
  sharedClusters,
  startExtraCluster,
  totalRecords,
  uniqueName,
  withAdmin,
} from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)

/** `partition|key` of every record of `topic`, as an independent reader (kcat, librdkafka) sees it with read_committed. */
async function readCommitted (cluster: LocalCluster, topic: string): Promise<string[]> {
  const { stdout } = await execFileAsync(
    'kcat',
    ['-C', '-b', cluster.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%p|%k\n'],
    { maxBuffer: 256 * 1024 * 1024 }
  )
  return stdout.split('\n').filter(line => line !== '')
}

/**
 * For a failed audit: the missing source records per partition as offset ranges, and whether the
 * target holds them at all (read_uncommitted: written in a transaction that was aborted or is
 * still open) or never got them.
 */
async function explainMissing (source: LocalCluster, target: LocalCluster, topic: string): Promise<string> {
  const read = async (cluster: LocalCluster, isolation: string): Promise<string[]> => {
    const { stdout } = await execFileAsync(
      'kcat',
      ['-C', '-b', cluster.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', `isolation.level=${isolation}`, '-f', '%p|%k|%o\n'],
      { maxBuffer: 256 * 1024 * 1024 }
    )
    return stdout.split('\n').filter(line => line !== '')
  }
  const [from, committed, uncommitted] = await Promise.all([read(source, 'read_committed'), read(target, 'read_committed'), read(target, 'read_uncommitted')])
  const keyOf = (line: string): string => line.split('|').slice(0, 2).join('|')
  const onTarget = new Set(committed.map(keyOf))
  const anyOnTarget = new Map(uncommitted.map(line => [keyOf(line), line.split('|')[2]]))
  const ranges: string[] = []
  let open: { partition: string, first: string, last: string, count: number, uncommitted: number, targetOffsets: string[] } | undefined
  const close = (): void => {
    if (open === undefined) return
    ranges.push(`partition ${open.partition}: source offsets ${open.first}-${open.last} (${open.count} records), ${open.uncommitted} of them on the target read_uncommitted${open.targetOffsets.length > 0 ? ` at target offsets ${open.targetOffsets[0]}-${open.targetOffsets[open.targetOffsets.length - 1]}` : ''}`)
    open = undefined
  }
  // kcat interleaves partitions: each partition's records in log order, one partition after the other.
  const ordered = [...from].sort((a, b) => Number(a.split('|')[0]) - Number(b.split('|')[0]))
  for (const line of ordered) {
    const [partition = '', , offset = ''] = line.split('|')
    if (onTarget.has(keyOf(line))) { close(); continue }
    if (open !== undefined && open.partition !== partition) close()
    const targetOffset = anyOnTarget.get(keyOf(line))
    open ??= { partition, first: offset, last: offset, count: 0, uncommitted: 0, targetOffsets: [] }
    open.last = offset
    open.count++
    if (targetOffset !== undefined) { open.uncommitted++; open.targetOffsets.push(targetOffset) }
  }
  close()
  return ranges.slice(0, 40).join('\n')
}

/** Each sidecar's log, kept in one folder for a failure's diagnosis (killed ones included). */
const LOG_DIR = mkdtempSync(join(tmpdir(), 'eos-logs-'))
let logCount = 0
function keepLog (sidecar: SidecarProcess, name: string): void {
  const path = join(LOG_DIR, `${String(++logCount).padStart(2, '0')}-${name}.log`)
  void sidecar.exited.then(() => writeFileSync(path, sidecar.stderr()))
}

/** Keys per partition in log order. */
function byPartition (lines: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const line of lines) {
    const [partition = '', key = ''] = line.split('|')
    let keys = out.get(partition)
    if (keys === undefined) out.set(partition, keys = [])
    keys.push(key)
  }
  return out
}

/** Missing and duplicated source records on the target, and whether each partition's order is the source's. */
async function audit (
  source: LocalCluster,
  target: LocalCluster,
  topic: string
): Promise<{ missing: number, duplicates: number, orderKept: boolean, sourceRecords: number }> {
  const [from, to] = await Promise.all([readCommitted(source, topic), readCommitted(target, topic)])
  const seen = new Map<string, number>()
  for (const line of to) seen.set(line, (seen.get(line) ?? 0) + 1)
  const missing = from.filter(line => !seen.has(line)).length
  const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
  const [a, b] = [byPartition(from), byPartition(to)]
  const orderKept = [...a].every(([partition, keys]) => JSON.stringify(b.get(partition) ?? []) === JSON.stringify(keys))
  return { missing, duplicates, orderKept, sourceRecords: from.length }
}

/**
 * `audit` once every transaction the mirror committed is visible: EndTxn returns once the
 * coordinator decided, and the commit markers reach the topic's partitions a moment later, so a
 * read_committed reader that ends at the last stable offset right then misses the newest
 * transactions. Read again (every second, up to 20 s) while records are missing; `lateMs` says how
 * long they took to show. Records that never show stay missing.
 */
async function settledAudit (source: LocalCluster, target: LocalCluster, topic: string): Promise<Awaited<ReturnType<typeof audit>> & { lateMs: number }> {
  let result = await audit(source, target, topic)
  if (result.missing === 0) return { ...result, lateMs: 0 }
  const started = Date.now()
  await waitUntil(
    async () => {
      result = await audit(source, target, topic)
      return result.missing === 0
    },
    { timeoutMs: 20_000, intervalMs: 1_000, message: 'missing records to show' }
  ).catch(() => {
    /* the last audit stays in result, which the caller asserts on */
  })
  return { ...result, lateMs: Date.now() - started }
}

/** Writes `total` keyed records to `topic` in rounds of `perRound` until stopped or done: the traffic under which the mirror is killed. */
function startWriter (
  source: LocalCluster,
  topic: string,
  total: number,
  perRound: number,
  pauseMs: number,
  prefix = 'r',
  transactionalId?: string
): { done: Promise<void>, written: () => number, finished: () => boolean, stop: () => Promise<void> } {
  const producer = createKafkaClient(source.connection('eos-writer')).producer({
    idempotent: true,
    maxInFlightRequests: 1,
    ...(transactionalId === undefined ? {} : { transactionalId }),
  })
  let written = 0
  let finished = false
  let stopped = false
  const done = (async () => {
    await producer.connect()
    try {
      for (let round = 0; written < total && !stopped; round++) {
        const messages = Array.from({ length: Math.min(perRound, total - written) }, (_, i) => ({
          key: `${prefix}${round}-${i}`,
          value: `value-${round}-${i}-${'x'.repeat(40)}`,
        }))
        const record = { topic, acks: -1, compression: round % 2 === 0 ? kafkajs.CompressionTypes.GZIP : kafkajs.CompressionTypes.None, messages }
        if (transactionalId === undefined) {
          await producer.send(record)
        } else {
          // A transaction per round: every round ends in a commit marker, which a caught-up fetch gets alone.
          const transaction = await producer.transaction()
          await transaction.send(record)
          await transaction.commit()
        }
        written += messages.length
        // Traffic spread over the kills, not a wait for a condition.
        await sleep(pauseMs)
      }
    } finally {
      finished = true
      await producer.disconnect()
    }
  })()
  // stop(): the round being written completes, then the writer ends.
  return {
    done,
    written: () => written,
    finished: () => finished,
    stop: async () => {
      stopped = true
      await done
    },
  }
}

/** Waits until the flow's group committed the source's end on every partition: everything is on the target and its transactions committed. */
async function waitCaughtUp (source: LocalCluster, group: string, topic: string, timeoutMs = 120_000, copier?: SidecarProcess): Promise<void> {
  await waitUntil(async () => {
    if (copier !== undefined && copier.child.exitCode !== null) return true
    const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs, message: `the whole topic copied and committed (sidecar logs in ${LOG_DIR})` })
  if (copier !== undefined && copier.child.exitCode !== null) {
    throw new Error(`the sidecar left to copy exited (${copier.child.exitCode}) before the topic was copied:\n${copier.stderr().slice(-4000)}`)
  }
}

function exactlyOnceSidecar (
  t: TestContext,
  source: LocalCluster,
  target: LocalCluster,
  group: string,
  topic: string,
  extra: readonly string[] = []
): SidecarProcess {
  const sidecar = spawnSidecar(t, {
    source,
    target,
    groupId: group,
    include: topic,
    consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 },
    args: ['--exactly.once', 'true', '--offset.commit.interval.ms', '300', ...extra],
  })
  keepLog(sidecar, topic)
  return sidecar
}

/** What the intake logs when a fetch continued past what was handed over (`Lane.contiguous`). */
const PAST_HANDED_OVER = 'the source fetched a partition from past what was handed over'

/** Kills in the kill test: 8 in CI; `EOS_KILLS=20` runs the issue's full count. */
const KILLS = Number(process.env.EOS_KILLS ?? 8)

test(
  "exactly-once: kill -9s (8; EOS_KILLS=N for more) at moments spread over a producer's traffic, through pass-through and the decoding path, then a 20 s target outage, then a source broker restart: a read_committed reader of the target sees every record once, in source order per partition",
  { timeout: 900_000 },
  async t => {
    const source = await startExtraCluster(t, 'eos-source')
    const target = await startExtraCluster(t, 'eos-target')
    // Extra clusters stop in the test's after hooks: the topic is created here rather than with createTopic (whose delete hook would run after).
    const topic = uniqueName('eos-kill')
    await withAdmin(source, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3 }] }))
    const group = uniqueName('eos-kill')
    // Writes until stopped: every kill happens while it writes.
    const writer = startWriter(source, topic, Number.MAX_SAFE_INTEGER, 150, 100)
    for (let kill = 0; kill < KILLS; kill++) {
      // Every other run decodes every batch, so both paths write inside the transactions.
      const sidecar = exactlyOnceSidecar(t, source, target, group, topic, kill % 2 === 0 ? [] : ['--pass.through', 'off'])
      await waitMirroring(sidecar)
      const before = await totalRecords(target, topic).catch(() => 0n)
      await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= before + 1_500n || sidecar.child.exitCode !== null, {
        timeoutMs: 60_000,
        message: 'the mirror copying again',
      })
      assert.equal(sidecar.child.exitCode, null, `the sidecar stopped on its own:\n${sidecar.stderr().slice(-3000)}`)
      sidecar.child.kill('SIGKILL')
      await sidecar.exited
    }
    const afterKills = writer.written()

    // Then a 20 s target outage while the producer writes on.
    const sidecar = exactlyOnceSidecar(t, source, target, group, topic)
    await waitMirroring(sidecar)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= 1_500n, { timeoutMs: 60_000, message: 'the mirror copying' })
    await target.pause()
    const downSince = Date.now()
    // The lane finds the outage in a write, or in the commit it waits for (kafkajs retries EndTxn and logs the refused connections).
    const noticed = (): boolean =>
      sidecar.stderr().includes('writing to the target failed; retrying') || sidecar.stderr().includes(`ECONNREFUSED ${target.bootstrap}`)
    await waitUntil(() => noticed() || sidecar.child.exitCode !== null, { timeoutMs: 30_000, message: 'the sidecar to notice the outage' }).catch(error => {
      throw new Error(`${(error as Error).message}; the sidecar said:\n${sidecar.stderr().slice(-4000)}`)
    })
    await waitUntil(() => Date.now() - downSince >= 20_000 || sidecar.child.exitCode !== null, {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: 'twenty seconds of outage',
    })
    assert.equal(sidecar.child.exitCode, null, `the sidecar keeps running while the target is down:\n${sidecar.stderr().slice(-2000)}`)
    await target.resume()
    await writer.stop()
    await waitCaughtUp(source, group, topic)

    // Then a source broker restart, and more records.
    await source.pause()
    await source.resume()
    const second = startWriter(source, topic, 6_000, 150, 50, 'b')
    await second.done
    await waitCaughtUp(source, group, topic)
    const result = await settledAudit(source, target, topic)
    t.diagnostic(
      `${KILLS} kills (${afterKills} records written by then), 20 s target outage, source broker restart; source ${result.sourceRecords} records; target read_committed: ${result.missing} missing, ${result.duplicates} duplicates; target total read_uncommitted ${await totalRecords(target, topic)}`
    )
    if (result.missing > 0) {
      // For the diagnosis (the assertion below still fails): records held back by a transaction left
      // open show up once the coordinator aborts it (transaction.timeout.ms, 60 s); lost ones never do.
      const since = Date.now()
      let later: Awaited<ReturnType<typeof audit>> | undefined
      await waitUntil(
        async () => {
          later = await audit(source, target, topic)
          return later.missing === 0
        },
        { timeoutMs: 90_000, intervalMs: 5_000, message: 'the missing records to show' }
      ).catch(() => {
        /* the last audit stays in later, reported below */
      })
      t.diagnostic(
        later === undefined || later.missing > 0
          ? `still missing 90 s later (${later?.missing ?? '?'}): lost`
          : `all visible ${((Date.now() - since) / 1000).toFixed(0)} s later: held back by an open transaction (duplicates then ${later.duplicates})`
      )
      t.diagnostic(`missing ranges:\n${await explainMissing(source, target, topic)}`)
      t.diagnostic(`last sidecar's log:\n${sidecar.stderr().slice(-6000)}`)
      t.diagnostic(`every sidecar's log (once each exited): ${LOG_DIR}`)
    }
    assert.equal(result.sourceRecords, writer.written() + 6_000)
    assert.deepEqual({ missing: result.missing, duplicates: result.duplicates, orderKept: result.orderKept }, { missing: 0, duplicates: 0, orderKept: true })
    const metrics = await scrape(await sidecarHttpPort(sidecar))
    assert.match(metrics, /kafka_mirror_transactions_total\{[^}]*result="committed"[^}]*\} [1-9]/)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  'exactly-once: two, then three, then one process share the flow while records flow, one of them SIGSTOPped past the session timeout and resumed: 0 missing, 0 duplicates',
  { timeout: 420_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('eos-scale'), partitions: 6 })
    t.after(() => deleteTopicIfExists(target, topic))
    const group = uniqueName('eos-scale')
    const writer = startWriter(source, topic, 36_000, 150, 100)
    const first = exactlyOnceSidecar(t, source, target, group, topic)
    const second = exactlyOnceSidecar(t, source, target, group, topic)
    await Promise.all([waitMirroring(first), waitMirroring(second)])
    const grown = async (by: bigint): Promise<void> => {
      const before = await totalRecords(target, topic).catch(() => 0n)
      await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= before + by, { timeoutMs: 90_000, message: 'the mirror copying' })
    }
    await grown(2_000n)
    const third = exactlyOnceSidecar(t, source, target, group, topic)
    await waitMirroring(third)
    await grown(2_000n)
    // Frozen past session.timeout.ms (6 s): its lanes move to the others, whose InitProducerId fences it.
    const taken = (): number => [first, third].reduce((sum, p) => sum + p.stderr().split('producer lane taken').length - 1, 0)
    const takenBefore = taken()
    second.child.kill('SIGSTOP')
    await waitUntil(() => taken() > takenBefore, { timeoutMs: 60_000, message: "the frozen process's lanes taken by the others" })
    await grown(2_000n)
    second.child.kill('SIGCONT')
    await grown(2_000n)
    // Resumed, it finds its transactions fenced: it takes those lanes again, or gives them up in the
    // rebalance it hears of; none of them stops on its own, and each drains on SIGTERM. The resumed
    // one may get SIGTERM before it is a member again: then its final source commit is refused and
    // it says so (exit 2); nothing is copied twice, its positions are on the target.
    second.child.kill('SIGTERM')
    third.child.kill('SIGTERM')
    const [secondExit, thirdExit] = await Promise.all([second.exited, third.exited])
    assert.ok(
      secondExit === 0 ||
        (secondExit === 2 && second.stderr().includes("the final commit on the source cluster failed; the group's offsets stay behind what was copied")),
      `second exits 0, or 2 after a refused final commit, got ${secondExit} (logs in ${LOG_DIR})`
    )
    assert.equal(thirdExit, 0, `third exits 0 (logs in ${LOG_DIR})`)
    await writer.done
    await waitCaughtUp(source, group, topic, 120_000, first)
    const result = await settledAudit(source, target, topic)
    const guarded = [first, second, third].reduce((sum, p) => sum + p.stderr().split(PAST_HANDED_OVER).length - 1, 0)
    t.diagnostic(
      `source ${result.sourceRecords}; target read_committed: ${result.missing} missing, ${result.duplicates} duplicates; batches refused as past what was handed over: ${guarded}${result.lateMs > 0 ? `; the last records showed ${result.lateMs} ms late` : ''}`
    )
    if (result.missing > 0) {
      t.diagnostic(`missing ranges:\n${await explainMissing(source, target, topic)}`)
      t.diagnostic(`every sidecar's log (once each exited): ${LOG_DIR}`)
    }
    assert.equal(result.sourceRecords, 36_000)
    assert.equal(result.missing, 0, 'no record missing')
    assert.equal(result.duplicates, 0, 'no record twice')
    assert.ok(result.orderKept, "per-partition order is the source's")
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 0)
  }
)

/** Waits until the sidecar logged `text` `times` times; fails at once when it exited instead, with its log; on a timeout with its metrics and log. */
async function waitLogged (sidecar: SidecarProcess, text: string, times = 1, timeoutMs = 60_000): Promise<void> {
  await waitUntil(() => sidecar.child.exitCode !== null || sidecar.stderr().split(text).length - 1 >= times, {
    timeoutMs,
    message: `the sidecar to log "${text}" ${times} times`,
  }).catch(async error => {
    const metrics = await scrape(await sidecarHttpPort(sidecar)).catch(() => '')
    const state = metrics
      .split('\n')
      .filter(line => /^kafka_mirror_(queue|lanes|assigned|transactions|records_(consumed|produced)|consumer_lag)/.test(line))
      .join('\n')
    throw new Error(`${(error as Error).message}\nmetrics:\n${state}\nlog:\n${sidecar.stderr().slice(-6000)}`)
  })
  if (sidecar.child.exitCode !== null) throw new Error(`sidecar exited (${sidecar.child.exitCode}) before logging "${text}":\n${sidecar.stderr().slice(-4000)}`)
}

test(
  'exactly-once: the lanes fenced twice while this process still owns them (another producer took their transactional ids, no rebalance), a transactional source: each lane is taken again from the positions on the target, the process goes on, 0 missing, 0 duplicates',
  { timeout: 240_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('eos-fence'), partitions: 4 })
    t.after(() => deleteTopicIfExists(target, topic))
    const group = uniqueName('eos-fence')
    // Traffic until stopped (a lane fenced while it has no open transaction finds out only at its
    // next write), in transactions: fetches of only a commit marker are skipped, never past a seek.
    const writer = startWriter(source, topic, 1_000_000, 100, 100, 'r', uniqueName('eos-fence-writer'))
    const sidecar = exactlyOnceSidecar(t, source, target, group, topic, process.env.EOS_DEBUG === undefined ? [] : ['--log.level', 'debug'])
    await waitMirroring(sidecar)
    await waitLogged(sidecar, 'producer lane taken (exactly-once)')
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= 1_000n, { timeoutMs: 60_000, message: 'the mirror copying' })
    const lanes = [...new Set([...sidecar.stderr().matchAll(/"msg":"producer lane taken \(exactly-once\)"[^\n]*?"lane":(\d+)/g)].map(match => match[1]))]
    assert.ok(lanes.length > 0, 'the lanes this process holds')
    const fence = async (): Promise<void> => {
      // InitProducerId on each of a lane's transactional ids: the sidecar's producers with those ids are fenced.
      await Promise.all(
        lanes
          .flatMap(lane => [`${group}.lane-${lane}`, `${group}.lane-${lane}.2`])
          .map(async transactionalId => {
            const producer = createKafkaClient(target.connection('eos-fencer')).producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
            await producer.connect()
            try {
              await producer.transaction()
            } finally {
              await producer.disconnect()
            }
          })
      )
    }
    const retaken = 'taking the lane again from the positions on the target'
    const taken = 'producer lane taken (exactly-once)'
    const count = (text: string): number => sidecar.stderr().split(text).length - 1
    const takenBefore = count(taken)
    await fence()
    await waitLogged(sidecar, retaken)
    // Every lane found fenced is taken again (its own InitProducerId) before the second fencing:
    // one sent after that fencing would hold the newest epoch, and nothing would fence it.
    await waitUntil(() => count(taken) - takenBefore >= count(retaken) || sidecar.child.exitCode !== null, {
      timeoutMs: 60_000,
      message: 'the fenced lanes taken again',
    })
    const copied = await totalRecords(target, topic).catch(() => 0n)
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= copied + 1_000n, {
      timeoutMs: 60_000,
      message: 'the mirror copying after the first fencing',
    })
    const before = count(retaken)
    await fence()
    await waitLogged(sidecar, retaken, before + 1)
    await writer.stop()
    await waitCaughtUp(source, group, topic)
    const result = await settledAudit(source, target, topic)
    t.diagnostic(
      `source ${result.sourceRecords}; target read_committed: ${result.missing} missing, ${result.duplicates} duplicates; lanes fenced: ${lanes.join(', ')}${result.lateMs > 0 ? `; the last records showed ${result.lateMs} ms late` : ''}`
    )
    if (result.missing > 0) t.diagnostic(`missing ranges:\n${await explainMissing(source, target, topic)}`)
    assert.equal(result.sourceRecords, writer.written())
    assert.deepEqual({ missing: result.missing, duplicates: result.duplicates, orderKept: result.orderKept }, { missing: 0, duplicates: 0, orderKept: true })
    assert.equal(sidecar.child.exitCode, null, 'the process went on')
    assert.ok(!sidecar.stderr().includes(PAST_HANDED_OVER), "every seek brought the fetch back to the positions (the intake's guard never had to)")
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  'exactly-once: a transactional source with aborted transactions: nothing aborted is copied, every committed record once (target read_committed)',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { name: uniqueName('eos-txn'), partitions: 2 })
    t.after(() => deleteTopicIfExists(target, topic))
    const producer = createKafkaClient(source.connection('eos-tx')).producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      for (let round = 0; round < 12; round++) {
        const tx = await producer.transaction()
        await tx.send({
          topic,
          acks: -1,
          compression: kafkajs.CompressionTypes.GZIP,
          messages: Array.from({ length: 40 }, (_, i) => ({ partition: i % 2, key: `${round % 3 === 1 ? 'aborted' : 'committed'}-${round}-${i}`, value: 'v' })),
        })
        if (round % 3 === 1) await tx.abort()
        else await tx.commit()
      }
    } finally {
      await producer.disconnect()
    }
    const group = uniqueName('eos-txn')
    const sidecar = exactlyOnceSidecar(t, source, target, group, topic)
    await waitMirroring(sidecar)
    await waitCaughtUp(source, group, topic)
    const copied = await readCommitted(target, topic)
    assert.equal(copied.filter(line => line.includes('|aborted-')).length, 0, 'nothing aborted is copied')
    const result = await settledAudit(source, target, topic)
    assert.equal(result.sourceRecords, 8 * 40)
    assert.deepEqual([result.missing, result.duplicates, result.orderKept], [0, 0, true])
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  'exactly-once against a target that cannot run transactions (transaction.state.log.replication.factor above its brokers): one line naming the setting, exit 2, nothing copied',
  { timeout: 120_000 },
  async t => {
    const { source } = await sharedClusters()
    const target = await startExtraCluster(t, 'eos-no-txn', { 'transaction.state.log.replication.factor': '3' })
    const topic = await createTopic(t, source, { name: uniqueName('eos-no-txn') })
    const sidecar = exactlyOnceSidecar(t, source, target, uniqueName('eos-no-txn'), topic)
    assert.equal(await sidecar.exited, 2, sidecar.stderr())
    assert.match(
      sidecar.stderr(),
      /--exactly\.once: the target cluster cannot run transactions: its transaction\.state\.log\.replication\.factor is 3 but it has 1 broker\(s\)/
    )
    assert.doesNotMatch(sidecar.stderr(), /\n\s+at /, 'no stack trace')
  }
)
